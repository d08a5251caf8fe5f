/**
 * The limits of a `kimi-service` command, in one place. A CLI wait is not an agent tool call: a
 * script may wait for a whole load in one command (src/agent/limits.ts has the tools'). Pure.
 */
export const CLI_LIMITS = {
  /** `wait --timeout` (and `restart --wait`) without a value, in seconds. */
  waitDefaultSeconds: 90,
  /** The longest `--timeout` accepted, in seconds. */
  waitMaxSeconds: 3600,
  /** `logs -n` without a value, and the most lines it returns. */
  logLinesDefault: 50,
  logLinesMax: 1000,
  /** How long `status` looks at a server that nothing watches before it reports what it has. */
  statusObserveMs: 20_000,
  /** How long `restart` waits for the host to have the restart before it says it could not tell. */
  restartIssueMs: 60_000,
} as const;
