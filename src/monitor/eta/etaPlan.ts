/**
 * The plan of a load's phases and where it comes from: this server's previous loads (history)
 * or the defaults (the model's size, the GPU count, default read rates). Pure; etaLoad.ts and
 * etaAfterWeights.ts estimate from it.
 */
import type { LoadState } from '../state/loadStateTypes';
import { DEFAULT_AFTER_WEIGHTS_MIN_MS, DEFAULT_AFTER_WEIGHTS_SHARE, DEFAULT_COLD_BPS, DEFAULT_WARM_BPS } from './eta';

/** Where the plan of the phases comes from: this server's previous loads, or the defaults. */
export type EtaSource = 'history' | 'defaults';

/**
 * The weights' reads against the plan: not in the page cache though the forecast said they were
 * (with the share it said), or a rate well off the previous loads' (bytes per second).
 */
export type ReadsMoved =
  | { readonly kind: 'uncached'; readonly cachedPercent?: number }
  | { readonly kind: 'rate'; readonly nowBps: number; readonly pastBps: number };

/** The estimate before damping: milliseconds left (middle, low, high) from `now`. */
export interface RawEta {
  readonly midMs: number;
  readonly lowMs: number;
  readonly highMs: number;
  readonly basis: string;
  readonly source: EtaSource;
  /** The weights' reads moved it: slower or faster than the plan said (said in the tooltip, before `reason`). */
  readonly readsMoved?: ReadsMoved;
  /** Why it is what it is, when something moved it (said in the tooltip). */
  readonly reason?: string;
  /** Phase (and quiet step) it was made in: a change of it lets the ETA move freely. */
  readonly key: string;
}

/** Share of the after-weights time a range from history spans, below and above. */
export const HISTORY_AFTER = [0.85, 1.2] as const;
/** The same without history (defaults from the model size and GPU count). */
export const DEFAULT_AFTER = [0.6, 2.2] as const;
/**
 * Defaults for the phases after the weights (KV cache, CUDA graphs, warm-up, with the JIT caches
 * of an earlier start): a base, a term that grows with the model's size, one per doubling of the
 * GPU count, fitted to sg-llmsinclouds-qwq32b (65 GB on 4 GPUs: 12 s from "Load weight end" to
 * ready); for Kimi K2.6 (548 GB on 8 GPUs) this gives 61 s. A first start's JIT compiles are quiet
 * steps of their own (QUIET_FLOOR_MS).
 */
export const AFTER_BASE_MS = 3_500;
export const AFTER_PER_GB_MS = 100;
export const AFTER_PER_GPU_DOUBLING_MS = 1_000;
/** Nothing less than this is left while a phase goes on (the ETA does not sit at 0). */
export const MIN_LEFT_MS = 3_000;

export function loadStart(state: LoadState): number {
  return state.restartRequestedAt ?? state.processStartedAt ?? state.watchStartedAt;
}

export function sourceOf(state: LoadState): EtaSource {
  return (state.prior?.loads ?? 0) >= 1 && state.prior?.afterWeightsMs !== undefined ? 'history' : 'defaults';
}

/**
 * The after-weights time the plan gives: history's, else from the model's size and the GPU
 * count (KV cache, graph capture and warm-up grow with the model's layers and the group, not with
 * how fast its files were read), else a share of the weights time.
 */
export function afterPlanMs(state: LoadState, weightsTotalMs: number): number {
  const prior = state.prior;
  if (prior?.afterWeightsMs !== undefined) return prior.afterWeightsMs;
  const gpus = state.gpu?.perGpu.length ?? 1;
  const perGroup = AFTER_PER_GPU_DOUBLING_MS * Math.log2(Math.max(1, gpus));
  const total = state.io?.totalBytes ?? prior?.totalBytes;
  if (total !== undefined && total > 0) return AFTER_BASE_MS + AFTER_PER_GB_MS * (total / 1e9) + perGroup;
  return Math.max(DEFAULT_AFTER_WEIGHTS_MIN_MS, weightsTotalMs * DEFAULT_AFTER_WEIGHTS_SHARE) + perGroup;
}

/** Weights time from the model's size at the prior's (or default) rates, split by the residency. */
export function forecastWeightsMs(state: LoadState): number | undefined {
  const prior = state.prior;
  const total = state.io?.totalBytes ?? prior?.totalBytes;
  if (total === undefined || total <= 0) return undefined;
  const resident = Math.min(total, Math.max(0, prior?.residentBytes ?? 0));
  const cold = (total - resident) / (prior?.coldBps ?? DEFAULT_COLD_BPS);
  const warm = resident / (prior?.warmBps ?? DEFAULT_WARM_BPS);
  return (cold + warm) * 1000;
}

/** A foreseen step (an empty kernel cache's compile) not yet begun: what it adds (ms: middle, low, high). */
export function pendingSteps(state: LoadState): { ms: number; lowMs: number; highMs: number } {
  let ms = 0;
  let lowMs = 0;
  let highMs = 0;
  for (const step of state.prior?.foreseenSteps ?? []) {
    // (a step this server's previous loads timed is in history's plan already)
    if (step.from === 'history' || state.stepsSeen?.includes(step.kind) || state.activity?.kind === step.kind) continue;
    ms += step.ms;
    lowMs += step.lowMs;
    highMs += step.highMs;
  }
  return { ms, lowMs, highMs };
}

/** The foreseen length of a step of `kind` (read before the restart), if one was foreseen. */
export function foreseenMs(state: LoadState, kind: string): number | undefined {
  return state.prior?.foreseenSteps?.find((s) => s.kind === kind)?.ms;
}
