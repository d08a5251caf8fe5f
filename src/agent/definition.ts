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

/**
 * The states, said once (in kimi_status: a model reads every tool's description with each request,
 * so a paragraph repeated in two tools is paid twice).
 */
export const STATES_EXPLAINED =
  'States: "ready" = serving. "loading NN%", "warming up", "stopping", "restarting", "queued" = a (re)start under way (minutes): kimi_wait. ' +
  '"stalled" = no progress: kimi_logs. "failed" = exited (lastError): kimi_logs, do not wait. ' +
  '"unhealthy" = a ready server stopped answering /health. "unreachable" = SSH down. "stopped" = not running. ' +
  '"not watched" = not followed now: kimi_wait watches it. ' +
  '"host key changed", "host key refused", "login refused", "sudo refused", "settings" = a person must fix it.';

/** Every tool's result, said once (in kimi_status). */
const RESULT_SHAPE = 'Every kimi_ tool answers in text, then the same as JSON.';

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

/** The sentence of kimi_restart that MCP's tools/list replaces with how the MCP server asks. */
const CONFIRM_LM = 'The user may be asked to confirm first.';

export const DESCRIPTIONS: Record<ToolName, string> = {
  kimi_status:
    'State of the Kimi model servers (SGLang or vLLM, run as a systemd unit or a container on a GPU host over SSH): state, progressPercent, etaSeconds, lastError, parsers. ' +
    'Call it first; it never restarts. ' +
    RESULT_SHAPE +
    ' ' +
    STATES_EXPLAINED,
  kimi_restart:
    'Restart the Kimi model server (`systemctl restart` of its unit, or a restart of its container); returns before the load: then kimi_wait until ready or failed. ' +
    'Only when the user asks, or when failed/stopped needs it; never to speed up a load or after a wait timeout. ' +
    'If a load is already under way it watches that load instead and says so (action "attached"). ' +
    "force: true restarts anyway, only on the user's explicit request. " +
    CONFIRM_LM,
  kimi_wait:
    `Wait until the Kimi model server is ready, failed or stopped, at most timeoutSeconds (default ${TOOL_WAIT_DEFAULT_SECONDS}, max ${TOOL_WAIT_MAX_SECONDS}); never restarts. ` +
    'Use it after kimi_restart instead of polling. Results: "ready" = usable. "failed" = read kimi_logs, fix, then restart. ' +
    '"stopped" = restart only if the user wants it. "stalled" = read kimi_logs; restart only on a hang, or call kimi_wait again. ' +
    '"timeout" = still loading: call kimi_wait AGAIN, do NOT restart (that starts the load over). ' +
    '"not watched" = host unreachable or refused: tell the user.',
  kimi_verify_parsers:
    "Check that an agent's turn works on the ready server, plain and streamed: parser flags, reasoning kept apart, thinking off, tool calls (one, two at once, forced, after a result), call ids. " +
    'Call it once ready when the user relies on tools or thinking, or answers look wrong (reasoning in the content, tool calls as text). ' +
    'Returns a summary ("inconclusive" = answers cut by max_tokens) and what each failed check does to agents.',
  kimi_logs:
    `The last lines (default ${TOOL_LOG_LINES_DEFAULT}, max ${TOOL_LOG_LINES_MAX}) of the server's log (the systemd journal of its unit, or the container's log; every node's for multi-node) and of Kimi Service's log about it, secrets masked. ` +
    'Call it when a server is failed, stalled or unhealthy, to see the cause (traceback, CUDA out of memory, a bad flag) before acting.',
};

/** The descriptions MCP's tools/list shows: kimi_restart says how this server asks for confirmation. */
export const MCP_DESCRIPTIONS: Record<ToolName, string> = {
  ...DESCRIPTIONS,
  kimi_restart: DESCRIPTIONS.kimi_restart.replace(
    CONFIRM_LM,
    'With kimiService.confirmRestart on (the default) the user must confirm: asked through the client (MCP elicitation) when it can; else pass confirmed: true, which you may pass only after asking the user and hearing yes.',
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
