/** The next load's duration from the page cache's share of the weights and this host's history. Pure. */
import {
  DEFAULT_AFTER_WEIGHTS_MIN_MS,
  DEFAULT_AFTER_WEIGHTS_SHARE,
  DEFAULT_COLD_BPS,
  DEFAULT_WARM_BPS,
} from '../eta/eta';
import { priorFrom, type LoadRecord } from './history';

/** Default time from process start to the first weight read when there is no history. */
export const DEFAULT_STARTING_MS = 10_000;

/**
 * Predicted load time in ms: cold bytes / cold rate + warm bytes / warm rate + the fixed
 * phases, from this host's history (defaults without it: cold 240 MB/s, warm 3 GB/s).
 */
export function predictLoad(history: readonly LoadRecord[], residentBytes: number, totalBytes: number): number {
  const prior = priorFrom(history);
  const resident = Math.max(0, Math.min(totalBytes, residentBytes));
  const weightsMs =
    ((totalBytes - resident) / (prior.coldBps ?? DEFAULT_COLD_BPS) + resident / (prior.warmBps ?? DEFAULT_WARM_BPS)) *
    1000;
  const after =
    prior.afterWeightsMs !== undefined
      ? prior.afterWeightsMs + (prior.afterShardsMs ?? 0)
      : Math.max(DEFAULT_AFTER_WEIGHTS_MIN_MS, weightsMs * DEFAULT_AFTER_WEIGHTS_SHARE);
  return (prior.startingMs ?? DEFAULT_STARTING_MS) + weightsMs + after;
}
