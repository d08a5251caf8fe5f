/**
 * The chat model's translation, without VS Code: the editor's messages (in a neutral shape) to an
 * OpenAI chat-completions request as SGLang and vLLM take it, and the server's server-sent events
 * back to text, tool calls and reasoning. Tool calls come parsed by the server's own tool-call
 * parser (`--tool-call-parser`): here they are only reassembled from their streamed pieces.
 */
import { contentParts, toolImagesMessage, type NeutralImage, type OpenAiContentPart } from './imageParts';

export type NeutralPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'toolCall'; readonly callId: string; readonly name: string; readonly input: unknown }
  | {
      readonly kind: 'toolResult';
      readonly callId: string;
      readonly text: string;
      readonly images?: readonly NeutralImage[];
    }
  | NeutralImage;

export interface NeutralMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly parts: readonly NeutralPart[];
}

export interface NeutralTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema?: object | undefined;
}

export interface OpenAiToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export type OpenAiMessage =
  | { readonly role: 'system' | 'user'; readonly content: string | readonly OpenAiContentPart[] }
  | {
      readonly role: 'assistant';
      readonly content: string;
      readonly tool_calls?: readonly OpenAiToolCall[];
      /** The model's reasoning for these calls, sent back (./toolChainReasoning). */
      readonly reasoning_content?: string;
      /** The same, under vLLM's newer name (vLLM since 0.11.1 reads only this one). */
      readonly reasoning?: string;
    }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

/**
 * OpenAI's order: a tool result is a `tool` message right after the assistant message that asked
 * for it, so the results a user message carries go first, then its text (if any).
 */
export function toOpenAiMessages(messages: readonly NeutralMessage[]): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  for (const message of messages) {
    const text = message.parts
      .filter((p): p is Extract<NeutralPart, { kind: 'text' }> => p.kind === 'text')
      .map((p) => p.text)
      .join('');
    if (message.role === 'assistant') {
      const calls: OpenAiToolCall[] = message.parts
        .filter((p): p is Extract<NeutralPart, { kind: 'toolCall' }> => p.kind === 'toolCall')
        .map((p) => ({
          id: p.callId,
          type: 'function',
          function: { name: p.name, arguments: JSON.stringify(p.input ?? {}) },
        }));
      if (text === '' && calls.length === 0) continue;
      out.push(
        calls.length > 0
          ? { role: 'assistant', content: text, tool_calls: calls }
          : { role: 'assistant', content: text },
      );
      continue;
    }
    const results = message.parts.filter(
      (p): p is Extract<NeutralPart, { kind: 'toolResult' }> => p.kind === 'toolResult',
    );
    for (const p of results) out.push({ role: 'tool', tool_call_id: p.callId, content: p.text });
    const toolImages = toolImagesMessage(results);
    if (toolImages) out.push(toolImages);
    if (message.parts.some((p) => p.kind === 'image'))
      out.push({ role: message.role, content: contentParts(message.parts) });
    else if (text !== '') out.push({ role: message.role, content: text });
  }
  return out;
}

export interface ChatRequestInput {
  readonly model: string;
  readonly messages: readonly NeutralMessage[];
  readonly tools?: readonly NeutralTool[];
  /** VS Code's LanguageModelChatToolMode: 'required' asks for a tool call. */
  readonly toolMode?: 'auto' | 'required';
  readonly maxTokens: number;
  /** Caller's model options that map onto the request (temperature, top_p). */
  readonly modelOptions?: { readonly [name: string]: unknown };
}

const PASSED_OPTIONS = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'seed', 'stop'] as const;

/** The body of POST /v1/chat/completions, streamed, with usage at the end. */
export function buildChatRequest(input: ChatRequestInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: input.model,
    messages: toOpenAiMessages(input.messages),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: input.maxTokens,
  };
  const requested = input.modelOptions?.['max_tokens'];
  if (typeof requested === 'number' && Number.isInteger(requested) && requested > 0)
    body.max_tokens = Math.min(requested, input.maxTokens);
  for (const name of PASSED_OPTIONS) {
    const value = input.modelOptions?.[name];
    if (value !== undefined) body[name] = value;
  }
  const tools = input.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        description: t.description,
        parameters: t.inputSchema ?? { type: 'object', properties: {} },
      },
    }));
    body.tool_choice = input.toolMode === 'required' ? 'required' : 'auto';
  }
  return body;
}

// ------------------------------------------------------------------ server-sent events

// ------------------------------------------------------------------ the streamed answer

export type StreamEvent =
  | { readonly kind: 'text'; readonly text: string }
  /** Reasoning (reasoning_content): never part of the answer; the provider logs it. */
  | { readonly kind: 'reasoning'; readonly text: string }
  | { readonly kind: 'toolCall'; readonly callId: string; readonly name: string; readonly input: object }
  | { readonly kind: 'usage'; readonly promptTokens: number; readonly completionTokens: number };

