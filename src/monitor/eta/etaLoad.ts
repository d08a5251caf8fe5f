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
import { pendingCompileReason } from '../../present/words/etaWords';
import { estimateEta, type Eta } from './eta';
import { afterStartOf, afterWeights } from './etaAfterWeights';
import {
  afterPlanMs,
  DEFAULT_AFTER,
  forecastWeightsMs,
  HISTORY_AFTER,
  loadStart,
  MIN_LEFT_MS,
  pendingSteps,
  sourceOf,
  type RawEta,
  type ReadsMoved,
} from './etaPlan';
import {
  DISPROVED_GRACE_MS,
  lastGrowth,
  MIN_BYTES_FRACTION,
  NOISE_SHARE,
  RATE_WINDOW_MS,
  sampleIntervalMs,
} from './ioRate';
import type { LoadState } from '../state/loadStateTypes';

/** Start of the process to the first weights read, without history (imports, torch distributed init). */
const DEFAULT_STARTING_MS = 15_000;
/** The weights' first seconds: no ETA until the bytes give a rate (a forecast the reads may disprove at once). */
const WEIGHTS_MEASURE_MS = 12_000;

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
  const readsMoved: ReadsMoved | undefined = eta.residencyDisproved
    ? {
        kind: 'uncached',
        ...(total && resident !== undefined
          ? { cachedPercent: Math.round((Math.min(resident, total) / total) * 100) }
          : {}),
      }
    : past !== undefined && rate !== undefined && (rate < past * 0.7 || rate > past * 1.4) && eta.basis === 'bytes'
      ? { kind: 'rate', nowBps: rate, pastBps: past }
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
    ...(readsMoved ? { readsMoved } : {}),
    key,
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

/**
 * The whole load's ETA at `now`, undefined when nothing honest can be said (no size, no history; a
 * stall); a compile foreseen before the restart (an empty kernel cache) counts from the first second.
 */
export function estimateLoad(state: LoadState, now: number): RawEta | undefined {
  const raw = estimateWithoutPending(state, now);
  const pending = pendingSteps(state);
  if (!raw || pending.ms <= 0) return raw;
  return {
    ...raw,
    midMs: raw.midMs + pending.ms,
    lowMs: raw.lowMs + pending.lowMs,
    highMs: raw.highMs + pending.highMs,
    reason: [raw.reason, pendingCompileReason(pendingForeseen(state))].filter(Boolean).join('; '),
  };
}

function pendingForeseen(state: LoadState): readonly { readonly kind: string; readonly ms: number }[] {
  return (state.prior?.foreseenSteps ?? []).filter(
    (s) => s.from !== 'history' && !state.stepsSeen?.includes(s.kind) && state.activity?.kind !== s.kind,
  );
}

function estimateWithoutPending(state: LoadState, now: number): RawEta | undefined {
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

/** The weights began less than WEIGHTS_MEASURE_MS ago (and the load is still in them). */
export function inWeightsFirstSeconds(state: LoadState, now: number): boolean {
  const weightsAt = state.phaseTimes['loading weights'];
  return state.phase === 'loading weights' && weightsAt !== undefined && now - weightsAt < WEIGHTS_MEASURE_MS;
}

/**
 * A whole load as the plan has it before any of it ran (history's, else the defaults for the
 * model's size), foreseen compiles included: what a run still waiting for its start (a job in
 * a scheduler's queue) will take once it starts. Undefined when nothing honest can be said.
 */
export function wholeLoadForecast(state: LoadState): RawEta | undefined {
  const start = 0;
  const fresh: LoadState = {
    ...state,
    phase: 'starting',
    restartRequestedAt: start,
    processStartedAt: undefined,
    watchStartedAt: start,
    phaseTimes: {},
    io: undefined,
    ioSamples: [],
    activity: undefined,
    stepsSeen: [],
  };
  return estimateLoad(fresh, start);
}
