/**
 * The ETA of the whole load (time left until `ready`), every phase included, as a range. Pure:
 * it reads the reducer's state and an explicit clock; loadProgress.ts calls it at each signal and
 * damps what it says (etaDamp.ts) before the state keeps it.
 *
 * - Weights: the bytes (or shards) left at the live rate (eta.ts `estimateEta`), the phases after
 *   them from this server's previous loads (history) or from defaults (model size, GPU count).
 * - Before the weights (or before the bytes say enough): the model's bytes at the prior's rates
 *   (history's, else the defaults), split by the page-cache residency measured before the restart.
 * - After the weights (processing after the last shard, KV cache, JIT compiles, CUDA graphs,
 *   warm-up): history's after-weights time, less what has passed; a step with its own bar (the
 *   DeepGEMM warm-up, the CUDA-graph batches) goes at the rate of its bar. A quiet step that has
 *   outrun the plan is expected to last about as long again as it has so far (a wide range), so
 *   the ETA never sits at `0s left` while the engine works.
 * The range's width says how sure it is: narrow from history, wide from defaults, wide while
 * little of the weights is read, wide during a quiet step with no bar.
 */
import { activityLabel } from '../engine/activity';
import type { ActivityKind } from '../engine/events';
import {
  DEFAULT_AFTER_WEIGHTS_MIN_MS,
  DEFAULT_AFTER_WEIGHTS_SHARE,
  DEFAULT_COLD_BPS,
  DEFAULT_WARM_BPS,
  DISPROVED_GRACE_MS,
  estimateEta,
  formatBytes,
  formatRate,
  lastGrowth,
  MIN_BYTES_FRACTION,
  NOISE_SHARE,
  RATE_WINDOW_MS,
  sampleIntervalMs,
  etaText,
  type Eta,
} from './eta';
import type { LoadState } from './loadStateTypes';
import type { ShownEta } from './etaDamp';

/** Where the plan of the phases comes from: this server's previous loads, or the defaults. */
export type EtaSource = 'history' | 'defaults';

/** The estimate before damping: milliseconds left (middle, low, high) from `now`. */
export interface RawEta {
  readonly midMs: number;
  readonly lowMs: number;
  readonly highMs: number;
  readonly basis: string;
  readonly source: EtaSource;
  /** Why it is what it is, when something moved it (said in the tooltip). */
  readonly reason?: string;
  /** Phase (and quiet step) it was made in: a change of it lets the ETA move freely. */
  readonly key: string;
}

/** Share of the after-weights time a range from history spans, below and above. */
const HISTORY_AFTER = [0.85, 1.2] as const;
/** The same without history (defaults from the model size and GPU count). */
const DEFAULT_AFTER = [0.6, 2.2] as const;
/** Start of the process to the first weights read, without history (imports, torch distributed init). */
const DEFAULT_STARTING_MS = 15_000;
/** A quiet step past its plan: expected to last this share of its time so far again (low, middle, high). */
const OVERRUN = [0.5, 1.5, 3] as const;
/**
 * Defaults for the phases after the weights (KV cache, CUDA graphs, warm-up, with the JIT caches
 * of an earlier start): a base, a term that grows with the model's size, one per doubling of the
 * GPU count, fitted to sg-llmsinclouds-qwq32b (65 GB on 4 GPUs: 12 s from "Load weight end" to
 * ready); for Kimi K2.6 (548 GB on 8 GPUs) this gives 61 s. A first start's JIT compiles are quiet
 * steps of their own (QUIET_FLOOR_MS).
 */
const AFTER_BASE_MS = 3_500;
const AFTER_PER_GB_MS = 100;
const AFTER_PER_GPU_DOUBLING_MS = 1_000;
/** Nothing less than this is left while a phase goes on (the ETA does not sit at 0). */
const MIN_LEFT_MS = 3_000;
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
/** The weights' first seconds: no ETA until the bytes give a rate (a forecast the reads may disprove at once). */
const WEIGHTS_MEASURE_MS = 12_000;

function loadStart(state: LoadState): number {
  return state.restartRequestedAt ?? state.processStartedAt ?? state.watchStartedAt;
}

export function sourceOf(state: LoadState): EtaSource {
  return (state.prior?.loads ?? 0) >= 1 && state.prior?.afterWeightsMs !== undefined ? 'history' : 'defaults';
}

