/**
 * The limits of a `kimi-service` command, in one place. A CLI wait is not an agent tool call: a
 * script may wait for a whole load in one command (src/agent/limits.ts has the tools'). Pure.
 */

/** `wait --timeout` (and `restart --wait`) without a value, in seconds. */
export const CLI_WAIT_DEFAULT_SECONDS = 90;
/** The longest `--timeout` accepted, in seconds. */
export const CLI_WAIT_MAX_SECONDS = 3600;
/** `logs -n` without a value. */
export const CLI_LOG_LINES_DEFAULT = 50;
/** The most lines `logs -n` returns. */
export const CLI_LOG_LINES_MAX = 1000;
/** How long `status` looks at a server that nothing watches before it reports what it has. */
export const CLI_STATUS_OBSERVE_MS = 20_000;
/** How long `restart` waits for the host to have the restart before it says it could not tell. */
export const CLI_RESTART_ISSUE_MS = 60_000;
