/**
 * The max_tokens budgets of the checks, chosen from the server's context length (docs/verification.md
 * gives the arithmetic): a first budget that a correct answer fits, and a bigger one to retry an
 * answer that the first cut (finish_reason "length": the reasoning used it all, which says nothing
 * about the parsers).
 */

/** Most answers of a thinking model to the checks' prompts take 100 to 600 tokens. */
export const FIRST_BUDGET = 2048;
/** 41 s at 200 token/s: the longest a retry may take. */
export const RETRY_BUDGET = 8192;
/** thinking off: a short answer, and reasoning shows in the first tokens anyway. */
export const THINKING_OFF_BUDGET = 256;
/** Room left for the prompt (the checks' prompts and tool definitions are under 600 tokens). */
export const PROMPT_ROOM = 1024;

export interface Budgets {
  readonly first: number;
  /** undefined when the context leaves no room for a bigger budget. */
  readonly retry: number | undefined;
  readonly thinkingOff: number;
  /** The context length they were chosen from, and where it was read (undefined: nowhere). */
  readonly contextLength: number | undefined;
  readonly source: string | undefined;
}

export function chooseBudgets(contextLength: number | undefined, source: string | undefined): Budgets {
  const usable =
    contextLength === undefined
      ? undefined
      : contextLength > PROMPT_ROOM
        ? contextLength - PROMPT_ROOM
        : Math.floor(contextLength / 2);
  const first = usable === undefined ? FIRST_BUDGET : Math.max(1, Math.min(FIRST_BUDGET, Math.floor(usable / 2)));
  const retryMax = usable === undefined ? RETRY_BUDGET : Math.min(RETRY_BUDGET, usable);
  return {
    first,
    retry: retryMax > first ? retryMax : undefined,
    thinkingOff: Math.min(THINKING_OFF_BUDGET, first),
    contextLength,
    source,
  };
}

/** A positive integer context length from /server_info (context_length) or /v1/models (max_model_len). */
export function contextLengthOf(body: unknown, key: 'context_length' | 'max_model_len'): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const direct = record[key];
  const data = Array.isArray(record.data) ? (record.data[0] as Record<string, unknown> | undefined) : undefined;
  const value = direct ?? data?.[key];
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