/** "from this server's 3 previous loads", "from defaults for a 41.2 GB model on 8 GPUs (no previous load)". */
export function sourceText(state: LoadState, source: EtaSource): string {
  if (source === 'history') {
    const n = state.prior?.loads ?? 0;
    return `from this server's ${n === 1 ? 'previous load' : `${n} previous loads`}`;
  }
  const total = state.io?.totalBytes ?? state.prior?.totalBytes;
  const gpus = state.gpu?.perGpu.length;
  const what = [
    total !== undefined ? `a ${formatBytes(total)} model` : undefined,
    gpus ? `${gpus} GPU${gpus === 1 ? '' : 's'}` : undefined,
  ].filter(Boolean);
  return `from defaults${what.length ? ` for ${what.join(' on ')}` : ''} (no previous load)`;
}

/**
 * The after-weights time the plan gives: history's, else from the model's size and the GPU
 * count (KV cache, graph capture and warm-up grow with the model's layers and the group, not with
 * how fast its files were read), else a share of the weights time.
 */
function afterPlanMs(state: LoadState, weightsTotalMs: number): number {
  const prior = state.prior;
  if (prior?.afterWeightsMs !== undefined) return prior.afterWeightsMs;
  const gpus = state.gpu?.perGpu.length ?? 1;
  const perGroup = AFTER_PER_GPU_DOUBLING_MS * Math.log2(Math.max(1, gpus));
  const total = state.io?.totalBytes ?? prior?.totalBytes;
  if (total !== undefined && total > 0) return AFTER_BASE_MS + AFTER_PER_GB_MS * (total / 1e9) + perGroup;
  return Math.max(DEFAULT_AFTER_WEIGHTS_MIN_MS, weightsTotalMs * DEFAULT_AFTER_WEIGHTS_SHARE) + perGroup;
}

/** Weights time from the model's size at the prior's (or default) rates, split by the residency. */
function forecastWeightsMs(state: LoadState): number | undefined {
  const prior = state.prior;
  const total = state.io?.totalBytes ?? prior?.totalBytes;
  if (total === undefined || total <= 0) return undefined;
  const resident = Math.min(total, Math.max(0, prior?.residentBytes ?? 0));
  const cold = (total - resident) / (prior?.coldBps ?? DEFAULT_COLD_BPS);
  const warm = resident / (prior?.warmBps ?? DEFAULT_WARM_BPS);
  return (cold + warm) * 1000;
}

/** Before the weights (or before the bytes say enough): the model at the prior's rates. */
function forecast(state: LoadState, now: number, key: string): RawEta | undefined {
  const source = sourceOf(state);
  const weightsTotal = forecastWeightsMs(state);
  const prior = state.prior;
  const weightsAt = state.phaseTimes['loading weights'];
  let startingLeft = 0;
  let weightsLeft: number;
  if (weightsTotal === undefined) {
    // No size known: history's whole-load spread, else nothing honest to say.
    const spread = prior?.totalMsRange;
    if (!spread) return undefined;
    const elapsed = now - loadStart(state);
    const mid = Math.max(MIN_LEFT_MS, (spread[0] + spread[1]) / 2 - elapsed);
    return {
      midMs: mid,
      lowMs: Math.max(MIN_LEFT_MS, spread[0] - elapsed) * 0.9,
      highMs: Math.max(mid, spread[1] - elapsed) * 1.15,
      basis: 'history',
      source,
      key,
    };
  }
  if (weightsAt === undefined) {
    const starting = source === 'history' && prior?.startingMs !== undefined ? prior.startingMs : DEFAULT_STARTING_MS;
    startingLeft = Math.max(MIN_LEFT_MS, starting - (now - loadStart(state)));
    weightsLeft = weightsTotal;
  } else {
    const total = state.io?.totalBytes ?? prior?.totalBytes;
    const read = total && state.io ? Math.min(1, state.io.readBytes / total) : 0;
    const byBytes = weightsTotal * (1 - read);
    weightsLeft = Math.max(MIN_LEFT_MS, Math.min(byBytes, Math.max(weightsTotal - (now - weightsAt), byBytes * 0.5)));
  }
  const after = afterPlanMs(state, weightsTotal) + (source === 'history' ? (prior?.afterShardsMs ?? 0) : 0);
  const rates = prior?.coldBps !== undefined ? [0.7, 1.5] : [0.4, 2.5];
  const afterShare = source === 'history' ? HISTORY_AFTER : DEFAULT_AFTER;
  const mid = startingLeft + weightsLeft + after;
  return {
    midMs: mid,
    lowMs: startingLeft * 0.7 + weightsLeft * rates[0]! + after * afterShare[0],
    highMs: startingLeft * 1.5 + weightsLeft * rates[1]! + after * afterShare[1],
    basis: prior?.coldBps !== undefined ? 'history' : 'defaults',
    source,
    key,
  };
}

