/**
 * One chat check's request and its verdict: sent when a slot is free (./limiter), its stream
 * counted as it arrives (./progressBoard), judged plain or streamed; an answer cut by max_tokens
 * asked again at the retry budget; a request out of time inconclusive when the model was seen
 * still at work (./progress), skipped when nothing came.
 */
import { finishReasonOf } from './agentJudges';
import type { Budgets } from './budget';
import type { CheckName } from './checks';
import { result, truncate, type Judgement } from './judges';
import type { Limiter } from './limiter';
import { timeoutJudgement } from './progress';
import type { ProgressBoard } from './progressBoard';
import { attempt, httpJudgement, parseMaybeJson } from './requests';
import { assembleStream, judgeStream } from './streamJudge';
import type { InconclusiveCause, VerifierDeps } from './verifyTypes';
import type { Fact } from '../present/words/verifyFindings';

/** A retry may take as long as the slowest server we support (100 token/s) needs for its budget. */
const RETRY_TOKENS_PER_SECOND = 100;

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

export interface Answer {
  readonly judgement: Judgement;
  /** The answer as a chat completion (a stream assembled), when there was one to judge. */
  readonly answer?: unknown;
  readonly request?: string;
  /** Inconclusive because the time ran out. */
  readonly cause?: InconclusiveCause;
}

export interface Run {
  readonly deps: VerifierDeps;
  readonly limiter: Limiter;
  readonly model: string;
  readonly budgets: Budgets;
  readonly board: ProgressBoard;
}

/** The same request streamed, whose progress explains a plain request out of time. */
function streamedTwin(name: CheckName): CheckName {
  return `${name} (stream)` as CheckName;
}

export async function ask(
  run: Run,
  name: CheckName,
  body: Record<string, unknown>,
  judge: (resp: unknown) => Judgement,
  timeoutMs: number,
  retry = false,
): Promise<Answer> {
  const stream = body.stream === true;
  const what = `POST /v1/chat/completions${stream ? ' (stream)' : ''}`;
  const request = describeRequest(body);
  const budget = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  const r = await run.limiter.run(async () => {
    const onText = run.board.asked(name, budget, retry);
    try {
      return await attempt(timeoutMs, what, (signal) =>
        run.deps.postJson('/v1/chat/completions', body, {
          stream,
          signal,
          timeoutMs,
          ...(stream ? { onText, onResponse: () => run.board.responded(name) } : {}),
        }),
      );
    } finally {
      run.board.ended(name);
    }
  });
  if (!r.ok) {
    const slow = r.timedOut
      ? timeoutJudgement(
          timeoutMs,
          run.board.of(name),
          stream ? undefined : run.board.of(streamedTwin(name)),
          run.board.clock(),
        )
      : undefined;
    return slow ? { judgement: slow, request, cause: 'time' } : { judgement: r.skipped, request };
  }
  if (r.value.truncated === true)
    return {
      judgement: result('inconclusive', { kind: 'tooLong', bytes: r.value.body.length }),
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

/** An answer cut at `budget`, then what came of it, before the facts of its judgement. */
function cut(answer: unknown, budget: number, then: Extract<Fact, { kind: 'cut' }>['then'], inner: Judgement): Fact {
  const content = (answer as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  const reasoningOnly = typeof content !== 'string' || content.trim() === '';
  return { kind: 'cut', budget, reasoningOnly, then, inner: inner.facts };
}

/**
 * Asks with the first budget; an answer cut by it (finish_reason "length") that does not pass is
 * asked again with the retry budget, and is inconclusive when that is cut too.
 */
export async function askWithinBudget(
  run: Run,
  name: CheckName,
  body: (maxTokens: number) => Record<string, unknown>,
  judge: (resp: unknown) => Judgement,
): Promise<Answer> {
  const first = run.budgets.first;
  const a = await ask(run, name, body(first), judge, run.deps.timeoutMs);
  if (a.judgement.status === 'pass' || a.answer === undefined || finishReasonOf(a.answer) !== 'length') return a;
  const retry = run.budgets.retry;
  if (retry === undefined) {
    return {
      ...a,
      judgement: result('inconclusive', cut(a.answer, first, { kind: 'noRoom' }, a.judgement)),
    };
  }
  const timeoutMs = Math.max(run.deps.timeoutMs, Math.ceil((retry / RETRY_TOKENS_PER_SECOND) * 1000));
  const b = await ask(run, name, body(retry), judge, timeoutMs, true);
  if (b.answer !== undefined && finishReasonOf(b.answer) === 'length' && b.judgement.status !== 'pass') {
    return {
      ...b,
      judgement: result('inconclusive', cut(b.answer, retry, { kind: 'cutAgain', first, retry }, b.judgement)),
    };
  }
  if (b.cause === 'time')
    return {
      ...b,
      judgement: result('inconclusive', cut(a.answer, first, { kind: 'retryOutOfTime', retry }, b.judgement)),
    };
  if (b.judgement.status === 'skipped')
    return {
      ...b,
      judgement: result('inconclusive', cut(a.answer, first, { kind: 'retryUnanswered', retry }, b.judgement)),
    };
  return {
    ...b,
    judgement: result(
      b.judgement.status,
      { kind: 'retried', first, retry, inner: b.judgement.facts },
      b.judgement.fault,
    ),
  };
}
