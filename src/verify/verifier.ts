/**
 * Parser verification against a ready server: the requests of issue 3 item 2, in sequence,
 * judged by ./judges. Each request has a timeout; a timeout or network error makes that check
 * 'skipped' (a slow model is not a parser failure). Never changes server state.
 */
import {
  judgeReasoning,
  judgeRunningFlags,
  judgeServerInfo,
  judgeStream,
  judgeThinkingOff,
  judgeToolCall,
  showJson,
  truncate,
  type CheckStatus,
  type ExpectedParsers,
  type Judgement,
  type ToolDefinition,
} from './judges';

export interface VerifierDeps {
  getJson(path: string, options?: { signal?: AbortSignal }): Promise<{ status: number; body: unknown }>;
  postJson(path: string, body: unknown, options?: { stream?: boolean; signal?: AbortSignal }): Promise<{ status: number; body: string }>;
  /** Per request. */
  readonly timeoutMs: number;
  /** The running server's command line (vLLM, which has no /server_info); undefined when there is none. */
  runningArgv?(): Promise<readonly string[] | undefined>;
}

export type CheckName = 'server flags' | 'reasoning' | 'thinking off' | 'tool calling' | 'reasoning (stream)' | 'tool calling (stream)';

export interface CheckResult {
  readonly name: CheckName;
  readonly status: CheckStatus;
  readonly evidence: string;
}

export interface VerifyResult {
  readonly checks: readonly CheckResult[];
  readonly allPassed: boolean;
  /** From GET /v1/models, when it answered. */
  readonly model?: string;
}

export const WEATHER_TOOL: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name, e.g. Paris' } },
      required: ['city'],
    },
  },
};

const REASONING_PROMPT = 'What is 17 * 23? Think it through, then answer with the number only.';
const TOOL_PROMPT = 'What is the weather in Paris right now? Use the get_weather tool.';

/** Request bodies, exported so the simulator and integration tests can match on them. */
export function reasoningRequest(model: string, stream = false): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: REASONING_PROMPT }], max_tokens: 1024, temperature: 0, stream };
}

export function thinkingOffRequest(model: string): Record<string, unknown> {
  return { ...reasoningRequest(model), max_tokens: 64, chat_template_kwargs: { thinking: false } };
}

export function toolRequest(model: string, stream = false): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: TOOL_PROMPT }], tools: [WEATHER_TOOL], max_tokens: 1024, temperature: 0, stream };
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

async function attempt<T>(deps: VerifierDeps, what: string, f: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await withTimeout(deps.timeoutMs, f) };
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

async function modelName(deps: VerifierDeps): Promise<{ model: string } | { reason: string }> {
  const r = await attempt(deps, 'GET /v1/models', (signal) => deps.getJson('/v1/models', { signal }));
  if (!r.ok) return { reason: r.skipped.evidence };
  const body = parseMaybeJson(r.value.body) as { data?: { id?: unknown }[] } | undefined;
  const id = body?.data?.[0]?.id;
  if (r.value.status !== 200 || typeof id !== 'string' || id === '') {
    return { reason: truncate(`GET /v1/models: HTTP ${r.value.status} without a model id: ${showJson(r.value.body)}`) };
  }
  return { model: id };
}

async function serverInfoCheck(deps: VerifierDeps, expected: ExpectedParsers): Promise<Judgement> {
  if (expected.engine === 'vllm') {
    const runningArgv = deps.runningArgv;
    if (!runningArgv) return { status: 'skipped', evidence: 'vLLM has no /server_info and the process is not readable here' };
    const r = await attempt(deps, 'reading the running command line', () => runningArgv());
    return r.ok ? judgeRunningFlags(r.value, expected) : r.skipped;
  }
  let r = await attempt(deps, 'GET /server_info', (signal) => deps.getJson('/server_info', { signal }));
  if (r.ok && r.value.status === 404) r = await attempt(deps, 'GET /get_server_info', (signal) => deps.getJson('/get_server_info', { signal }));
  if (!r.ok) return r.skipped;
  return httpJudgement(r.value.status, r.value.body) ?? judgeServerInfo(parseMaybeJson(r.value.body), expected);
}

async function chatCheck(
  deps: VerifierDeps,
  body: Record<string, unknown>,
  judge: (resp: unknown) => Judgement,
): Promise<Judgement> {
  const stream = body.stream === true;
  const what = `POST /v1/chat/completions${stream ? ' (stream)' : ''}`;
  const r = await attempt(deps, what, (signal) => deps.postJson('/v1/chat/completions', body, { stream, signal }));
  if (!r.ok) return r.skipped;
  const http = httpJudgement(r.value.status, parseMaybeJson(r.value.body));
  if (http) return http;
  return stream ? judgeStream(r.value.body, judge) : judge(parseMaybeJson(r.value.body));
}

export async function verifyParsers(deps: VerifierDeps, expected: ExpectedParsers): Promise<VerifyResult> {
  const checks: CheckResult[] = [];
  const add = (name: CheckName, j: Judgement): void => {
    checks.push({ name, status: j.status, evidence: j.evidence });
  };
  const found = await modelName(deps);
  add('server flags', await serverInfoCheck(deps, expected));
  const chats: [CheckName, (model: string) => Record<string, unknown>, (resp: unknown) => Judgement][] = [
    ['reasoning', (m) => reasoningRequest(m), judgeReasoning],
    ['thinking off', (m) => thinkingOffRequest(m), judgeThinkingOff],
    ['tool calling', (m) => toolRequest(m), (resp) => judgeToolCall(resp, WEATHER_TOOL)],
    ['reasoning (stream)', (m) => reasoningRequest(m, true), judgeReasoning],
    ['tool calling (stream)', (m) => toolRequest(m, true), (resp) => judgeToolCall(resp, WEATHER_TOOL)],
  ];
  for (const [name, request, judge] of chats) {
    if ('reason' in found) add(name, { status: 'skipped', evidence: truncate(`no model name: ${found.reason}`) });
    else add(name, await chatCheck(deps, request(found.model), judge));
  }
  return {
    checks,
    allPassed: checks.every((c) => c.status === 'pass'),
    ...('model' in found ? { model: found.model } : {}),
  };
}

/** Fixed-width table for the log. */
export function formatTable(result: VerifyResult, evidenceWidth = 120): string {
  const nameWidth = Math.max(5, ...result.checks.map((c) => c.name.length));
  const row = (a: string, b: string, c: string): string => `${a.padEnd(nameWidth)}  ${b.padEnd(7)}  ${c}`.trimEnd();
  const lines = [row('check', 'result', 'evidence'), row('-'.repeat(nameWidth), '-'.repeat(7), '-'.repeat(8))];
  for (const c of result.checks) lines.push(row(c.name, c.status, truncate(c.evidence, evidenceWidth)));
  if (result.model !== undefined) lines.push(`model: ${result.model}`);
  return lines.join('\n');
}

/** One line for a notification or the status bar tooltip. */
export function summarize(result: VerifyResult): string {
  if (result.allPassed) return 'Parsers verified';
  const failed = result.checks.filter((c) => c.status === 'fail').map((c) => c.name);
  const skipped = result.checks.filter((c) => c.status === 'skipped').map((c) => c.name);
  if (failed.length > 0) return `Parser check failed: ${failed.join(', ')}${skipped.length > 0 ? ` (skipped: ${skipped.join(', ')})` : ''}`;
  return `Parser check incomplete, skipped: ${skipped.join(', ')}`;
}
