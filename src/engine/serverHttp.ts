/**
 * The model server's HTTP API as the extension sees it (OpenAI-compatible, as SGLang and vLLM
 * both serve it; each engine's differences are its `HttpQuirks`, engine.ts): pure judges of what came back, then a thin
 * client (node-fetch through an agent that tunnels over SSH) with a timeout and a body cap.
 * It sends the server's API key as a Bearer token (not to /health), and, when the SSH server
 * forbids forwarding, switches for good to a fallback fetch (curl on the host, curlFetch.ts).
 */
import type * as http from 'node:http';
import nodeFetch from 'node-fetch';
import { isForwardingProhibited } from '../transport/curlFetch';
import { forwardingProhibitedHere } from '../present/words/transportWords';
import type { FetchLike } from '../transport/fetchLike';
import { parseModels, parseObject, statusReason } from './httpAnswers';
import * as words from '../present/words/httpWords';
import { sglangEngine } from './sglang/sglangEngine';
import { hasNodePlaceholder, urlForNode } from '../config/nodeUrl';
import { TunnelAgent } from '../transport/httpAgent';

// ---------------------------------------------------------------- pure judges

export type HttpResult =
  | { readonly kind: 'refused' }
  | { readonly kind: 'timeout' }
  | {
      readonly kind: 'http';
      readonly status: number;
      readonly contentType: string;
      readonly body: string;
      readonly truncated: boolean;
      /** Present (true) when the request carried `Authorization: Bearer KEY`: a 401 then means a wrong key. */
      readonly apiKeySent?: true;
    }
  | { readonly kind: 'error'; readonly message: string };

/** A streamed answer (postStream): the body is read by the caller. */
export type StreamResult =
  | {
      readonly kind: 'http';
      readonly status: number;
      readonly contentType: string;
      readonly body: NodeJS.ReadableStream;
    }
  | { readonly kind: 'refused' }
  | { readonly kind: 'error'; readonly message: string };

export type ModelsResult =
  | { readonly ok: true; readonly ids: string[] }
  | { readonly ok: false; readonly reason: string; readonly result: HttpResult };
export type ServerInfoResult =
  | { readonly ok: true; readonly info: Record<string, unknown>; readonly path: string }
  | { readonly ok: false; readonly reason: string; readonly result: HttpResult };

export type { FetchLike, FetchResponse } from '../transport/fetchLike';

