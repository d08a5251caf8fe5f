/**
 * The SGLang HTTP API as the extension sees it: pure judges of what came back, then a thin
 * client (node-fetch through an agent that tunnels over SSH) with a timeout and a body cap.
 */
import type * as http from 'node:http';
import nodeFetch from 'node-fetch';

// ---------------------------------------------------------------- pure judges

/**
 * `/health` (reference §2): 503 with an empty body while warm-up runs, 200 once a 1-token
 * generation answers; later 503s mean the scheduler did not answer in time.
 */
export function judgeHealth(status: number): 'ok' | 'warming' | 'error' {
  if (status === 200) return 'ok';
  if (status === 503) return 'warming';
  return 'error';
}

export type CompletionVerdict = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string };

export function isJsonContentType(contentType: string): boolean {
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || /^application\/[\w.+-]*\+json$/.test(mime);
}

function clip(s: string, n = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

function errorMessageOf(obj: Record<string, unknown>): string | undefined {
  const m = obj['message'];
  if (typeof m === 'string') return m;
  const e = obj['error'];
  if (typeof e === 'string') return e;
  if (typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>)['message'] === 'string') {
    return (e as Record<string, unknown>)['message'] as string;
  }
  const d = obj['detail'];
  if (typeof d === 'string') return d;
  return undefined;
}

function parseObject(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ready only on SGLang's own evidence: HTTP 200, a JSON content type, a body that parses, no
 * error object, and a non-empty `choices` whose first element has a string `text`
 * (/v1/completions; `message.content` of a chat answer is accepted too). Matching the word
 * "choices" is not enough: an error message can contain it (reference §6).
 */
export function judgeCompletion(status: number, contentType: string, bodyText: string, truncated: boolean): CompletionVerdict {
  if (truncated) return { ok: false, reason: 'the answer was too large and was cut off: not a normal completion' };
  const json = isJsonContentType(contentType);
  const obj = json ? parseObject(bodyText) : undefined;
  if (status !== 200) {
    const msg = obj ? errorMessageOf(obj) : undefined;
    if (msg) return { ok: false, reason: `HTTP ${status}: ${clip(msg)}` };
    if (/<html|<!doctype/i.test(bodyText)) return { ok: false, reason: `HTTP ${status} with an HTML page instead of JSON` };
    return { ok: false, reason: `HTTP ${status}${bodyText.trim() ? `: ${clip(bodyText, 120)}` : ' with an empty body'}` };
  }
  if (!json) return { ok: false, reason: `unexpected content type ${JSON.stringify(contentType || '(none)')} (expected JSON)` };
  if (!obj) {
    return { ok: false, reason: bodyText.trim() ? 'the body is not valid JSON (cut short or garbled)' : 'the body is empty' };
  }
  if (obj['object'] === 'error' || obj['error'] !== undefined && obj['error'] !== null) {
    return { ok: false, reason: `the server answered with an error: ${clip(errorMessageOf(obj) ?? 'no message')}` };
  }
  const choices = obj['choices'];
  if (!Array.isArray(choices)) return { ok: false, reason: 'the answer has no "choices" list' };
  if (choices.length === 0) return { ok: false, reason: 'the answer has an empty "choices" list' };
  const first: unknown = choices[0];
  if (typeof first === 'object' && first !== null) {
    const f = first as Record<string, unknown>;
    if (typeof f['text'] === 'string') return { ok: true, text: f['text'] };
    const message = f['message'];
    if (typeof message === 'object' && message !== null && typeof (message as Record<string, unknown>)['content'] === 'string') {
      return { ok: true, text: (message as Record<string, unknown>)['content'] as string };
    }
  }
  return { ok: false, reason: 'the first choice has no generated text' };
}

/** Model ids from `/v1/models` (`{"object":"list","data":[{"id":...}]}`); empty when none or unparseable. */
export function parseModels(body: string): string[] {
  const obj = parseObject(body);
  const data = obj?.['data'];
  if (!Array.isArray(data)) return [];
  return data
    .map((m: unknown) => (typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['id'] : undefined))
    .filter((id): id is string => typeof id === 'string' && id !== '');
}

// ---------------------------------------------------------------- client

export type HttpResult =
  | { readonly kind: 'refused' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'http'; readonly status: number; readonly contentType: string; readonly body: string; readonly truncated: boolean }
  | { readonly kind: 'error'; readonly message: string };

export type ModelsResult = { readonly ok: true; readonly ids: string[] } | { readonly ok: false; readonly reason: string; readonly result: HttpResult };
export type ServerInfoResult =
  | { readonly ok: true; readonly info: Record<string, unknown>; readonly path: string }
  | { readonly ok: false; readonly reason: string; readonly result: HttpResult };

/** The slice of node-fetch's Response the client uses. */
export interface FetchResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: NodeJS.ReadableStream | null;
}
export type FetchLike = (
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string; agent?: http.Agent; signal: AbortSignal },
) => Promise<FetchResponse>;