/** The weights with a live estimate: its own middle, a range that narrows as the bytes are read. */
function weights(state: LoadState, eta: Eta, now: number, key: string): RawEta {
  const source = sourceOf(state);
  const total = state.io?.totalBytes ?? state.prior?.totalBytes;
  const read = total && state.io ? Math.min(1, state.io.readBytes / total) : 0;
  // Rates from history that the load bears out (else the live rate alone) narrow it.
  const known = state.prior?.coldBps !== undefined && source === 'history';
  const spread = (known ? 0.04 + 0.12 * (1 - read) : 0.06 + 0.3 * (1 - read)) + (eta.basis === 'shards' ? 0.1 : 0);
  const afterShare = source === 'history' ? HISTORY_AFTER : DEFAULT_AFTER;
  const resident = state.prior?.residentBytes;
  const past = state.prior?.coldBps;
  const rate = eta.rateBps;
  const reason = eta.residencyDisproved
    ? `reads slowed: these files were not in the page cache (the forecast said ${total && resident !== undefined ? Math.round((Math.min(resident, total) / total) * 100) : '?'} % cached)`
    : past !== undefined && rate !== undefined && (rate < past * 0.7 || rate > past * 1.4) && eta.basis === 'bytes'
      ? `reads ${rate < past ? 'slowed' : 'sped up'}: ${formatRate(rate)} now, ${formatRate(past)} in previous loads`
      : undefined;
  // The phases after the weights as the plan has them (the defaults count the GPUs, eta.ts does not).
  const weightsAt = state.phaseTimes['loading weights'];
  const after =
    state.prior?.afterWeightsMs !== undefined || weightsAt === undefined
      ? eta.afterWeightsMs
      : afterPlanMs(state, Math.max(0, now - weightsAt) + eta.weightsMs);
  return {
    midMs: eta.weightsMs + after,
    lowMs: eta.weightsMs * (1 - spread) + after * afterShare[0],
    highMs: eta.weightsMs * (1 + spread) + after * afterShare[1],
    basis: eta.basis,
    source,
    ...(reason ? { reason } : {}),
    key,
  };
}