export interface ServerHttpOptions {
  /** Per request, headers and body included. */
  readonly timeoutMs?: number;
  /** A completion may wait for the scheduler; SGLang's own health check allows 20 s. */
  readonly completionTimeoutMs?: number;
  readonly maxBodyBytes?: number;
  /** SGLang's `--api-key`: sent as `Authorization: Bearer KEY` on every request but /health. */
  readonly apiKey?: string;
  /**
   * Used for good from the first request the SSH server refuses to forward ("administratively
   * prohibited"): e.g. `curlFetch(...)`. Without it such requests fail with a plain message.
   */
  readonly fallbackFetch?: FetchLike;
  /** Told once, when the client switches to `fallbackFetch`. */
  readonly onFallback?: (message: string) => void;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A description of a non-HTTP or non-2xx result, for the log and messages. */
export function describeResult(r: HttpResult): string {
  switch (r.kind) {
    case 'refused':
      return words.connectionRefused();
    case 'timeout':
      return words.noAnswerInTime();
    case 'error':
      return r.message;
    case 'http':
      return r.truncated
        ? words.bodyCutOff(statusReason(r.status, r.apiKeySent === true))
        : statusReason(r.status, r.apiKeySent === true);
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

/** `/health` (and `/health?x`) is the one request sent without the API key. */
function needsApiKey(path: string): boolean {
  return path.split('?')[0] !== '/health';
}

/** The request headers: JSON in and out, and the Bearer token when there is a key and the path needs it. */
export function requestHeaders(path: string, hasBody: boolean, apiKey: string | undefined): Record<string, string> {
  return {
    ...(hasBody ? { 'Content-Type': 'application/json' } : {}),
    Accept: 'application/json',
    ...(apiKey && needsApiKey(path) ? { Authorization: `Bearer ${apiKey}` } : {}),
  };
}

const PROHIBITED = Symbol('forwarding prohibited');

export class ServerHttpClient {
  private base: string;
  private readonly timeoutMs: number;
  private readonly completionTimeoutMs: number;
  private readonly maxBodyBytes: number;
  private apiKey: string | undefined;
  private readonly fallbackFetch: FetchLike | undefined;
  private readonly onFallback: ((message: string) => void) | undefined;
  private usingFallback = false;
  private node: string | undefined;

  constructor(
    baseUrl: string,
    private readonly agent: http.Agent | undefined,
    private readonly fetchImpl: FetchLike = nodeFetch as unknown as FetchLike,
    options: ServerHttpOptions = {},
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.completionTimeoutMs = options.completionTimeoutMs ?? 30_000;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.apiKey = options.apiKey || undefined;
    this.fallbackFetch = options.fallbackFetch;
    this.onFallback = options.onFallback;
  }

  /** The url requests go to: with `{node}` replaced once the job's node is known. */
  get baseUrl(): string {
    const resolved = urlForNode(this.base, this.node);
    return 'url' in resolved ? resolved.url : this.base;
  }

  /** The configured url names the job's node (`{node}`): where the server is moves with the job. */
  get followsNode(): boolean {
    return hasNodePlaceholder(this.base);
  }

  /** Why no request can go out yet (a `{node}` url and no node, or one refused); undefined when they can. */
  get nodeProblem(): string | undefined {
    const where = urlForNode(this.base, this.node);
    return 'problem' in where ? where.problem : undefined;
  }

  /** The node a `{node}` url means now (the job's batch host); undefined while the job has none. */
  setNode(node: string | undefined): void {
    this.node = node;
  }

  /** Where the server really listens, once it said so (see announcedUrl.compareServerUrl). */
  setBaseUrl(url: string): void {
    this.base = url.replace(/\/+$/, '');
  }

  /** The key may be learnt after construction (the unit's ExecStart, or "Kimi Service: Set server API key"). */
  setApiKey(key: string | undefined): void {
    this.apiKey = key || undefined;
  }

  get hasApiKey(): boolean {
    return this.apiKey !== undefined;
  }

  /** True once requests go through `fallbackFetch` (the SSH server forbids forwarding). */
  get viaFallback(): boolean {
    return this.usingFallback;
  }

  health(): Promise<HttpResult> {
    return this.request('GET', '/health');
  }

  async models(): Promise<ModelsResult> {
    const result = await this.request('GET', '/v1/models');
    if (result.kind !== 'http') return { ok: false, reason: describeResult(result), result };
    if (result.status !== 200)
      return { ok: false, reason: statusReason(result.status, result.apiKeySent === true), result };
    const ids = parseModels(result.body);
    if (ids.length === 0) return { ok: false, reason: words.noModelListed(), result };
    return { ok: true, ids };
  }

  /**
   * The server's own description, from the first of `paths` that is not 404 (SGLang's
   * `/server_info`, else its older name `/get_server_info`: engine.ts `HttpQuirks`). Answers
   * before warm-up ends: not readiness.
   */
  async serverInfo(paths: readonly string[] = sglangEngine.http.serverInfoPaths): Promise<ServerInfoResult> {
    let path = paths[0] ?? '/server_info';
    let result = await this.request('GET', path);
    for (const next of paths.slice(1)) {
      if (result.kind !== 'http' || result.status !== 404) break;
      path = next;
      result = await this.request('GET', path);
    }
    if (result.kind !== 'http') return { ok: false, reason: describeResult(result), result };
    if (result.status !== 200)
      return { ok: false, reason: statusReason(result.status, result.apiKeySent === true), result };
    const info = result.truncated ? undefined : parseObject(result.body);
    if (!info) return { ok: false, reason: words.notAJsonObject(), result };
    return { ok: true, info, path };
  }

  completion(model: string, prompt = 'hi', maxTokens = 1): Promise<HttpResult> {
    const body = JSON.stringify({ model, prompt, max_tokens: maxTokens, temperature: 0 });
    return this.request('POST', '/v1/completions', body, this.completionTimeoutMs);
  }

  /** One request; never throws. */
  /** `maxBodyBytes`: more than the client's cap, for a body known to be long (a streamed answer). */
  async request(
    method: string,
    path: string,
    body?: string,
    timeoutMs = this.timeoutMs,
    maxBodyBytes = this.maxBodyBytes,
  ): Promise<HttpResult> {
    // No request to a literal `{node}`: until the job has a node, there is nowhere to ask.
    const where = urlForNode(this.base, this.node);
    if ('problem' in where) return { kind: 'error', message: where.problem };
    const first = await this.attempt(this.usingFallback, method, path, body, timeoutMs, maxBodyBytes);
    if (first !== PROHIBITED) return first;
    if (!this.fallbackFetch)
      return { kind: 'error', message: words.cannotReach(forwardingProhibitedHere(), this.base) };
    if (!this.usingFallback) {
      this.usingFallback = true;
      this.onFallback?.(words.nowThroughCurl(forwardingProhibitedHere(), this.base));
    }
    const second = await this.attempt(true, method, path, body, timeoutMs, maxBodyBytes);
    return second === PROHIBITED ? { kind: 'error', message: forwardingProhibitedHere() } : second;
  }

  /**
   * A POST whose answer is read as it arrives (server-sent events): the response body stream,
   * uncapped, for the caller to read and to end with `signal`. Same tunnel, key and fallback as
   * request(); through the fallback (curl on the host) the body arrives when curl ends.
   */
  async postStream(path: string, body: string, signal: AbortSignal): Promise<StreamResult> {
    const where = urlForNode(this.base, this.node);
    if ('problem' in where) return { kind: 'error', message: where.problem };
    for (let round = 0; round < 2; round++) {
      const viaFallback = this.usingFallback && this.fallbackFetch !== undefined;
      const fetchImpl = viaFallback ? this.fallbackFetch! : this.fetchImpl;
      const route = this.route(this.baseUrl + path, viaFallback);
      const headers = { ...requestHeaders(path, true, this.apiKey), Accept: 'text/event-stream', ...route.headers };
      try {
        const res = await fetchImpl(route.url, {
          method: 'POST',
          headers,
          body,
          ...(route.agent ? { agent: route.agent } : {}),
          signal,
        });
        if (!res.body) return { kind: 'error', message: words.noBody() };
        return { kind: 'http', status: res.status, contentType: res.headers.get('content-type') ?? '', body: res.body };
      } catch (error) {
        if (!viaFallback && isForwardingProhibited(error) && this.fallbackFetch) {
          this.usingFallback = true;
          this.onFallback?.(words.nowThroughCurl(forwardingProhibitedHere(), this.base));
          continue;
        }
        if (isRefusal(error)) return { kind: 'refused' };
        return { kind: 'error', message: route.told(error) };
      }
    }
    return { kind: 'error', message: forwardingProhibitedHere() };
  }

  private async attempt(
    viaFallback: boolean,
    method: string,
    path: string,
    body: string | undefined,
    timeoutMs: number,
    maxBodyBytes: number,
  ): Promise<HttpResult | typeof PROHIBITED> {
    const fetchImpl = viaFallback && this.fallbackFetch ? this.fallbackFetch : this.fetchImpl;
    const route = this.route(this.baseUrl + path, viaFallback);
    const headers = { ...requestHeaders(path, body !== undefined, this.apiKey), ...route.headers };
    const apiKeySent = headers['Authorization'] !== undefined;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const res = await fetchImpl(route.url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(route.agent ? { agent: route.agent } : {}),
        signal: controller.signal,
        timeoutMs,
        maxBodyBytes,
      });
      const { text, truncated } = await readCapped(res.body, maxBodyBytes);
      if (truncated) controller.abort(); // drop the connection rather than drain the rest
      return {
        kind: 'http',
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        body: text,
        truncated,
        ...(apiKeySent ? { apiKeySent: true as const } : {}),
      };
    } catch (error) {
      if (timedOut) return { kind: 'timeout' };
      if (!viaFallback && isForwardingProhibited(error)) return PROHIBITED;
      if (isRefusal(error)) return { kind: 'refused' };
      const e = error as { code?: unknown };
      if (e?.code === 'ETIMEDOUT') return { kind: 'timeout' };
      return { kind: 'error', message: route.told(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The url, agent and headers a request is sent with: through the tunnel's route when it has one. */
  private route(url: string, viaFallback: boolean): SentRequest {
    const told = (sentUrl: string) => (error: unknown) => {
      const e = error as { message?: unknown };
      const message = typeof e?.message === 'string' ? e.message : String(error);
      return sentUrl === url ? message : message.split(sentUrl).join(url);
    };
    if (viaFallback || !this.agent) return { url, headers: {}, told: told(url) };
    if (!(this.agent instanceof TunnelAgent)) return { url, agent: this.agent, headers: {}, told: told(url) };
    const route = this.agent.route(url);
    return {
      url: route.url,
      agent: route.agent,
      headers: route.host ? { Host: route.host } : {},
      told: told(route.url),
    };
  }
}

/** A request as sent (see TunnelAgent.route), and its error in the words of the url it was for. */
interface SentRequest {
  readonly url: string;
  readonly agent?: http.Agent;
  readonly headers: Record<string, string>;
  told(error: unknown): string;
}

/** Reads at most `cap` bytes; past that the stream is destroyed and `truncated` is true. */
export async function readCapped(
  stream: NodeJS.ReadableStream | null,
  cap: number,
): Promise<{ text: string; truncated: boolean }> {
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
