/**
 * The ETA after the weights (the processing after the last shard, KV cache, JIT compiles, CUDA
 * graphs, warm-up): history's after-weights time less what has passed; a step with its own bar
 * (the DeepGEMM warm-up, the CUDA-graph batches) at the rate of its bar; a quiet step nothing
 * has timed, about half as long again as it has taken so far. Pure.
 */
import { activityLabel } from '../../engine/activity';
import {
  barRateReason,
  graphBatchesReason,
  graphBatchesUntimedReason,
  overrunReason,
  thisPhase,
  typicalStepReason,
  untimedStepReason,
} from '../../present/words/etaWords';
import type { ActivityKind } from '../../engine/events';
import type { LoadState } from '../state/loadStateTypes';
import { afterPlanMs, DEFAULT_AFTER, foreseenMs, HISTORY_AFTER, MIN_LEFT_MS, sourceOf, type RawEta } from './etaPlan';

/** A quiet step past its plan: expected to last this share of its time so far again (low, middle, high). */
const OVERRUN = [0.5, 1.5, 3] as const;
/**
 * A quiet step (no bar) that no previous load has timed: at least this is left while it goes on.
 * Under it a short estimate could not grow with the step without jumping: 75 s counting down
 * 10 s and then 1.4x is no more than the step's own growth (1.5x its time so far) from there on.
 */
const QUIET_FLOOR_MS = 75_000;
/**
 * Quiet steps whose length the engine's published logs give, for a first load: SGLang's piecewise
 * CUDA graphs took 37 and 46 s in the servekit logs (test/fixtures/real-logs), for an 8B and a 70B
 * model alike. Past it the step is expected to last TYPICAL_OVERRUN of its time so far again.
 */
const TYPICAL_STEP_MS: Readonly<Partial<Record<ActivityKind, number>>> = { 'piecewise-graphs': 45_000 };
const TYPICAL_OVERRUN = 0.5;
/** A quiet step history's plan gives less than this is one history has not timed (a hand-over of seconds is no step). */
const KNOWN_STEP_MS = 10_000;
/** A CUDA-graph batch before the capture has timed two of its own (no history): its share of the plan, at least this. */
const DEFAULT_BATCH_MS = 500;

/** When the after-weights part began: the first phase after the weights, else a quiet step past the last shard. */
export function afterStartOf(state: LoadState, now: number): number | undefined {
  const t = state.phaseTimes;
  const phaseAt = t['allocating KV cache'] ?? t['capturing CUDA graphs'] ?? t['warming up'];
  if (phaseAt !== undefined) return phaseAt;
  if (state.activity?.kind === 'post-shards') return state.activity.since;
  const total = state.io?.totalBytes ?? state.prior?.totalBytes;
  if (state.phase === 'loading weights' && total !== undefined && state.io && state.io.readBytes >= total)
    return state.ioSamples.find((s) => s.bytes >= total)?.at ?? now;
  return undefined;
}

/** Ms left of a step that shows its own bar, at the bar's rate since the step began. */
export function barLeft(done: number | undefined, total: number | undefined, elapsedMs: number): number | undefined {
  // (1 of 16384 done says nothing of the rate yet)
  if (done === undefined || total === undefined || done < total * 0.01 || total <= done || elapsedMs <= 0)
    return undefined;
  return (elapsedMs * (total - done)) / done;
}

