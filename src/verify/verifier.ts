/**
 * Parser verification against a ready server: the checks of ./checks, their independent requests
 * run concurrently (at most CONCURRENCY at once), judged by ./judges and ./agentJudges. A timeout
 * or a network error makes a check 'skipped' (a slow model is not a parser failure); an answer cut
 * by max_tokens is retried at a bigger budget and stays 'inconclusive' when cut again. Never
 * changes server state.
 */
import { judgeToolIds, finishReasonOf, toolCallsOf, type IdSample } from './agentJudges';
import { chooseBudgets, contextLengthOf, type Budgets } from './budget';
import { CHECKS, type CheckName, type CheckSpec } from './checks';
import {
  judgeRunningFlags,
  judgeServerInfo,
  showJson,
  truncate,
  result,
  type ExpectedParsers,
  type Judgement,
  type KnownFault,
} from './judges';
import { Limiter } from './limiter';
import { assembleStream, judgeStream } from './streamJudge';
import { engineById } from '../engine/engine';

export { formatTable, summarize, verdictOf, type Verdict } from './report';
export { WEATHER_TOOL, reasoningRequest, thinkingOffRequest, toolRequest, type CheckName } from './checks';

export interface VerifierDeps {
  getJson(path: string, options?: { signal?: AbortSignal }): Promise<{ status: number; body: unknown }>;
  postJson(
    path: string,
    body: unknown,
    options?: { stream?: boolean; signal?: AbortSignal; timeoutMs?: number },
  ): Promise<{ status: number; body: string; truncated?: boolean }>;
  /** Per request (a retry at a bigger budget gets more, see retryTimeoutMs). */
  readonly timeoutMs: number;
  /** The running server's command line (vLLM, which has no /server_info); undefined when there is none. */
  runningArgv?(): Promise<readonly string[] | undefined>;
  /** At most this many requests at once; CONCURRENCY when unset. */
  readonly concurrency?: number;
}

/** 8 at once: 13 chat requests end in two rounds (docs/verification.md). */
export const CONCURRENCY = 8;
/** A retry may take as long as the slowest server we support (100 token/s) needs for its budget. */
const RETRY_TOKENS_PER_SECOND = 100;

export interface CheckResult {
  readonly name: CheckName;
  readonly status: Judgement['status'];
  readonly evidence: string;
  /** The request, in short, when it did not pass. */
  readonly request?: string;
  /** What an agent suffers, when it did not pass. */
  readonly consequence?: string;
  /** A fault the chat model repairs on the way, when the judge recognised one. */
  readonly fault?: KnownFault;
}

export interface VerifyResult {
  readonly checks: readonly CheckResult[];
  readonly allPassed: boolean;
  /** From GET /v1/models, when it answered. */
  readonly model?: string;
  /** The max_tokens budgets used; undefined when no chat request could be made. */
  readonly budgets?: Budgets;
}

class TimeoutError extends Error {}

