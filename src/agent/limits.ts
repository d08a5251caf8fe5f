/**
 * The limits of an agent tool call (kimi_wait, kimi_logs, kimi_status...), the same for the
 * language-model tools and the MCP server. A CLI `wait` is another meaning (a script may wait an
 * hour): its limits are the CLI's own (fronts/cli/args.ts). Pure.
 */

/** kimi_wait without timeoutSeconds. */
export const TOOL_WAIT_DEFAULT_SECONDS = 90;
/** The longest one kimi_wait call may wait: a model calls again (a client's tool timeout is often a few minutes). */
export const TOOL_WAIT_MAX_SECONDS = 300;
/** kimi_logs without lines. */
export const TOOL_LOG_LINES_DEFAULT = 50;
/** The most lines one kimi_logs call returns. */
export const TOOL_LOG_LINES_MAX = 1000;
/** How long kimi_status / kimi_restart wait for the host's first answer (the watch started, the restart confirmed). */
export const TOOL_FIRST_ANSWER_MS = 15_000;
/** The restart confirmation's forecast gets this long (VS Code flags a prepare step over ~3 s as unresponsive). */
export const TOOL_FORECAST_MS = 2000;
/** kimi_status / kimi_wait error lines of a failed load, at most. */
export const TOOL_ERROR_LINES_STATUS = 6;
export const TOOL_ERROR_LINES_WAIT = 12;
/** A server name in a tool input, at most this long. */
export const TOOL_SERVER_NAME_MAX = 200;
