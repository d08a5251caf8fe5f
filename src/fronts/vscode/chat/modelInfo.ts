/**
 * Which servers the chat model offers, and with what limits (pure: the provider feeds it what the
 * fleet and the server said). A server is offered while it is `ready` and its last parser check
 * showed reasoning separated from the answer; tool calling is advertised only when the streamed
 * tool-call check passed (the provider always streams).
 */

export interface CheckOutcome {
  readonly name: string;
  readonly status: 'pass' | 'fail' | 'skipped' | string;
}

export type Offer =
  | { readonly offered: true; readonly toolCalling: boolean }
  | { readonly offered: false; readonly why: string };

/** Whether a server in `verdict` with these parser checks is offered as a chat model. */
export function offerFor(verdict: string | undefined, checks: readonly CheckOutcome[] | undefined): Offer {
  if (verdict !== 'ready') return { offered: false, why: `the server is ${verdict ?? 'not watched'}` };
  if (!checks) return { offered: false, why: 'its parsers are not verified yet' };
  const passed = (name: string) => checks.some((c) => c.name === name && c.status === 'pass');
  if (!passed('reasoning (stream)')) {
    return {
      offered: false,
      why: 'the parser check did not show reasoning separated from the answer (reasoning (stream))',
    };
  }
  return { offered: true, toolCalling: passed('tool calling (stream)') };
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

export function describeChatModel(input: {
  readonly serverName: string;
  readonly modelId: string;
  readonly context: number | undefined;
  readonly maxOutput: number;
  readonly toolCalling: boolean;
  readonly engine: string;
}): ChatModelDescription {
  const context = input.context ?? FALLBACK_CONTEXT;
  const { maxInputTokens, maxOutputTokens } = limits(context, input.maxOutput);
  const name = `${displayModelName(input.modelId)} on ${input.serverName}`;
  return {
    id: `kimi-service/${input.serverName}`,
    name,
    family: input.modelId.split('/').pop()!.toLowerCase(),
    version: input.modelId,
    detail: `${input.engine} via SSH`,
    tooltip:
      `${input.modelId} served by ${input.engine} on ${input.serverName}, reached over the extension's verified SSH connection. ` +
      `Context ${context} tokens${input.context === undefined ? ' (assumed: the server did not say)' : ''}; ` +
      `tool calling ${input.toolCalling ? 'verified' : 'not verified, so not offered'}.`,
    maxInputTokens,
    maxOutputTokens,
    toolCalling: input.toolCalling,
  };
}

/** The token count a server's /tokenize answered ({count} in vLLM and SGLang, else the tokens' number). */
export function parseTokenCount(body: unknown): number | undefined {
  const b = (body ?? {}) as { count?: unknown; tokens?: unknown; input_ids?: unknown };
  if (typeof b.count === 'number' && b.count >= 0) return b.count;
  for (const list of [b.tokens, b.input_ids]) if (Array.isArray(list)) return list.length;
  return undefined;
}

/** The stated estimate where the server has no tokenizer route: 4 characters a token, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