/** What the server said instead of an answer (an error object in the stream, arguments that are not JSON). */
export class ChatStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatStreamError';
  }
}

interface PendingCall {
  id: string | undefined;
  name: string;
  args: string;
}

const THINK_MARKERS: readonly (readonly [string, string])[] = [
  ['<think>', '</think>'],
  ['◁think▷', '◁/think▷'],
];

/**
 * How to read content that may hold reasoning: 'leading' (default) a think block at its start is
 * reasoning; 'beforeEnd' also text ended by a closing tag without an opening one (a server known
 * to leak the reasoning into content, see docs/chat-model.md): the content is held until the tag
 * or the end of the answer, and without a tag it was all answer.
 */
export type ReasoningInContent = 'leading' | 'beforeEnd';

/**
 * Reassembles the streamed chunks of one chat completion. Tool calls are given whole (once their
 * arguments are complete: at finish_reason or at the end); text as it comes. Reasoning is told
 * apart twice: the server's reasoning parser puts it in `reasoning_content` (or vLLM's
 * `reasoning`), and an answer that opens with a think tag anyway (parser off, or a template that
 * leaks it) is held back as reasoning up to the closing tag.
 */
export class ChatStreamAccumulator {
  private readonly calls = new Map<number, PendingCall>();
  private emittedCalls = false;
  private finished: string | undefined;
  private done = false;
  /** Answer text not yet given out while it may still be the start of a think tag. */
  private head = '';
  private headState: 'undecided' | 'thinking' | 'answer' = 'undecided';
  private closing = '';

  constructor(private readonly reasoningInContent: ReasoningInContent = 'leading') {}

  /** One SSE data payload. */
  push(data: string): StreamEvent[] {
    if (this.done) return [];
    if (data.trim() === '[DONE]') {
      this.done = true;
      return this.flush();
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new ChatStreamError(`the server sent a stream event that is not JSON: ${data.slice(0, 200)}`);
    }
    const error = streamError(chunk);
    if (error) throw new ChatStreamError(error);
    const out: StreamEvent[] = [];
    const c = chunk as { choices?: unknown; usage?: unknown };
    const usage = c.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
    for (const choice of Array.isArray(c.choices) ? c.choices : []) {
      const ch = choice as { delta?: Record<string, unknown>; finish_reason?: unknown };
      const delta = ch.delta ?? {};
      for (const key of ['reasoning_content', 'reasoning']) {
        const r = delta[key];
        if (typeof r === 'string' && r !== '') out.push({ kind: 'reasoning', text: r });
      }
      if (typeof delta.content === 'string' && delta.content !== '') out.push(...this.content(delta.content));
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.callPiece(call);
      if (typeof ch.finish_reason === 'string' && ch.finish_reason !== '') {
        this.finished = ch.finish_reason;
        out.push(...this.releaseHead(), ...this.takeCalls());
      }
    }
    if (usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') {
      out.push({ kind: 'usage', promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
    }
    return out;
  }

  /** The stream ended (with or without [DONE]): what is still held. */
  end(): StreamEvent[] {
    if (this.done) return [];
    this.done = true;
    return this.flush();
  }

  /** The finish_reason the server gave ("stop", "tool_calls", "length"), if any. */
  get finishReason(): string | undefined {
    return this.finished;
  }

  private flush(): StreamEvent[] {
    return [...this.releaseHead(), ...this.takeCalls()];
  }

  private content(text: string): StreamEvent[] {
    if (this.headState === 'answer') return [{ kind: 'text', text }];
    if (this.headState === 'thinking') return this.thinking(text);
    if (this.reasoningInContent === 'beforeEnd') return this.untilClosingTag(text);
    this.head += text;
    const trimmed = this.head.trimStart();
    for (const [open] of THINK_MARKERS) {
      if (trimmed.startsWith(open)) {
        this.headState = 'thinking';
        this.closing = THINK_MARKERS.find(([o]) => o === open)![1];
        const rest = trimmed.slice(open.length);
        this.head = '';
        return this.thinking(rest);
      }
      if (open.startsWith(trimmed)) return []; // could still become the tag
    }
    this.headState = 'answer';
    const all = this.head;
    this.head = '';
    return [{ kind: 'text', text: all }];
  }

  /** Inside a leaked think block: reasoning until the closing tag, the answer after it. */
  private thinking(text: string): StreamEvent[] {
    this.head += text;
    const at = this.head.indexOf(this.closing);
    if (at < 0) {
      // Keep what could be the start of the closing tag.
      const keep = this.closing.length - 1;
      const safe = this.head.length > keep ? this.head.slice(0, this.head.length - keep) : '';
      this.head = this.head.slice(safe.length);
      return safe ? [{ kind: 'reasoning', text: safe }] : [];
    }
    const reasoning = this.head.slice(0, at);
    const answer = this.head.slice(at + this.closing.length).replace(/^\s+/, '');
    this.head = '';
    this.headState = 'answer';
    return [
      ...(reasoning ? [{ kind: 'reasoning' as const, text: reasoning }] : []),
      ...(answer ? [{ kind: 'text' as const, text: answer }] : []),
    ];
  }

  /** Held until a closing tag: the reasoning before it, the answer after; no tag, all answer (at the end). */
  private untilClosingTag(text: string): StreamEvent[] {
    this.head += text;
    const found = THINK_MARKERS.map(([open, close]) => ({ open, close, at: this.head.indexOf(close) }))
      .filter((m) => m.at >= 0)
      .sort((a, b) => a.at - b.at)[0];
    if (!found) return [];
    let reasoning = this.head.slice(0, found.at).trimStart();
    if (reasoning.startsWith(found.open)) reasoning = reasoning.slice(found.open.length);
    const answer = this.head.slice(found.at + found.close.length).replace(/^\s+/, '');
    this.head = '';
    this.headState = 'answer';
    return [
      ...(reasoning ? [{ kind: 'reasoning' as const, text: reasoning }] : []),
      ...(answer ? [{ kind: 'text' as const, text: answer }] : []),
    ];
  }

  private releaseHead(): StreamEvent[] {
    const held = this.head;
    this.head = '';
    if (!held) return [];
    // Cut off inside a think block: all of it was reasoning. A bare "<thi" prefix was text.
    return this.headState === 'thinking' ? [{ kind: 'reasoning', text: held }] : [{ kind: 'text', text: held }];
  }

  private callPiece(raw: unknown): void {
    const piece = raw as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const index = typeof piece.index === 'number' ? piece.index : this.calls.size;
    let call = this.calls.get(index);
    if (!call) this.calls.set(index, (call = { id: undefined, name: '', args: '' }));
    if (typeof piece.id === 'string' && piece.id !== '') call.id = piece.id;
    if (typeof piece.function?.name === 'string') call.name += piece.function.name;
    if (typeof piece.function?.arguments === 'string') call.args += piece.function.arguments;
  }

  private takeCalls(): StreamEvent[] {
    if (this.emittedCalls || this.calls.size === 0) return [];
    this.emittedCalls = true;
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        if (call.name === '') throw new ChatStreamError(`the server sent tool call ${index} without a function name`);
        let input: unknown;
        try {
          input = call.args.trim() === '' ? {} : JSON.parse(call.args);
        } catch {
          throw new ChatStreamError(
            `the server's tool call ${call.name} has arguments that are not JSON: ${call.args.slice(0, 200)}`,
          );
        }
        if (typeof input !== 'object' || input === null || Array.isArray(input)) {
          throw new ChatStreamError(
            `the server's tool call ${call.name} has arguments that are not a JSON object: ${call.args.slice(0, 200)}`,
          );
        }
        return { kind: 'toolCall' as const, callId: call.id ?? `call_${index}`, name: call.name, input };
      });
  }
}

