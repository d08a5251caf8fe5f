/**
 * The SGLang HTTP API as the extension sees it: pure judges of what came back, then a thin
 * client (node-fetch through an agent that tunnels over SSH) with a timeout and a body cap.
 */
import type * as http from 'node:http';
import nodeFetch from 'node-fetch';
import { parseModels, parseObject } from './sglangResponses';

// ---------------------------------------------------------------- pure judges

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
