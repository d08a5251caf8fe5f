/**
 * Which servers the chat model offers, and with what (pure: the provider feeds it what the fleet
 * and the server said). The offer follows the whole parser verification, as the chat model uses
 * the server (streamed): a server is offered while it is `ready` and its reasoning is separated
 * from the answer (or the known leak before </think> is repaired on the way); tool calling only
 * when a call, the turn after its result, the reasoning carried back and the ids all worked;
 * parallel calls only when their check passed. The detail and tooltip say what is withheld or
 * repaired, and why.
 */
import { ENGINES, engineById } from '../../../engine/engine';

export interface CheckOutcome {
  readonly name: string;
  readonly status: 'pass' | 'fail' | 'skipped' | string;
  /** A fault the chat model repairs ('reasoningInContent'), when the judge recognised one. */
  readonly fault?: string;
}

/** Where content is read for reasoning leaked before </think>: never, after a tool result, always. */
export type ReasoningRepair = 'none' | 'afterToolResult' | 'always';

export interface Capabilities {
  readonly toolCalling: boolean;
  readonly parallelToolCalls: boolean;
  readonly repair: ReasoningRepair;
  /** What is withheld or repaired, and why, one sentence each. */
  readonly notes: readonly string[];
}

export type Offer = ({ readonly offered: true } & Capabilities) | { readonly offered: false; readonly why: string };

/** The checks tool calling needs end to end (the chat model streams, and agents loop through results). */
const TOOL_CHECKS = [
  'tool calling (stream)',
  'tool round trip (stream)',
  'reasoning carried through tool calls',
  'tool-call ids',
] as const;

function outcomeText(c: CheckOutcome | undefined, name: string): string {
  return `${name} ${c ? (c.status === 'fail' ? 'failed' : c.status) : 'not run'}`;
}

/** Whether a server in `verdict` with these parser checks is offered as a chat model, and with what. */
export function offerFor(verdict: string | undefined, checks: readonly CheckOutcome[] | undefined): Offer {
  if (verdict !== 'ready') return { offered: false, why: `the server is ${verdict ?? 'not watched'}` };
  if (!checks) return { offered: false, why: 'its parsers are not verified yet' };
  const find = (name: string) => checks.find((c) => c.name === name);
  const passed = (name: string) => find(name)?.status === 'pass';
  const repairable = (name: string) => {
    const c = find(name);
    return c?.status === 'fail' && c.fault === 'reasoningInContent';
  };
  const notes: string[] = [];
  let repair: ReasoningRepair = 'none';
  if (!passed('reasoning (stream)')) {
    if (!repairable('reasoning (stream)'))
      return {
        offered: false,
        why: 'the parser check did not show reasoning separated from the answer (reasoning (stream))',
      };
    repair = 'always';
    notes.push(
      'Reasoning repaired: the server leaves it in the answer before </think> (reasoning (stream) failed); the chat model moves it back out of the answer.',
    );
  }
  const broken = TOOL_CHECKS.find((name) => !passed(name) && !repairable(name));
  const toolCalling = broken === undefined;
  if (!toolCalling) {
    notes.push(`Tool calling withheld: ${outcomeText(find(broken), broken)} in the parser check.`);
  } else if (TOOL_CHECKS.some(repairable)) {
    if (repair === 'none') repair = 'afterToolResult';
    notes.push(
      `Tool calling repaired: after a tool result the server leaves the reasoning in the answer before </think> (${TOOL_CHECKS.filter(repairable).join(', ')} failed); the chat model moves it back.`,
    );
  }
  const parallelToolCalls = toolCalling && passed('parallel tool calls (stream)');
  if (toolCalling && !parallelToolCalls)
    notes.push(
      `Parallel tool calls withheld: ${outcomeText(find('parallel tool calls (stream)'), 'parallel tool calls (stream)')}; only the first call of an answer is passed on.`,
    );
  return { offered: true, toolCalling, parallelToolCalls, repair, notes };
}

export interface ServedModel {
  readonly id: string;
  readonly maxModelLen?: number;
  /** `owned_by`: "sglang", "vllm". */
  readonly ownedBy?: string;
}

