/**
 * The verifier's plain requests and what the server says of itself: a timeout around each, the
 * model's name and context length (/v1/models), the engine's flags and limits (/server_info, or
 * vLLM's running command line). Judged by ./judges.
 */
import { engineById } from '../engine/engine';
import { contextLengthOf } from './budget';
import {
  judgeRunningFlags,
  judgeServerInfo,
  result,
  showJson,
  truncate,
  type ExpectedParsers,
  type Judgement,
} from './judges';
import type { Fact } from '../present/words/verifyFindings';
import type { VerifierDeps } from './verifyTypes';
import { noAnswerWithin } from '../present/words/verifyWords';

class TimeoutError extends Error {
  constructor(readonly seconds: number) {
    super(noAnswerWithin(seconds));
  }
}

/** Runs `f` with an abort signal; rejects with TimeoutError after `ms`. */
async function withTimeout<T>(ms: number, f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new TimeoutError(Math.round(ms / 100) / 10));
    }, ms);
  });
  try {
    return await Promise.race([f(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; skipped: Judgement; timedOut: boolean };

/** `what`: the request ("GET /v1/models"); undefined for reading the running command line. */
export async function attempt<T>(
  ms: number,
  what: string | undefined,
  f: (signal: AbortSignal) => Promise<T>,
): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await withTimeout(ms, f) };
  } catch (e) {
    const asked = what !== undefined ? { what } : {};
    const fact: Fact =
      e instanceof TimeoutError
        ? { kind: 'requestTimedOut', ...asked, seconds: e.seconds }
        : { kind: 'requestFailed', ...asked, message: (e as Error)?.message ?? String(e) };
    return { ok: false, skipped: result('skipped', fact), timedOut: e instanceof TimeoutError };
  }
}

export function parseMaybeJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** 502/503/504 mean the server is not answering right now, not that a parser is wrong. */
export function httpJudgement(status: number, body: unknown): Judgement | null {
  if (status >= 200 && status < 300) return null;
  const text = typeof body === 'string' ? body : showJson(body);
  return result(status === 502 || status === 503 || status === 504 ? 'skipped' : 'fail', {
    kind: 'http',
    status,
    body: truncate(text),
  });
}

export interface Models {
  readonly model?: string;
  /** Why there is none. */
  readonly reason?: readonly Fact[];
  readonly maxModelLen?: number;
}

export async function models(deps: VerifierDeps): Promise<Models> {
  const r = await attempt(deps.timeoutMs, 'GET /v1/models', (signal) => deps.getJson('/v1/models', { signal }));
  if (!r.ok) return { reason: r.skipped.facts };
  const body = parseMaybeJson(r.value.body) as { data?: { id?: unknown }[] } | undefined;
  const id = body?.data?.[0]?.id;
  if (r.value.status !== 200 || typeof id !== 'string' || id === '') {
    return { reason: [{ kind: 'noModelId', status: r.value.status, body: truncate(showJson(r.value.body)) }] };
  }
  return { model: id, maxModelLen: contextLengthOf(body, 'max_model_len') };
}

/**
 * The engine's self-description (SGLang's /server_info, else /get_server_info: its HttpQuirks):
 * the flags, the context length, the running-request limit.
 */
export async function serverInfo(
  deps: VerifierDeps,
  paths: readonly string[],
): Promise<Outcome<{ status: number; body: unknown }> | undefined> {
  const [first, ...older] = paths;
  if (first === undefined) return undefined;
  let r = await attempt(deps.timeoutMs, `GET ${first}`, (signal) => deps.getJson(first, { signal }));
  for (const path of older) {
    if (!r.ok || r.value.status !== 404) break;
    r = await attempt(deps.timeoutMs, `GET ${path}`, (signal) => deps.getJson(path, { signal }));
  }
  return r.ok ? { ok: true, value: { status: r.value.status, body: parseMaybeJson(r.value.body) } } : r;
}

export async function flagsJudgement(
  deps: VerifierDeps,
  expected: ExpectedParsers,
  info: Outcome<{ status: number; body: unknown }> | undefined,
): Promise<Judgement> {
  // An engine that describes itself nowhere (vLLM): its flags are read from the running process.
  const engine = expected.engine ? engineById(expected.engine) : undefined;
  if (engine && engine.http.serverInfoPaths.length === 0) {
    const runningArgv = deps.runningArgv;
    if (!runningArgv) return result('skipped', { kind: 'noServerInfo', engine: engine.label });
    const r = await attempt(deps.timeoutMs, undefined, () => runningArgv());
    return r.ok ? judgeRunningFlags(r.value, expected) : r.skipped;
  }
  if (!info) return result('skipped', { kind: 'serverInfoNotAsked' });
  if (!info.ok) return info.skipped;
  return httpJudgement(info.value.status, info.value.body) ?? judgeServerInfo(info.value.body, expected);
}

export function maxRunningRequests(info: Outcome<{ status: number; body: unknown }> | undefined): number | undefined {
  if (!info?.ok || typeof info.value.body !== 'object' || info.value.body === null) return undefined;
  const v = (info.value.body as Record<string, unknown>).max_running_requests;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}