/** After the weights: the plan's time less what passed, a bar's rate, or a quiet step's own length. */
export function afterWeights(state: LoadState, now: number, afterStart: number, key: string): RawEta {
  const source = sourceOf(state);
  const weightsAt = state.phaseTimes['loading weights'];
  let plan = afterPlanMs(state, weightsAt !== undefined ? Math.max(0, afterStart - weightsAt) : 0);
  // Still in the weights phase (processing after the last shard): what history's weights phase has left.
  // (history's time from the last byte or shard to the phase's end; older records: its weights phase's end)
  const afterShards = source === 'history' ? state.prior?.afterShardsMs : undefined;
  const historyWeights = source === 'history' ? state.prior?.weightsPhaseMs : undefined;
  if (state.phase === 'loading weights' && afterShards !== undefined) plan += afterShards;
  else if (state.phase === 'loading weights' && historyWeights !== undefined && weightsAt !== undefined)
    plan += Math.max(0, weightsAt + historyWeights - afterStart);
  const share = source === 'history' ? HISTORY_AFTER : DEFAULT_AFTER;
  const elapsed = Math.max(0, now - afterStart);
  const planLeft = plan - elapsed;
  const activity = state.activity;
  const phaseAt = state.phase === 'loading weights' ? undefined : state.phaseTimes[state.phase ?? 'starting'];
  const stepSince = activity?.since ?? Math.max(afterStart, phaseAt ?? afterStart);
  const stepElapsed = Math.max(0, now - stepSince);
  // The rest of the plan after a step, at least a tenth of the plan (warm-up, the first completion).
  const tail = Math.max(MIN_LEFT_MS, plan * 0.1);

  const bar = activity ? barLeft(activity.done, activity.total, stepElapsed) : undefined;
  if (bar !== undefined && activity) {
    const mid = bar + tail;
    return {
      midMs: mid,
      lowMs: bar * 0.8 + tail * share[0],
      highMs: bar * 1.4 + Math.max(tail, planLeft) * share[1],
      basis: 'step bar',
      source,
      reason: barRateReason(activityLabel(activity)),
      key,
    };
  }
  const graphs = state.cudaGraphBatches;
  const graphsAt = state.phaseTimes['capturing CUDA graphs'];
  if (!activity && state.phase === 'capturing CUDA graphs' && graphs && graphsAt !== undefined) {
    // At the rate since the first batch seen done (a JIT compile before it is not a batch's time).
    const first = graphs.firstDoneAt;
    const left =
      first !== undefined && graphs.done - first.done >= 2
        ? barLeft(graphs.done - first.done, graphs.total - first.done, now - first.at)
        : undefined;
    if (left !== undefined) {
      return {
        midMs: left + tail,
        lowMs: left * 0.7 + tail * share[0],
        highMs: left * 1.5 + tail * share[1],
        basis: 'CUDA graph batches',
        source,
        reason: graphBatchesReason(graphs.done, graphs.total),
        key,
      };
    }
  }
  // A bar at its end (the graphs captured, the compile done): what is left is the plan's tail.
  const barDone =
    (activity?.done !== undefined && activity.total !== undefined && activity.done >= activity.total) ||
    (!activity && state.phase === 'capturing CUDA graphs' && graphs !== undefined && graphs.done >= graphs.total);
  if (barDone) {
    const mid = Math.max(tail, planLeft);
    return { midMs: mid, lowMs: tail * 0.5, highMs: mid * 1.5, basis: 'plan', source, key };
  }
  // How long history's plan gives this quiet step: the post-shard processing of the previous
  // loads, else what the plan had left when the step began beyond its tail.
  const sinceAfter = Math.max(0, stepSince - afterStart);
  const postShards = activity?.kind === 'post-shards';
  const stepPlan = source !== 'history' ? 0 : postShards ? (afterShards ?? 0) : Math.max(0, plan - sinceAfter - tail);
  if (activity && stepPlan < KNOWN_STEP_MS) {
    // A quiet step nothing has timed: at least QUIET_FLOOR_MS, then about half as long again as
    // it has taken so far, with the rest of the plan after it.
    const rest = Math.max(tail, postShards ? plan - stepPlan : plan - sinceAfter);
    const what = activityLabel(activity);
    const hasBar = activity.total !== undefined;
    const foreseen = foreseenMs(state, activity.kind);
    const typical = foreseen ?? TYPICAL_STEP_MS[activity.kind];
    if (typical !== undefined) {
      // (continuous where the overrun takes over: typical - e = TYPICAL_OVERRUN * e)
      const stepLeft = Math.max(typical - stepElapsed, stepElapsed * TYPICAL_OVERRUN);
      return {
        midMs: rest + stepLeft,
        lowMs: rest * share[0] + Math.max(MIN_LEFT_MS * 0.5, typical * 0.6 - stepElapsed, stepElapsed * 0.25),
        highMs: rest * share[1] + Math.max(typical * 1.5 - stepElapsed, stepElapsed),
        basis: 'step so far',
        source,
        reason: typicalStepReason(what, hasBar, foreseen !== undefined, typical, stepElapsed),
        key,
      };
    }
    return {
      midMs: Math.max(QUIET_FLOOR_MS, rest + stepElapsed * OVERRUN[1]),
      lowMs: rest * share[0] + stepElapsed * OVERRUN[0],
      highMs: rest * share[1] + Math.max(QUIET_FLOOR_MS, stepElapsed * OVERRUN[2]),
      basis: 'step so far',
      source,
      reason: untimedStepReason(what, hasBar, source, stepElapsed),
      key,
    };
  }
  if (!activity && source === 'defaults' && state.phase === 'capturing CUDA graphs' && graphs && graphs.total > 0) {
    // The batches not yet timed: the plan's share of them, a batch at least DEFAULT_BATCH_MS.
    const batches = Math.max(tail, (graphs.total - graphs.done) * DEFAULT_BATCH_MS + tail);
    if (batches > planLeft)
      return {
        midMs: batches,
        lowMs: Math.max(MIN_LEFT_MS, planLeft) * share[0],
        highMs: batches * share[1],
        basis: 'defaults',
        source,
        reason: graphBatchesUntimedReason(graphs.total),
        key,
      };
  }
  // History knows how long this step took last time: past its plan only when the plan is spent.
  // The defaults do not: a phase is expected to last about half as long again as it has so far.
  const overrun =
    source === 'history' ? planLeft < MIN_LEFT_MS : planLeft < Math.max(MIN_LEFT_MS, stepElapsed * OVERRUN[1]);
  if (!overrun) {
    return {
      midMs: planLeft,
      lowMs: Math.max(MIN_LEFT_MS * 0.5, plan * share[0] - elapsed),
      highMs: Math.max(planLeft, plan * share[1] - elapsed),
      basis: source === 'history' ? 'history' : 'defaults',
      source,
      key,
    };
  }
  // Past the plan, and still working: about as long again as the step has taken so far.
  const mid =
    source === 'history'
      ? MIN_LEFT_MS - planLeft * OVERRUN[1]
      : Math.max(MIN_LEFT_MS, stepElapsed * OVERRUN[1], planLeft);
  // (continuous where it begins: planLeft equals stepElapsed * OVERRUN[1] there)
  const what = activity ? activityLabel(activity) : (state.phase ?? thisPhase());
  return {
    midMs: mid,
    lowMs: Math.max(MIN_LEFT_MS * 0.5, stepElapsed * OVERRUN[0]),
    highMs: Math.max(mid * 1.5, stepElapsed * OVERRUN[2] + tail),
    basis: 'step so far',
    source,
    reason: overrunReason(what, source, stepElapsed),
    key: `${key}/overrun`,
  };
}