/** GET /v1/models: each model's id and, where the server says it (SGLang, vLLM), max_model_len. */
export function parseModels(body: unknown): ServedModel[] {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((m) => {
    const id = (m as { id?: unknown }).id;
    const len = (m as { max_model_len?: unknown }).max_model_len;
    const owner = (m as { owned_by?: unknown }).owned_by;
    if (typeof id !== 'string' || id === '') return [];
    return [
      {
        id,
        ...(typeof len === 'number' && len > 0 ? { maxModelLen: len } : {}),
        ...(typeof owner === 'string' && owner ? { ownedBy: owner } : {}),
      },
    ];
  });
}

/** The context length: /v1/models' max_model_len, else /server_info's context_length (or max_req_input_len). */
export function contextLength(model: ServedModel | undefined, serverInfo: unknown): number | undefined {
  if (model?.maxModelLen) return model.maxModelLen;
  const info = (serverInfo ?? {}) as { context_length?: unknown; max_req_input_len?: unknown };
  for (const v of [info.context_length, info.max_req_input_len]) if (typeof v === 'number' && v > 0) return v;
  return undefined;
}

/** Used when the server says no context length (it always does in SGLang and vLLM). */
export const FALLBACK_CONTEXT = 32_768;

export interface Limits {
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
}

/**
 * The prompt and the answer share the context: the answer gets at most `maxOutput` (the setting
 * kimiService.chatModel.maxOutputTokens) and never more than a quarter of the context; the prompt the rest.
 */
export function limits(context: number, maxOutput: number): Limits {
  const out = Math.max(1, Math.min(maxOutput, Math.floor(context / 4)));
  return { maxInputTokens: Math.max(1, context - out), maxOutputTokens: out };
}

/** "moonshotai/Kimi-K2.6" -> "Kimi K2.6". */
export function displayModelName(id: string): string {
  const last = id.split('/').filter(Boolean).pop() ?? id;
  return last.replace(/[-_]+/g, ' ').trim() || id;
}

export interface ChatModelDescription {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly version: string;
  readonly detail: string;
  readonly tooltip: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly toolCalling: boolean;
}

/** The picker's short line: the engine, then what is withheld or repaired. */
function detailOf(engine: string, c: Capabilities): string {
  const marks = [
    !c.toolCalling ? 'no tools' : !c.parallelToolCalls ? 'one tool call at a time' : undefined,
    c.repair !== 'none' ? 'reasoning repaired' : undefined,
  ].filter((x): x is string => x !== undefined);
  return `${engine} via SSH${marks.length ? ` · ${marks.join(', ')}` : ''}`;
}

export function describeChatModel(input: {
  readonly serverName: string;
  readonly modelId: string;
  readonly context: number | undefined;
  readonly maxOutput: number;
  readonly capabilities: Capabilities;
  readonly engine: string;
}): ChatModelDescription {
  const context = input.context ?? FALLBACK_CONTEXT;
  const { maxInputTokens, maxOutputTokens } = limits(context, input.maxOutput);
  const name = `${displayModelName(input.modelId)} on ${input.serverName}`;
  const c = input.capabilities;
  const verified = c.toolCalling
    ? `tool calling verified end to end${c.parallelToolCalls ? ', parallel calls too' : ''}`
    : 'tool calling not offered';
  return {
    // VS Code names a model by vendor and id ("kimi-service/gpu1"): the id is the server's name.
    id: input.serverName,
    name,
    family: input.modelId.split('/').pop()!.toLowerCase(),
    version: input.modelId,
    detail: detailOf(input.engine, c),
    tooltip:
      `${input.modelId} served by ${input.engine} on ${input.serverName}, reached over the extension's verified SSH connection. ` +
      `Context ${context} tokens${input.context === undefined ? ' (assumed: the server did not say)' : ''}; ${verified}.` +
      (c.notes.length ? ` ${c.notes.join(' ')}` : ''),
    maxInputTokens,
    maxOutputTokens,
    toolCalling: c.toolCalling,
  };
}

/** The engine named in the picker: from /v1/models' owned_by, else SGLang when /server_info answered. */
export function engineName(ownedBy: string | undefined, serverInfoAnswered: boolean): string {
  const named = ENGINES.find((engine) => engine.id === ownedBy);
  if (named) return named.label;
  return serverInfoAnswered ? engineById('sglang').label : 'an OpenAI-compatible server';
}

/** The model id is the server's name (VS Code adds the vendor); ids of older versions had the vendor in them too. */
export function serverNameOf(modelId: string): string {
  return modelId.replace(/^kimi-service\//, '');
}
