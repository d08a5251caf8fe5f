/**
 * The five agent tools, once: names, input schemas (zod: the MCP SDK validates with them, the
 * language-model tools parse with them, package.json's JSON Schema is generated from them),
 * descriptions written for a model, and what VS Code's tool list and MCP's tools/list show
 * besides. Correct for SGLang and vLLM, run as a systemd unit or a container. Pure.
 */
// zod/mini: the same schemas as zod's classic API, a fraction of the bundle (the extension ships it).
import * as z from 'zod/mini';

// zod/mini carries no messages: without its English locale an unknown key reads "Invalid input", not its name.
z.config(z.locales.en());
import {
  TOOL_LOG_LINES_DEFAULT,
  TOOL_LOG_LINES_MAX,
  TOOL_SERVER_NAME_MAX,
  TOOL_WAIT_DEFAULT_SECONDS,
  TOOL_WAIT_MAX_SECONDS,
} from './limits';

export const TOOL_NAMES = ['kimi_status', 'kimi_restart', 'kimi_wait', 'kimi_verify_parsers', 'kimi_logs'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const STATES_EXPLAINED =
  'States: "ready" = serving (the engine, SGLang or vLLM, said ready and answered a real completion). ' +
  '"loading NN%" = a (re)start is loading the weights, KV cache, CUDA graphs; it takes minutes (about 10 for a large model such as Kimi K2.6) and the port stays closed meanwhile: wait with kimi_wait. ' +
  '"warming up" = the port is open but the engine is warming up, or /health is up and a completion is not answered yet: wait. ' +
  '"stopping" / "restarting" = the old process is stopping / the new one is starting (systemd unit or container): a restart is under way, wait. ' +
  '"stalled" = no progress for a while although the process runs (look at kimi_logs). ' +
  '"failed" = the process exited, the unit failed or the container exited; lastError has the exit status and the last error lines: read kimi_logs, do not wait. ' +
  '"unhealthy" = a ready server stopped answering /health (3 failures in a row) while its process runs. ' +
  '"unreachable" = the SSH connection to the GPU host is down (says nothing about the model). ' +
  '"stopped" = the unit or container is not running. ' +
  '"not watched" = nothing follows this server right now; "last seen" tells the last known state: call kimi_wait to attach (it never restarts). ' +
  '"host key changed" / "host key refused" / "login refused" / "sudo refused" / "settings" = the connection or the configuration was refused: a person must fix it (the message says how); retrying does not help.';

const RESULT_SHAPE = 'The first part of the result is text, the second the same as JSON.';

/** A field's description, in the JSON Schema the tools/list and package.json show. */
function described<T extends z.ZodMiniType>(schema: T, description: string): T {
  z.globalRegistry.add(schema, { description });
  return schema;
}

const serverName = (empty: string) =>
  z.string().check(z.minLength(1, empty), z.maxLength(TOOL_SERVER_NAME_MAX, 'server is too long for a server name'));

const serverField = described(
  z.optional(serverName('server must be a server name (omit it for the default server)')),
  'Name of the server (an entry of the kimi servers configuration). Omit it for the default (active) server.',
);

export const statusInput = z.strictObject({
  server: described(
    z.optional(serverName('server must be a server name (omit it for every server)')),
    'Name of one server. Omit it to report every configured server.',
  ),
});

export const restartInput = z.strictObject({
  server: serverField,
  force: described(
    z.optional(z.boolean({ error: 'force must be true or false' })),
    'true: restart even when a load is already under way (that load is thrown away). Only when the user explicitly asks for it.',
  ),
});

/**
 * kimi_restart as the standalone MCP server takes it: `confirmed` carries the user's yes when the
 * client cannot be asked through MCP elicitation and kimiService.confirmRestart is on.
 */
export const mcpRestartInput = z.extend(restartInput, {
  confirmed: described(
    z.optional(z.boolean({ error: 'confirmed must be true or false' })),
    'true only after the user said yes to this restart in this conversation (the server asks the user itself when the client supports MCP elicitation; otherwise a restart is refused without it while kimiService.confirmRestart is on). Never set it on your own.',
  ),
});

/** A number field with a default: `checks` say in words what is wrong with a value. */
function numberField(
  field: { readonly notNumber: string; readonly fallback: number; readonly description: string },
  ...checks: z.core.$ZodCheck<number>[]
) {
  return described(
    z._default(z.number({ error: field.notNumber }).check(...checks), field.fallback),
    field.description,
  );
}

export const waitInput = z.strictObject({
  server: serverField,
  timeoutSeconds: numberField(
    {
      notNumber: 'timeoutSeconds must be a number of seconds',
      fallback: TOOL_WAIT_DEFAULT_SECONDS,
      description: `How long to wait at most, in seconds (default ${TOOL_WAIT_DEFAULT_SECONDS}, max ${TOOL_WAIT_MAX_SECONDS}). On timeout the load goes on: call kimi_wait again.`,
    },
    z.minimum(1, 'timeoutSeconds must be at least 1'),
    z.maximum(
      TOOL_WAIT_MAX_SECONDS,
      `timeoutSeconds must be at most ${TOOL_WAIT_MAX_SECONDS}: call kimi_wait again to wait longer`,
    ),
  ),
});

export const verifyInput = z.strictObject({ server: serverField });

export const logsInput = z.strictObject({
  server: serverField,
  lines: numberField(
    {
      notNumber: 'lines must be a number',
      fallback: TOOL_LOG_LINES_DEFAULT,
      description: `How many lines of the server's log and of Kimi Service's own log (default ${TOOL_LOG_LINES_DEFAULT}, max ${TOOL_LOG_LINES_MAX}).`,
    },
    z.int({ error: 'lines must be a whole number' }),
    z.minimum(1, 'lines must be at least 1'),
    z.maximum(TOOL_LOG_LINES_MAX, `lines must be at most ${TOOL_LOG_LINES_MAX}`),
  ),
});

export const INPUTS = {
  kimi_status: statusInput,
  kimi_restart: restartInput,
  kimi_wait: waitInput,
  kimi_verify_parsers: verifyInput,
  kimi_logs: logsInput,
} as const satisfies Record<ToolName, z.ZodMiniObject>;

export type ToolInput<N extends ToolName> = z.output<(typeof INPUTS)[N]>;

/** The inputs of the MCP server's tools: the same, but kimi_restart also takes `confirmed`. */
export const MCP_INPUTS = { ...INPUTS, kimi_restart: mcpRestartInput } as const satisfies Record<
  ToolName,
  z.ZodMiniObject
>;

export type McpToolInput<N extends ToolName> = z.output<(typeof MCP_INPUTS)[N]>;

export const DESCRIPTIONS: Record<ToolName, string> = {
  kimi_status:
    'Report the state of the Kimi model server(s) (SGLang or vLLM, run as a systemd unit or a container on a GPU host reached over SSH): one summary line per server, plus JSON ' +
    '(state, phase, progressPercent, etaSeconds, since, confirmedAt, lastError, parsers). ' +
    'Call it first, to know whether a server is usable, before kimi_restart, and whenever you need the current state without waiting. ' +
    'It never restarts anything. Where nothing follows a server yet it is attached to first (read only; a few seconds) or reported "not watched" (then call kimi_wait to attach). ' +
    STATES_EXPLAINED +
    ' ' +
    RESULT_SHAPE,
  kimi_restart:
    'Restart the Kimi model server on the GPU host (`systemctl restart` of its unit, or a restart of its container), and return once the host has the restart, without waiting for the load. ' +
    'The model is unavailable until it has loaded again (minutes; about 10 for Kimi K2.6): after this call kimi_wait, again after each timeout, until ready or failed. ' +
    'Call it only when the user asked for a restart, or the server is failed/stopped and a restart is the fix; never to speed up a load, never because a wait timed out. ' +
    'If a load is already under way (restarted moments ago by you, a person, a script or another client, or the unit is already starting), it does NOT restart: it attaches to that load and says so (action "attached"); then just call kimi_wait. ' +
    'force: true restarts even then (throwing that load away): only when the user explicitly asks. ' +
    'The user may be asked to confirm first (in VS Code, the setting kimiService.confirmRestart). ' +
    RESULT_SHAPE,
  kimi_wait:
    `Wait until the Kimi model server is ready, failed or stopped, at most timeoutSeconds (default ${TOOL_WAIT_DEFAULT_SECONDS}, max ${TOOL_WAIT_MAX_SECONDS}), and return its state with what to do next. ` +
    'It follows the load under way (or attaches to the server; it never restarts). Use it after kimi_restart, and instead of sleeping or polling with shell commands (curl, ssh, journalctl, docker logs). ' +
    'Over MCP it sends progress notifications (percent, summary line) at every state change and at least every 10 s. ' +
    'result "ready": usable now. "failed": the load died; the result has the exit status and the last error lines: do not wait again, read kimi_logs, fix the cause, then restart. ' +
    '"stopped": the unit or container is not running: restart it if the user wants it serving. ' +
    '"stalled": the load became stalled during the wait (the process lives, no witness moved for kimiService.stallSeconds); the result says what was last seen and since when: read kimi_logs, then restart if they show a hang, or call kimi_wait again to keep waiting. ' +
    '"timeout": still loading or warming up (normal for a large model): call kimi_wait AGAIN, do NOT restart (a restart starts the whole load over). ' +
    '"cancelled": the wait was cancelled, the load goes on. "not watched": the host cannot be reached or refused the connection (the message says why): tell the user. ' +
    STATES_EXPLAINED +
    ' ' +
    RESULT_SHAPE,
  kimi_verify_parsers:
    "Check through the SSH tunnel that an agent's turn works on the ready server (each plain and streamed): " +
    'the server\'s tool-call and reasoning parser flags (SGLang --tool-call-parser / --reasoning-parser, vLLM --tool-call-parser / --reasoning-parser with --enable-auto-tool-choice), reasoning separated, thinking off, a tool call, the turn after the tool\'s result (role "tool"), ' +
    'two calls in one answer, tool_choice "required" and a named tool, and the call ids (functions.NAME:IDX for kimi_k2). ' +
    'Call it after kimi_wait returned ready when the user relies on tool calling or thinking, or when answers look wrong (reasoning inside the content, tool calls as plain text, an agent stalling after a tool call). ' +
    'Needs a ready server (a server that is loading is refused: call kimi_wait first); takes a few seconds. Returns a one-line summary ("Parsers verified for agents (16 checks)"; "inconclusive" means answers were cut by max_tokens, not a parser failure) ' +
    'and the table of checks; under each failed one, what an agent suffers ("for agents:") and the request sent. ' +
    RESULT_SHAPE,
  kimi_logs:
    `The last lines (default ${TOOL_LOG_LINES_DEFAULT}, max ${TOOL_LOG_LINES_MAX}) of the server's log on the GPU host (the systemd journal of its unit, or the container's log; every node's for a multi-node server) and of Kimi Service's own log about it, secrets masked. ` +
    'Call it when a server is failed, stalled, unhealthy or stays warming up, or kimi_wait returned failed, to see the cause (traceback, CUDA out of memory, a bad flag, an unreachable host) before deciding what to do. ' +
    'When the log cannot be read it says why and how to fix it. ' +
    RESULT_SHAPE,
};

/** The descriptions MCP's tools/list shows: kimi_restart says how this server asks for confirmation. */
export const MCP_DESCRIPTIONS: Record<ToolName, string> = {
  ...DESCRIPTIONS,
  kimi_restart: DESCRIPTIONS.kimi_restart.replace(
    'The user may be asked to confirm first (in VS Code, the setting kimiService.confirmRestart). ',
    'With kimiService.confirmRestart on (the default), the user must confirm a restart: this server asks them through the client (MCP elicitation) when the client can; otherwise the call is refused until it carries confirmed: true, which you may pass only after asking the user and hearing yes. ' +
      'Following a load already under way needs no confirmation. ',
  ),
};

/** What VS Code's tool picker shows (contributes.languageModelTools besides name, description and schema). */
export interface LmToolFace {
  readonly displayName: string;
  readonly userDescription: string;
  readonly icon: string;
}

export const LM_FACES: Record<ToolName, LmToolFace> = {
  kimi_status: {
    displayName: 'Kimi: server status',
    userDescription: 'State, load progress, ETA, last error and parser check of the Kimi model servers.',
    icon: '$(server-process)',
  },
  kimi_restart: {
    displayName: 'Kimi: restart server',
    userDescription:
      'Restart the Kimi model server (its systemd unit or container), or follow the load already under way, after confirmation.',
    icon: '$(debug-restart)',
  },
  kimi_wait: {
    displayName: 'Kimi: wait until ready',
    userDescription:
      'Wait (at most timeoutSeconds) until the Kimi model server is ready or failed, and say what to do next.',
    icon: '$(watch)',
  },
  kimi_verify_parsers: {
    displayName: 'Kimi: verify tool calling and reasoning',
    userDescription: 'Check that reasoning and tool calling work on the running Kimi server.',
    icon: '$(checklist)',
  },
  kimi_logs: {
    displayName: 'Kimi: server logs',
    userDescription:
      "The last lines of the Kimi model server's log and of Kimi Service's own log about it (secrets masked).",
    icon: '$(output)',
  },
};

/** What MCP's tools/list shows besides name, description and schema. */
export interface McpToolFace {
  readonly title: string;
  readonly annotations: {
    readonly readOnlyHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly idempotentHint?: boolean;
    readonly openWorldHint: boolean;
  };
}

const READ_ONLY = { readOnlyHint: true, openWorldHint: true } as const;

export const MCP_FACES: Record<ToolName, McpToolFace> = {
  kimi_status: { title: 'Kimi: status', annotations: READ_ONLY },
  kimi_restart: {
    title: 'Kimi: restart',
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  kimi_wait: { title: 'Kimi: wait until ready', annotations: READ_ONLY },
  kimi_verify_parsers: { title: 'Kimi: verify tool calling and thinking parsers', annotations: READ_ONLY },
  kimi_logs: { title: 'Kimi: logs', annotations: READ_ONLY },
};

/** The instructions an MCP client gives its model with the tools. */
export const MCP_INSTRUCTIONS =
  'Tools for the Kimi model server (SGLang or vLLM, as a systemd unit or a container on a GPU host). kimi_status tells the state of each server. ' +
  `To restart: kimi_restart once, then kimi_wait repeatedly (each call waits at most ${TOOL_WAIT_MAX_SECONDS} s) until ready or failed. ` +
  'Never restart because kimi_wait timed out: the load goes on, call kimi_wait again. On failed, read kimi_logs before anything else.';

/** A tool input checked against its schema (the language-model tools: invokeTool does not always validate). */
export function parseToolInput<N extends ToolName>(
  name: N,
  input: unknown,
): { readonly ok: true; readonly input: ToolInput<N> } | { readonly ok: false; readonly error: string } {
  const parsed = z.safeParse(INPUTS[name], input ?? {});
  if (parsed.success) return { ok: true, input: parsed.data as ToolInput<N> };
  return { ok: false, error: `Invalid input for ${name}: ${parsed.error.issues.map((i) => i.message).join('; ')}.` };
}
