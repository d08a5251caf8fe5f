/**
 * The MCP tools' names, descriptions (written for a model) and input schemas (zod, validated by
 * the SDK before anything runs). The same names and meanings as the extension's language-model
 * tools. Pure.
 */
import { z } from 'zod';

export const WAIT_DEFAULT_SECONDS = 90;
export const WAIT_MAX_SECONDS = 300;
export const LOGS_DEFAULT_LINES = 50;
export const LOGS_MAX_LINES = 1000;

export const STATES_EXPLAINED =
  'States: "ready" = serving (SGLang said ready and answered a real completion). ' +
  '"loading NN%" = a (re)start is loading the weights, KV cache, CUDA graphs; it takes minutes (about 10 for Kimi K2.6): wait with kimi_wait. ' +
  '"warming up" = the port is open but SGLang is warming up, or /health is up and a completion is not answered yet: wait. ' +
  '"stopping" / "restarting" = systemd is stopping the old process / starting the new one: a restart is under way, wait. ' +
  '"stalled" = no progress for a while although the process runs (look at kimi_logs). ' +
  '"failed" = the process exited or the unit failed; lastError has the exit status and the last error lines: read kimi_logs, do not wait. ' +
  '"unhealthy" = a ready server stopped answering /health (3 failures in a row) while its process runs. ' +
  '"unreachable" = the SSH connection to the GPU host is down (says nothing about the model). ' +
  '"stopped" = the unit is not running. ' +
  '"not watched" = nothing follows this server right now; "last seen" tells the last known state. ' +
  '"host key changed" / "host key refused" / "login refused" / "sudo refused" / "settings" = the connection or the configuration was refused: a person must fix it (the message says how); retrying does not help.';

const serverField = z
  .string()
  .min(1, 'server must be a server name (omit it for the default server)')
  .max(200, 'server is too long for a server name')
  .optional()
  .describe(
    'Name of the server (an entry of the kimi servers configuration). Omit it for the default (active) server.',
  );

export const statusInput = z.strictObject({
  server: z
    .string()
    .min(1, 'server must be a server name (omit it for every server)')
    .max(200, 'server is too long for a server name')
    .optional()
    .describe('Name of one server. Omit it to report every configured server.'),
});

export const restartInput = z.strictObject({
  server: serverField,
  force: z
    .boolean({ error: 'force must be true or false' })
    .optional()
    .describe(
      'true: restart even when a load is already under way (that load is thrown away). Only when the user explicitly asks for it.',
    ),
});

export const waitInput = z.strictObject({
  server: serverField,
  timeoutSeconds: z
    .number({ error: 'timeoutSeconds must be a number of seconds' })
    .min(1, 'timeoutSeconds must be at least 1')
    .max(WAIT_MAX_SECONDS, `timeoutSeconds must be at most ${WAIT_MAX_SECONDS}: call kimi_wait again to wait longer`)
    .default(WAIT_DEFAULT_SECONDS)
    .describe(
      `How long to wait at most, in seconds (default ${WAIT_DEFAULT_SECONDS}, max ${WAIT_MAX_SECONDS}). On timeout the load goes on: call kimi_wait again.`,
    ),
});

export const verifyInput = z.strictObject({ server: serverField });

export const logsInput = z.strictObject({
  server: serverField,
  lines: z
    .number({ error: 'lines must be a number' })
    .int('lines must be a whole number')
    .min(1, 'lines must be at least 1')
    .max(LOGS_MAX_LINES, `lines must be at most ${LOGS_MAX_LINES}`)
    .default(LOGS_DEFAULT_LINES)
    .describe(`How many lines of the journal and of the log (default ${LOGS_DEFAULT_LINES}, max ${LOGS_MAX_LINES}).`),
});

export const DESCRIPTIONS = {
  kimi_status:
    'Report the state of the Kimi model server(s) (SGLang, run as a systemd unit on a GPU host reached over SSH): one summary line per server, plus JSON ' +
    '(state, phase, progressPercent, etaSeconds, since, confirmedAt, lastError, parsers). ' +
    'Call it first, to know whether a server is usable, and whenever you need the current state without waiting. ' +
    'A server nothing follows yet is attached to first (read only, never restarted; a few seconds). ' +
    STATES_EXPLAINED,
  kimi_restart:
    'Restart the Kimi model server: `systemctl restart` of its unit on the GPU host, then return at once. The load takes minutes (about 10 for Kimi K2.6): ' +
    'after this call kimi_wait, again after each timeout, until ready or failed. ' +
    'Call it only when the user asked for a restart, or the server is failed/stopped and a restart is the fix; never to speed up a load, never because a wait timed out. ' +
    'If a load is already under way (restarted moments ago by you, a person or another client, or the unit is already starting), it does NOT restart: it attaches to that load and says so (action "attached"); then just call kimi_wait. ' +
    'force: true restarts even then (throwing that load away): only when the user explicitly asks.',
  kimi_wait:
    `Wait until the Kimi model server is ready or failed, at most timeoutSeconds (default ${WAIT_DEFAULT_SECONDS}, max ${WAIT_MAX_SECONDS}), and return its state with what to do next. ` +
    'It follows the load under way (or attaches to the server; it never restarts) and sends progress notifications (percent, summary line) at every state change and at least every 10 s. ' +
    'result "ready": usable now. "failed": the load died; the result has the exit status and the last error lines: do not wait again, read kimi_logs, fix the cause, then restart. ' +
    '"stopped": the unit is not running: restart it if the user wants it serving. ' +
    '"stalled": the load became stalled during the wait (the process lives, no witness moved for kimi.stallSeconds); the result says what was last seen and since when: read kimi_logs, then restart if they show a hang, or call kimi_wait again to keep waiting. ' +
    '"timeout": still loading or warming up: call kimi_wait AGAIN, do NOT restart (a restart starts the whole load over). ' +
    '"cancelled": the wait was cancelled, the load goes on. "not watched": the host cannot be reached or refused the connection (the message says why). ' +
    STATES_EXPLAINED,
  kimi_verify_parsers:
    "Check through the SSH tunnel that an agent's turn works on the ready server (each plain and streamed): " +
    'the server\'s --tool-call-parser / --reasoning-parser flags, reasoning separated, thinking off, a tool call, the turn after the tool\'s result (role "tool"), ' +
    'two calls in one answer, tool_choice "required" and a named tool, and the call ids (functions.NAME:IDX for kimi_k2). ' +
    'Call it after kimi_wait returned ready when the user relies on tool calling or thinking, or when answers look wrong (reasoning inside the content, tool calls as plain text, an agent stalling after a tool call). ' +
    'Needs a ready server; takes a few seconds. Returns a one-line summary ("Parsers verified for agents (15 checks)"; "inconclusive" means answers were cut by max_tokens, not a parser failure) ' +
    'and the table of checks; under each failed one, what an agent suffers ("for agents:") and the request sent.',
  kimi_logs:
    `The last lines (default ${LOGS_DEFAULT_LINES}, max ${LOGS_MAX_LINES}) of the server's systemd journal (read on the GPU host) and of this MCP server's own log about it, secrets masked. ` +
    'Call it when a server is failed, stalled, unhealthy or stays warming up, to see the cause (traceback, CUDA out of memory, a bad flag, an unreachable host) before deciding what to do.',
} as const;

export type ToolName = keyof typeof DESCRIPTIONS;