export interface SglangClientOptions {
  /** Per request, headers and body included. */
  readonly timeoutMs?: number;
  /** A completion may wait for the scheduler; SGLang's own health check allows 20 s. */
  readonly completionTimeoutMs?: number;
  readonly maxBodyBytes?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A description of a non-HTTP or non-2xx result, for the log and messages. */
export function describeResult(r: HttpResult): string {
  switch (r.kind) {
    case 'refused':
      return 'connection refused (port closed)';
    case 'timeout':
      return 'no answer in time';
    case 'error':
      return r.message;
    case 'http':
      return `HTTP ${r.status}${r.truncated ? ' (body cut off)' : ''}`;
  }
}

/**
 * The server's port is closed: ECONNREFUSED from the socket or from the tunnel's channel open.
 * Not a refused SSH connection (a TransportError, which node-fetch wraps without a code):
 * that is an unreachable host, which must never read as "still loading".
 */
function isRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown; message?: unknown } | undefined;
  if (e?.code === 'ECONNREFUSED' || e?.errno === 'ECONNREFUSED') return true;
  return typeof e?.message === 'string' && /Channel open failure: Connection refused/i.test(e.message);
}

export class SglangClient {
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly completionTimeoutMs: number;
  private readonly maxBodyBytes: number;

  constructor(
    baseUrl: string,
    private readonly agent: http.Agent | undefined,
    private readonly fetchImpl: FetchLike = nodeFetch as unknown as FetchLike,
    options: SglangClientOptions = {},
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.completionTimeoutMs = options.completionTimeoutMs ?? 30_000;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  get baseUrl(): string {
    return this.base;
  }

  health(): Promise<HttpResult> {
    return this.request('GET', '/health');
  }

  async models(): Promise<ModelsResult> {
    const result = await this.request('GET', '/v1/models');
    if (result.kind !== 'http') return { ok: false, reason: describeResult(result), result };
    if (result.status !== 200) return { ok: false, reason: `HTTP ${result.status}`, result };
    const ids = parseModels(result.body);
    if (ids.length === 0) return { ok: false, reason: 'no model listed', result };
    return { ok: true, ids };
  }

  /** `/server_info`, else its older name `/get_server_info`. Answers before warm-up ends: not readiness. */
  async serverInfo(): Promise<ServerInfoResult> {
    let path = '/server_info';
    let result = await this.request('GET', path);
    if (result.kind === 'http' && result.status === 404) {
      path = '/get_server_info';
      result = await this.request('GET', path);
    }
    if (result.kind !== 'http') return { ok: false, reason: describeResult(result), result };
    if (result.status !== 200) return { ok: false, reason: `HTTP ${result.status}`, result };
    const info = result.truncated ? undefined : parseObject(result.body);
    if (!info) return { ok: false, reason: 'not a JSON object', result };
    return { ok: true, info, path };
  }

  completion(model: string, prompt = 'hi', maxTokens = 1): Promise<HttpResult> {
    const body = JSON.stringify({ model, prompt, max_tokens: maxTokens, temperature: 0 });
    return this.request('POST', '/v1/completions', body, this.completionTimeoutMs);
  }

  /** One request; never throws. */
  async request(method: string, path: string, body?: string, timeoutMs = this.timeoutMs): Promise<HttpResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const res = await this.fetchImpl(this.base + path, {
        method,
        ...(body !== undefined ? { body, headers: { 'Content-Type': 'application/json', Accept: 'application/json' } } : { headers: { Accept: 'application/json' } }),
        ...(this.agent ? { agent: this.agent } : {}),
        signal: controller.signal,
      });
      const { text, truncated } = await readCapped(res.body, this.maxBodyBytes);
      if (truncated) controller.abort(); // drop the connection rather than drain the rest
      return { kind: 'http', status: res.status, contentType: res.headers.get('content-type') ?? '', body: text, truncated };
    } catch (error) {
      if (timedOut) return { kind: 'timeout' };
      if (isRefusal(error)) return { kind: 'refused' };
      const e = error as { code?: unknown; message?: unknown };
      if (e?.code === 'ETIMEDOUT') return { kind: 'timeout' };
      return { kind: 'error', message: typeof e?.message === 'string' ? e.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Reads at most `cap` bytes; past that the stream is destroyed and `truncated` is true. */
export async function readCapped(stream: NodeJS.ReadableStream | null, cap: number): Promise<{ text: string; truncated: boolean }> {
  if (!stream) return { text: '', truncated: false };
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (size + buf.length > cap) {
      chunks.push(buf.subarray(0, cap - size));
      size = cap;
      truncated = true;
      break; // leaving for-await destroys the stream
    }
    chunks.push(buf);
    size += buf.length;
  }
  if (truncated) (stream as { destroy?: () => void }).destroy?.();
  return { text: Buffer.concat(chunks, size).toString('utf8'), truncated };
}