/** The message of an error object sent in the stream (SGLang: {object:"error",message}; OpenAI: {error:{message}}). */
export function streamError(chunk: unknown): string | undefined {
  if (typeof chunk !== 'object' || chunk === null) return undefined;
  const c = chunk as { object?: unknown; message?: unknown; error?: unknown };
  if (c.object === 'error') return typeof c.message === 'string' ? c.message : 'the server reported an error';
  if (c.error !== undefined && c.error !== null) {
    const e = c.error as { message?: unknown };
    return typeof e === 'string' ? e : typeof e.message === 'string' ? e.message : JSON.stringify(c.error);
  }
  return undefined;
}

/** The error text of a non-2xx answer to the chat request (a JSON error body, else its text). */
export function httpErrorText(status: number, body: string): string {
  let detail = body.trim().slice(0, 300);
  try {
    const parsed = JSON.parse(body) as { detail?: unknown };
    detail = streamError(parsed) ?? (typeof parsed.detail === 'string' ? parsed.detail : detail);
  } catch {
    /* not JSON: the text itself */
  }
  return `HTTP ${status}${detail ? `: ${detail}` : ''}`;
}

/**
 * A whole chat completion (a server that answered `stream: true` with plain JSON) as one stream
 * payload, so the same accumulator (and its repair of leaked reasoning) reads both.
 */
export function completionAsStreamData(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ChatStreamError(`the server answered with JSON that does not parse: ${body.slice(0, 200)}`);
  }
  const error = streamError(parsed);
  if (error) throw new ChatStreamError(error);
  const p = parsed as { choices?: unknown; usage?: unknown };
  const choices = (Array.isArray(p.choices) ? p.choices : []).map((c: unknown) => {
    const choice = c as { index?: unknown; message?: unknown; finish_reason?: unknown };
    return { index: choice.index, delta: choice.message ?? {}, finish_reason: choice.finish_reason ?? null };
  });
  return JSON.stringify({ choices, usage: p.usage ?? null });
}