/** Runs `f` with an abort signal; rejects with TimeoutError after `ms`. */
async function withTimeout<T>(ms: number, f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new TimeoutError(`no answer within ${Math.round(ms / 100) / 10} s`));
    }, ms);
  });
  try {
    return await Promise.race([f(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; skipped: Judgement };

async function attempt<T>(ms: number, what: string, f: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await withTimeout(ms, f) };
  } catch (e) {
    const reason = e instanceof TimeoutError ? e.message : `request failed: ${(e as Error)?.message ?? String(e)}`;
    return { ok: false, skipped: { status: 'skipped', evidence: truncate(`${what}: ${reason}`) } };
  }
}

function parseMaybeJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** 502/503/504 mean the server is not answering right now, not that a parser is wrong. */
function httpJudgement(status: number, body: unknown): Judgement | null {
  if (status >= 200 && status < 300) return null;
  const text = typeof body === 'string' ? body : showJson(body);
  const evidence = truncate(`HTTP ${status}: ${text}`);
  return { status: status === 502 || status === 503 || status === 504 ? 'skipped' : 'fail', evidence };
}

interface Models {
  readonly model?: string;
  readonly reason?: string;
  readonly maxModelLen?: number;
}

async function models(deps: VerifierDeps): Promise<Models> {
  const r = await attempt(deps.timeoutMs, 'GET /v1/models', (signal) => deps.getJson('/v1/models', { signal }));
  if (!r.ok) return { reason: r.skipped.evidence };
  const body = parseMaybeJson(r.value.body) as { data?: { id?: unknown }[] } | undefined;
  const id = body?.data?.[0]?.id;
  if (r.value.status !== 200 || typeof id !== 'string' || id === '') {
    return { reason: truncate(`GET /v1/models: HTTP ${r.value.status} without a model id: ${showJson(r.value.body)}`) };
  }
  return { model: id, maxModelLen: contextLengthOf(body, 'max_model_len') };
}

/**
 * The engine's self-description (SGLang's /server_info, else /get_server_info: its HttpQuirks):
 * the flags, the context length, the running-request limit.
 */
async function serverInfo(
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

async function flagsJudgement(
  deps: VerifierDeps,
  expected: ExpectedParsers,
  info: Outcome<{ status: number; body: unknown }> | undefined,
): Promise<Judgement> {
  if (expected.engine === 'vllm') {
    const runningArgv = deps.runningArgv;
    if (!runningArgv)
      return { status: 'skipped', evidence: 'vLLM has no /server_info and the process is not readable here' };
    const r = await attempt(deps.timeoutMs, 'reading the running command line', () => runningArgv());
    return r.ok ? judgeRunningFlags(r.value, expected) : r.skipped;
  }
  if (!info) return { status: 'skipped', evidence: 'GET /server_info was not asked' };
  if (!info.ok) return info.skipped;
  return httpJudgement(info.value.status, info.value.body) ?? judgeServerInfo(info.value.body, expected);
}

function maxRunningRequests(info: Outcome<{ status: number; body: unknown }> | undefined): number | undefined {
  if (!info?.ok || typeof info.value.body !== 'object' || info.value.body === null) return undefined;
  const v = (info.value.body as Record<string, unknown>).max_running_requests;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

/** The request in short, for the evidence of a check that did not pass. */
export function describeRequest(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages)
    ? (body.messages as { role?: unknown; content?: unknown; tool_call_id?: unknown; tool_calls?: unknown }[])
    : [];
  const turns = messages.map((m) => {
    if (m.role === 'tool') return `tool(${String(m.tool_call_id)})`;
    if (Array.isArray(m.tool_calls))
      return `assistant(${(m.tool_calls as { id?: unknown }[]).map((t) => String(t.id)).join(',')})`;
    return `${String(m.role)} ${JSON.stringify(typeof m.content === 'string' ? truncate(m.content, 40) : m.content)}`;
  });
  const extras = [
    Array.isArray(body.tools)
      ? `tools [${(body.tools as { function?: { name?: string } }[]).map((t) => t.function?.name).join(',')}]`
      : undefined,
    body.tool_choice !== undefined ? `tool_choice ${JSON.stringify(body.tool_choice)}` : undefined,
    body.chat_template_kwargs !== undefined
      ? `chat_template_kwargs ${JSON.stringify(body.chat_template_kwargs)}`
      : undefined,
    `max_tokens ${String(body.max_tokens)}`,
    body.stream === true ? 'stream' : undefined,
  ].filter((x): x is string => x !== undefined);
  return `POST /v1/chat/completions: ${turns.join(' → ')}; ${extras.join(', ')}`;
}

interface Answer {
  readonly judgement: Judgement;
  /** The answer as a chat completion (a stream assembled), when there was one to judge. */
  readonly answer?: unknown;
  readonly request?: string;
}

interface Run {
  readonly deps: VerifierDeps;
  readonly limiter: Limiter;
  readonly model: string;
  readonly budgets: Budgets;
}

async function ask(
  run: Run,
  body: Record<string, unknown>,
  judge: (resp: unknown) => Judgement,
  timeoutMs: number,
): Promise<Answer> {
  const stream = body.stream === true;
  const what = `POST /v1/chat/completions${stream ? ' (stream)' : ''}`;
  const request = describeRequest(body);
  const r = await run.limiter.run(() =>
    attempt(timeoutMs, what, (signal) =>
      run.deps.postJson('/v1/chat/completions', body, { stream, signal, timeoutMs }),
    ),
  );
  if (!r.ok) return { judgement: r.skipped, request };
  if (r.value.truncated === true)
    return {
      judgement: result(
        'inconclusive',
        `inconclusive: the answer is longer than the client reads (${r.value.body.length} bytes read)`,
      ),
      request,
    };
  const http = httpJudgement(r.value.status, parseMaybeJson(r.value.body));
  if (http) return { judgement: http, request };
  if (!stream) {
    const answer = parseMaybeJson(r.value.body);
    return { judgement: judge(answer), answer, request };
  }
  return { judgement: judgeStream(r.value.body, judge), answer: assembleStream(r.value.body), request };
}

function cutEvidence(answer: unknown, budget: number): string {
  const content = (answer as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  const empty = typeof content !== 'string' || content.trim() === '';
  return empty
    ? `the reasoning used the whole budget of ${budget} tokens`
    : `the answer was cut at the budget of ${budget} tokens`;
}

/**
 * Asks with the first budget; an answer cut by it (finish_reason "length") that does not pass is
 * asked again with the retry budget, and is inconclusive when that is cut too.
 */
async function askWithinBudget(
  run: Run,
  body: (maxTokens: number) => Record<string, unknown>,
  judge: (resp: unknown) => Judgement,
): Promise<Answer> {
  const first = run.budgets.first;
  const a = await ask(run, body(first), judge, run.deps.timeoutMs);
  if (a.judgement.status === 'pass' || a.answer === undefined || finishReasonOf(a.answer) !== 'length') return a;
  const retry = run.budgets.retry;
  if (retry === undefined) {
    return {
      ...a,
      judgement: result(
        'inconclusive',
        `inconclusive: ${cutEvidence(a.answer, first)} (finish_reason "length"; the context leaves no room for more) | ${a.judgement.evidence}`,
      ),
    };
  }
  const timeoutMs = Math.max(run.deps.timeoutMs, Math.ceil((retry / RETRY_TOKENS_PER_SECOND) * 1000));
  const b = await ask(run, body(retry), judge, timeoutMs);
  if (b.answer !== undefined && finishReasonOf(b.answer) === 'length' && b.judgement.status !== 'pass') {
    return {
      ...b,
      judgement: result(
        'inconclusive',
        `inconclusive: ${cutEvidence(b.answer, retry)} (finish_reason "length", first ${first}, then ${retry}) | ${b.judgement.evidence}`,
      ),
    };
  }
  if (b.judgement.status === 'skipped')
    return {
      ...b,
      judgement: result(
        'inconclusive',
        `inconclusive: ${cutEvidence(a.answer, first)}; the retry at ${retry} got no answer: ${b.judgement.evidence}`,
      ),
    };
  return {
    ...b,
    judgement: result(
      b.judgement.status,
      `at ${retry} tokens (${first} cut the answer): ${b.judgement.evidence}`,
      b.judgement.fault,
    ),
  };
}

function checkResult(spec: CheckSpec, a: Answer): CheckResult {
  const failing = a.judgement.status !== 'pass';
  return {
    name: spec.name,
    status: a.judgement.status,
    evidence: a.judgement.evidence,
    ...(failing && a.request !== undefined ? { request: a.request } : {}),
    ...(failing && a.judgement.status !== 'skipped' ? { consequence: spec.consequence } : {}),
    ...(failing && a.judgement.fault ? { fault: a.judgement.fault } : {}),
  };
}

export async function verifyParsers(deps: VerifierDeps, expected: ExpectedParsers): Promise<VerifyResult> {
  const [found, info] = await Promise.all([
    models(deps),
    serverInfo(deps, engineById(expected.engine ?? 'sglang').http.serverInfoPaths),
  ]);
  const contextFromInfo = info?.ok ? contextLengthOf(info.value.body, 'context_length') : undefined;
  const budgets =
    contextFromInfo !== undefined
      ? chooseBudgets(contextFromInfo, '/server_info context_length')
      : chooseBudgets(
          found.maxModelLen,
          found.maxModelLen !== undefined ? '/v1/models max_model_len' : 'neither /server_info nor /v1/models gave one',
        );
  const limit = Math.max(
    1,
    Math.min(deps.concurrency ?? CONCURRENCY, maxRunningRequests(info) ?? Number.MAX_SAFE_INTEGER),
  );
  const limiter = new Limiter(limit);
  const answers = new Map<CheckName, Promise<Answer>>();
  const model = found.model;

  const runCheck = async (spec: CheckSpec): Promise<Answer> => {
    const r = spec.run;
    if (r.kind === 'flags') return { judgement: await flagsJudgement(deps, expected, info) };
    if (model === undefined)
      return { judgement: result('skipped', `no model name: ${found.reason ?? 'GET /v1/models gave none'}`) };
    const run: Run = { deps, limiter, model, budgets };
    if (r.kind === 'chat') {
      if (r.budget === 'thinkingOff')
        return ask(run, r.body(model, budgets.thinkingOff, r.stream), r.judge, deps.timeoutMs);
      return askWithinBudget(run, (n) => r.body(model, n, r.stream), r.judge);
    }
    if (r.kind === 'followUp') {
      const before = await answers.get(r.after);
      const first = before?.answer;
      const probe = first === undefined ? 'no answer' : r.body(model, first, budgets.first, r.stream);
      if (typeof probe === 'string') {
        // A first turn cut by the budget leaves the round trip undecided too.
        const status = before?.judgement.status === 'inconclusive' ? 'inconclusive' : 'skipped';
        return {
          judgement: result(
            status,
            `needs the call of "${r.after}" (${before?.judgement.status ?? 'not run'}): ${probe}`,
          ),
        };
      }
      return askWithinBudget(run, (n) => r.body(model, first, n, r.stream) as Record<string, unknown>, r.judge);
    }
    const samples: IdSample[] = [];
    for (const from of r.from) {
      const a = await answers.get(from);
      if (a?.answer !== undefined) samples.push({ from, calls: toolCallsOf(a.answer) });
    }
    return { judgement: judgeToolIds(samples, expected.toolCallParser) };
  };

  for (const spec of CHECKS) answers.set(spec.name, runCheck(spec));
  const checks = await Promise.all(CHECKS.map(async (spec) => checkResult(spec, await answers.get(spec.name)!)));
  return {
    checks,
    allPassed: checks.every((c) => c.status === 'pass'),
    ...(model !== undefined ? { model, budgets } : {}),
  };
}
