/**
 * A streamed chat completion (SSE) folded into the non-streaming shape, and judged by the same
 * judges as a plain answer.
 */
import {
  isRecord,
  reasoningOf,
  result,
  text,
  type ChatCompletion,
  type ChatMessage,
  type Judgement,
  type ToolCall,
} from './judges';
import type { Fact } from '../present/words/verifyFindings';

interface StreamToolDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

/**
 * Folds an SSE body of a streamed chat completion into the non-streaming shape. Accepts chunks
 * that carry `reasoning_content: null` everywhere and chunks that omit null keys.
 */
export function assembleStream(sseText: string): ChatCompletion & { done: boolean; chunks: number; error?: Fact } {
  let content = '';
  let reasoning = '';
  let sawContent = false;
  let role: string | undefined;
  let finish: string | null = null;
  let model: string | undefined;
  let done = false;
  let chunks = 0;
  let error: Fact | undefined;
  const tools = new Map<number, ToolCall>();
  for (const event of sseText.replace(/\r\n?/g, '\n').split(/\n\n+/)) {
    const data = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') continue;
    if (data.trim() === '[DONE]') {
      done = true;
      continue;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      error ??= { kind: 'sseUnparsable', data: data.slice(0, 100) };
      continue;
    }
    if (!isRecord(chunk)) continue;
    if (chunk.object === 'error' || isRecord(chunk.error)) {
      const e = isRecord(chunk.error) ? chunk.error : chunk;
      error ??= { kind: 'errorBody', code: text(e.code ?? ''), message: text(e.message ?? '') };
      continue;
    }
    chunks++;
    if (typeof chunk.model === 'string') model = chunk.model;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isRecord(choice)) continue;
    if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    if (typeof delta.role === 'string') role = delta.role;
    if (typeof delta.content === 'string') {
      content += delta.content;
      sawContent = true;
    }
    const reasoningPiece = reasoningOf(delta);
    if (reasoningPiece !== null) reasoning += reasoningPiece;
    if (Array.isArray(delta.tool_calls)) {
      for (const raw of (delta.tool_calls as unknown[]).filter(isRecord) as StreamToolDelta[]) {
        const index = typeof raw.index === 'number' ? raw.index : 0;
        const t = tools.get(index) ?? { index, function: {} };
        if (typeof raw.id === 'string' && raw.id) t.id = raw.id;
        if (typeof raw.type === 'string' && raw.type) t.type = raw.type;
        if (typeof raw.function?.name === 'string' && raw.function.name && !t.function.name)
          t.function.name = raw.function.name;
        if (typeof raw.function?.arguments === 'string')
          t.function.arguments = (t.function.arguments ?? '') + raw.function.arguments;
        tools.set(index, t);
      }
    }
  }
  const toolCalls = [...tools.values()].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const message: ChatMessage = {
    role,
    content: sawContent || toolCalls.length > 0 || reasoning !== '' ? content : null,
    reasoning_content: reasoning === '' ? null : reasoning,
    tool_calls: toolCalls.length > 0 ? toolCalls : null,
  };
  const base = { done, chunks, ...(model !== undefined ? { model } : {}), ...(error !== undefined ? { error } : {}) };
  if (chunks === 0 && error !== undefined) return { ...base, choices: [] };
  return { ...base, choices: [{ index: 0, finish_reason: finish, message }] };
}

/** Judges a streamed body with a non-streaming judge; stream-level errors are failures. */
export function judgeStream(sseText: string, judge: (resp: unknown) => Judgement): Judgement {
  const assembled = assembleStream(sseText);
  if (assembled.error !== undefined && assembled.choices.length === 0) return result('fail', assembled.error);
  if (assembled.chunks === 0)
    return result('fail', assembled.error ?? { kind: 'noSseChunks', body: JSON.stringify(sseText.slice(0, 150)) });
  const j = judge(assembled);
  if (assembled.error === undefined && assembled.done) return j;
  const flaws: Fact = {
    kind: 'streamFlaws',
    ...(assembled.error !== undefined ? { error: assembled.error } : {}),
    noDone: !assembled.done,
  };
  return result(j.status, [...j.facts, flaws], j.fault);
}
