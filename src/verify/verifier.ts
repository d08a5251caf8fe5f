/**
 * Parser verification against a ready server: the checks of ./checks, their independent requests
 * run concurrently (at most CONCURRENCY at once, ./ask), judged by ./judges and ./agentJudges.
 * A network error, or a timeout before anything came, makes a check 'skipped' (a slow model is not
 * a parser failure); a timeout while the model was seen still reasoning or answering makes it
 * 'inconclusive', the reason said; an answer cut by max_tokens is retried at a bigger budget and
 * stays 'inconclusive' when cut again. Where it is goes to `onProgress` and, for checks that wait
 * long, to the log (./progressBoard). Never changes server state.
 */
import { judgeToolIds, toolCallsOf, type IdSample } from './agentJudges';
import { ask, askWithinBudget, type Answer, type Run } from './ask';
import { chooseBudgets, contextLengthOf } from './budget';
import { CHECK_PROMPTS, CHECKS, type CheckName, type CheckSpec } from './checks';
import { result, type ExpectedParsers } from './judges';
import { Limiter } from './limiter';
import { ProgressBoard, type ProgressOptions } from './progressBoard';
import { flagsJudgement, maxRunningRequests, models, serverInfo } from './requests';
import type { CheckResult, VerifierDeps, VerifyResult } from './verifyTypes';
import { engineById } from '../engine/engine';
import { checkWords } from '../present/words/checkWords';
import { evidenceText } from '../present/words/findingWords';

export { verificationVerdictOf, type VerificationVerdict } from './verdict';
export { WEATHER_TOOL, reasoningRequest, thinkingOffRequest, toolRequest, type CheckName } from './checks';
export { describeRequest } from './ask';
export type { CheckResult, InconclusiveCause, VerifierDeps, VerifyResult } from './verifyTypes';
export type { VerifyProgress } from './progress';
export type { ProgressOptions } from './progressBoard';

/** 8 at once: 13 chat requests end in two rounds (docs/verification.md). */
export const CONCURRENCY = 8;

function checkResult(spec: CheckSpec, a: Answer): CheckResult {
  const failing = a.judgement.status !== 'pass';
  return {
    name: spec.name,
    status: a.judgement.status,
    evidence: evidenceText(a.judgement.facts),
    ...(failing && a.request !== undefined ? { request: a.request } : {}),
    ...(failing && a.judgement.status !== 'skipped'
      ? { consequence: checkWords(spec.name, CHECK_PROMPTS).consequence }
      : {}),
    ...(failing && a.judgement.fault ? { fault: a.judgement.fault } : {}),
    ...(a.judgement.status === 'inconclusive' && a.cause ? { cause: a.cause } : {}),
  };
}

function streams(spec: CheckSpec): boolean {
  return (spec.run.kind === 'chat' || spec.run.kind === 'followUp') && spec.run.stream;
}

export async function verifyParsers(
  deps: VerifierDeps,
  expected: ExpectedParsers,
  progress: ProgressOptions = {},
): Promise<VerifyResult> {
  const board = new ProgressBoard(
    CHECKS.map((spec) => ({ name: spec.name, stream: streams(spec) })),
    progress,
  );
  try {
    return await verifyOn(deps, expected, board);
  } finally {
    board.dispose();
  }
}

async function verifyOn(deps: VerifierDeps, expected: ExpectedParsers, board: ProgressBoard): Promise<VerifyResult> {
  board.asked('server flags');
  const [found, info] = await Promise.all([
    models(deps),
    serverInfo(deps, engineById(expected.engine ?? 'sglang').http.serverInfoPaths),
  ]);
  const contextFromInfo = info?.ok ? contextLengthOf(info.value.body, 'context_length') : undefined;
  const budgets =
    contextFromInfo !== undefined
      ? chooseBudgets(contextFromInfo, '/server_info context_length')
      : chooseBudgets(found.maxModelLen, found.maxModelLen !== undefined ? '/v1/models max_model_len' : undefined);
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
      return { judgement: result('skipped', { kind: 'noModel', ...(found.reason ? { reason: found.reason } : {}) }) };
    const run: Run = { deps, limiter, model, budgets, board };
    if (r.kind === 'chat') {
      if (r.budget === 'thinkingOff')
        return ask(run, spec.name, r.body(model, budgets.thinkingOff, r.stream), r.judge, deps.timeoutMs);
      return askWithinBudget(run, spec.name, (n) => r.body(model, n, r.stream), r.judge);
    }
    if (r.kind === 'followUp') {
      const before = await answers.get(r.after);
      const first = before?.answer;
      const probe = first === undefined ? 'noAnswer' : r.body(model, first, budgets.first, r.stream);
      if (typeof probe === 'string') {
        // A first turn cut by the budget leaves the round trip undecided too.
        const status = before?.judgement.status === 'inconclusive' ? 'inconclusive' : 'skipped';
        return {
          judgement: result(status, {
            kind: 'needsFirstTurn',
            after: r.after,
            ...(before ? { status: before.judgement.status } : {}),
            why: probe,
          }),
          ...(status === 'inconclusive' && before?.cause ? { cause: before.cause } : {}),
        };
      }
      return askWithinBudget(
        run,
        spec.name,
        (n) => r.body(model, first, n, r.stream) as Record<string, unknown>,
        r.judge,
      );
    }
    const samples: IdSample[] = [];
    for (const from of r.from) {
      const a = await answers.get(from);
      if (a?.answer !== undefined) samples.push({ from, calls: toolCallsOf(a.answer) });
    }
    return { judgement: judgeToolIds(samples, expected.toolCallParser) };
  };

  // The requests share the tunnel's few channels: thinking off first (a short answer without
  // reasoning), then the streams, which say where they are as they go (and why a plain twin, the
  // same request, is slow), then the plain requests. The table keeps its order.
  const quick = (spec: CheckSpec) => spec.run.kind === 'chat' && spec.run.budget === 'thinkingOff';
  const startOrder = [
    ...CHECKS.filter(quick),
    ...CHECKS.filter((spec) => !quick(spec) && streams(spec)),
    ...CHECKS.filter((spec) => !quick(spec) && !streams(spec)),
  ];
  for (const spec of startOrder)
    answers.set(
      spec.name,
      runCheck(spec).finally(() => board.finished(spec.name)),
    );
  const checks = await Promise.all(CHECKS.map(async (spec) => checkResult(spec, await answers.get(spec.name)!)));
  return {
    checks,
    allPassed: checks.every((c) => c.status === 'pass'),
    ...(model !== undefined ? { model, budgets } : {}),
  };
}