/** When the after-weights part began: the first phase after the weights, else a quiet step past the last shard. */
function afterStartOf(state: LoadState, now: number): number | undefined {
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
function barLeft(done: number | undefined, total: number | undefined, elapsedMs: number): number | undefined {
  // (1 of 16384 done says nothing of the rate yet)
  if (done === undefined || total === undefined || done < total * 0.01 || total <= done || elapsedMs <= 0)
    return undefined;
  return (elapsedMs * (total - done)) / done;
}

/** After the weights: the plan's time less what passed, a bar's rate, or a quiet step's own length. */
function afterWeights(state: LoadState, now: number, afterStart: number, key: string): RawEta {
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
      reason: `${activityLabel(activity)}: at the rate of its bar`,
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
        reason: `CUDA graphs ${graphs.done}/${graphs.total} at the rate of their batches`,
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
    const bar = activity.total !== undefined ? 'its bar gives no rate yet' : 'no bar';
    const typical = TYPICAL_STEP_MS[activity.kind];
    if (typical !== undefined) {
      // (continuous where the overrun takes over: typical - e = TYPICAL_OVERRUN * e)
      const stepLeft = Math.max(typical - stepElapsed, stepElapsed * TYPICAL_OVERRUN);
      return {
        midMs: rest + stepLeft,
        lowMs: rest * share[0] + Math.max(MIN_LEFT_MS * 0.5, typical * 0.6 - stepElapsed, stepElapsed * 0.25),
        highMs: rest * share[1] + Math.max(typical * 1.5 - stepElapsed, stepElapsed),
        basis: 'step so far',
        source,
        reason: `${what}: ${bar}; such a step takes about ${Math.round(typical / 1000)} s in published logs (${Math.round(stepElapsed / 1000)} s so far)`,
        key,
      };
    }
    return {
      midMs: Math.max(QUIET_FLOOR_MS, rest + stepElapsed * OVERRUN[1]),
      lowMs: rest * share[0] + stepElapsed * OVERRUN[0],
      highMs: rest * share[1] + Math.max(QUIET_FLOOR_MS, stepElapsed * OVERRUN[2]),
      basis: 'step so far',
      source,
      reason: `${what}: ${bar}, and ${source === 'history' ? 'not in the previous loads' : 'no previous load'} to time it (${Math.round(stepElapsed / 1000)} s so far): about half as long again as it has taken`,
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
        reason: `CUDA graphs: ${graphs.total} batch sizes to capture, none timed yet`,
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
  const what = activity ? activityLabel(activity) : (state.phase ?? 'this phase');
  return {
    midMs: mid,
    lowMs: Math.max(MIN_LEFT_MS * 0.5, stepElapsed * OVERRUN[0]),
    highMs: Math.max(mid * 1.5, stepElapsed * OVERRUN[2] + tail),
    basis: 'step so far',
    source,
    reason: `${what} is taking longer than ${source === 'history' ? 'in previous loads' : 'the defaults said'} (${Math.round(stepElapsed / 1000)} s so far): the estimate grows with it`,
    key: `${key}/overrun`,
  };
}

/** True when the bytes stopped growing mid-weights, with no quiet step to explain it: a stall, no ETA. */
function weightsStalled(state: LoadState, now: number): boolean {
  const total = state.io?.totalBytes ?? state.prior?.totalBytes;
  const samples = state.ioSamples;
  const last = samples[samples.length - 1];
  if (total === undefined || !last || last.bytes / total < MIN_BYTES_FRACTION || last.bytes >= total) return false;
  const growth = lastGrowth(samples, (total * NOISE_SHARE) / RATE_WINDOW_MS);
  return growth.flatSince !== undefined && now - growth.flatSince > DISPROVED_GRACE_MS - sampleIntervalMs(samples);
}

/** The whole load's ETA at `now`, undefined when nothing honest can be said (no size, no history; a stall). */
export function estimateLoad(state: LoadState, now: number): RawEta | undefined {
  const phase = state.phase;
  if (phase === undefined || phase === 'ready') return undefined;
  const key = `${phase}/${state.activity?.kind ?? ''}`;
  const afterStart = afterStartOf(state, now);
  if (afterStart !== undefined) return afterWeights(state, now, afterStart, key);
  // A forecast (no live evidence yet) is its own key: the first evidence replaces it at once.
  if (phase === 'starting') return forecast(state, now, `${key}/forecast`);
  // Loading weights.
  if (state.activity === undefined && weightsStalled(state, now)) return undefined;
  const t = state.phaseTimes;
  const totalBytes = state.io?.totalBytes ?? state.prior?.totalBytes;
  const live = estimateEta({
    now,
    phase,
    ...(t['loading weights'] !== undefined ? { weightsStartedAt: t['loading weights'] } : {}),
    ...(totalBytes !== undefined ? { totalBytes } : {}),
    samples: state.ioSamples,
    ...(state.shards ? { shards: state.shards } : {}),
    lastProgressAt: state.lastProgressAt,
    ...(state.prior ? { prior: state.prior } : {}),
  });
  if (live) return weights(state, live, now, key);
  // The bytes will give a rate within seconds: no forecast they could disprove at once meanwhile.
  if (inWeightsFirstSeconds(state, now)) return undefined;
  if (state.shards && state.shards.done > 0 && state.activity === undefined) {
    // The shard rate was disproved (no progress for longer than a shard takes): a stall.
    const at = t['loading weights'];
    if (at !== undefined && now - state.lastProgressAt > (now - at) / state.shards.done + DISPROVED_GRACE_MS)
      return undefined;
  }
  return forecast(state, now, `${key}/forecast`);
}

/** Why no ETA is shown yet, when the reason is the weights' first seconds (the tooltip's ETA line then). */
export function etaPendingText(state: LoadState, now: number): string | undefined {
  if (state.eta !== undefined || !inWeightsFirstSeconds(state, now)) return undefined;
  return 'ETA: in a few seconds, once the bytes read give a rate';
}

/** The weights began less than WEIGHTS_MEASURE_MS ago (and the load is still in them). */
function inWeightsFirstSeconds(state: LoadState, now: number): boolean {
  const weightsAt = state.phaseTimes['loading weights'];
  return state.phase === 'loading weights' && weightsAt !== undefined && now - weightsAt < WEIGHTS_MEASURE_MS;
}

/**
 * The tooltip's ETA line: what is shown, where the plan comes from, and why it moved when
 * something moved it ("ETA: 4-6m left, from defaults for a 41.2 GB model on 8 GPUs (no previous
 * load); reads slowed: these files were not in the page cache ...").
 */
export function etaTooltip(state: LoadState, eta: ShownEta, now: number): string {
  const text = etaText(eta, now) ?? '';
  const source = sourceText(state, eta.source ?? sourceOf(state));
  return `ETA: ${text}, ${source}${eta.reason ? `; ${eta.reason}` : ''}`;
}
