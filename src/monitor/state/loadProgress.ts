/** The reducer's phase, progress and ETA parts (loadState.ts folds the signals; these read the state). Pure. */
import { phaseRank, type JournalEvent, type LoadPhase } from '../../engine/events';
import { applyActivityEvent } from './witnessMoves';
import { detach } from '../../util/detach';
import { estimateLoad } from '../eta/etaLoad';
import { dampEta } from '../eta/etaDamp';
import type { LoadState } from './loadStateTypes';
import { witnessesDisagree } from '../../present/words/witnessWords';

const MAX_ERROR_LINES = 12;
/**
 * While a load runs, its first error lines are kept as well as its last: the first exception
 * of the first rank that failed says why (engine/rootCause), the last ones how it ended.
 */
const FIRST_ERROR_LINES = 12;

export function withErrorLine(lines: readonly string[], text: string, keepFirst: boolean): readonly string[] {
  const next = [...lines, text];
  const limit = keepFirst ? FIRST_ERROR_LINES + MAX_ERROR_LINES : MAX_ERROR_LINES;
  if (next.length <= limit) return next;
  return keepFirst
    ? [...next.slice(0, FIRST_ERROR_LINES), ...next.slice(-MAX_ERROR_LINES)]
    : next.slice(-MAX_ERROR_LINES);
}

/** Characters of a journal line the state keeps (the watcher passes 300). */
const MAX_LINE_CHARS = 1_000;

/**
 * A journal line as the state keeps it: cut, and copied off the line it was cut from (a V8
 * slice of a 10 MB line keeps the 10 MB alive as long as the state keeps the slice).
 */
export function kept(text: string): string {
  return detach(text.slice(0, MAX_LINE_CHARS));
}

// Share of the whole load each phase stands for, so one percentage covers all of it.
// Weights dominate a cold start (minutes); KV allocation and graph capture take seconds to a minute.
const WEIGHTS_SHARE = 0.9;
const KV_DONE = 0.92;
const GRAPHS_DONE = 0.98;

export function progressFor(state: LoadState): number | undefined {
  switch (state.phase) {
    case undefined:
      return undefined;
    case 'starting':
      return 0;
    case 'loading weights': {
      if (state.shards) return (state.shards.done / Math.max(1, state.shards.total)) * WEIGHTS_SHARE;
      const bytes = bytesFraction(state);
      return bytes !== undefined ? Math.min(1, bytes) * WEIGHTS_SHARE : 0;
    }
    case 'allocating KV cache':
      return WEIGHTS_SHARE;
    case 'capturing CUDA graphs': {
      const graphs = state.cudaGraphBatches;
      return KV_DONE + (graphs ? (graphs.done / Math.max(1, graphs.total)) * (GRAPHS_DONE - KV_DONE) : 0);
    }
    case 'warming up':
      return GRAPHS_DONE;
    case 'ready':
      return 1;
  }
}

export function totalBytesOf(state: LoadState): number | undefined {
  return state.io?.totalBytes ?? state.prior?.totalBytes;
}

/** Bytes read / model bytes, when both are known. */
export function bytesFraction(state: LoadState): number | undefined {
  const total = totalBytesOf(state);
  if (!state.io || total === undefined || total <= 0) return undefined;
  return Math.min(1, state.io.readBytes / total);
}

/** Shard % and byte % more than 25 points apart after 20 % of the load: a sentence to log. */
export function witnessDisagreement(state: LoadState): string | undefined {
  if (state.phase !== 'loading weights' || !state.shards) return undefined;
  const bytes = bytesFraction(state);
  if (bytes === undefined) return undefined;
  const shards = state.shards.done / Math.max(1, state.shards.total);
  if (Math.max(bytes, shards) < 0.2 || Math.abs(bytes - shards) <= 0.25) return undefined;
  return witnessesDisagree(Math.round(shards * 100), Math.round(bytes * 100), bytes < shards);
}

/** The state with its ETA recomputed at `at` (etaLoad.ts), damped against the one it had (etaDamp.ts). */
export function withEta(state: LoadState, at: number): LoadState {
  const raw = estimateLoad(state, at);
  return { ...state, eta: raw ? dampEta(state.eta, raw, at) : undefined };
}

export function advancePhase(state: LoadState, phase: LoadPhase): LoadState {
  if (state.phase !== undefined && phaseRank(phase) <= phaseRank(state.phase)) return state;
  return { ...state, phase };
}

export function foldJournal(state: LoadState, event: JournalEvent, text: string, at: number): LoadState {
  switch (event.type) {
    case 'phase':
      return advancePhase(state, event.phase);
    case 'shards': {
      // 400 digits read as Infinity: Infinity/Infinity would make the progress NaN.
      if (!Number.isFinite(event.done) || !Number.isFinite(event.total)) return state;
      const next = advancePhase(state, 'loading weights');
      const done = Math.max(event.done, next.shards?.done ?? 0);
      const lastShard = done >= event.total && next.phase === 'loading weights' && next.weightsReadAt === undefined;
      return { ...next, shards: { done, total: event.total }, ...(lastShard ? { weightsReadAt: at } : {}) };
    }
    case 'weightsLoaded': {
      // SGLang's line names the model class (`type=`), once per rank; vLLM's lines do not, and say it for all workers.
      const next =
        event.modelType !== undefined
          ? { ...advancePhase(state, 'loading weights'), weightsEnded: state.weightsEnded + 1 }
          : { ...advancePhase(state, 'loading weights'), weightsDone: true };
      return next.shards ? { ...next, shards: { done: next.shards.total, total: next.shards.total } } : next;
    }
    case 'kvCache':
      return advancePhase(state, 'allocating KV cache');
    case 'cudaGraphBatches': {
      if (!Number.isFinite(event.done) || !Number.isFinite(event.total)) return state;
      const next = advancePhase(state, 'capturing CUDA graphs');
      const done = Math.max(event.done, next.cudaGraphBatches?.done ?? 0);
      const firstDoneAt = next.cudaGraphBatches?.firstDoneAt ?? (done > 0 ? { at, done } : undefined);
      return { ...next, cudaGraphBatches: { done, total: event.total, ...(firstDoneAt ? { firstDoneAt } : {}) } };
    }
    case 'graphsCaptured': {
      const next = advancePhase(state, 'capturing CUDA graphs');
      const total = next.cudaGraphBatches?.total ?? 1;
      return next.phase === 'capturing CUDA graphs' ? { ...next, cudaGraphBatches: { done: total, total } } : next;
    }
    case 'httpUp':
      return advancePhase(state, 'warming up');
    case 'ready':
      return { ...advancePhase(state, 'warming up'), readyLogSeen: true };
    case 'error': {
      const recentErrors = withErrorLine(state.recentErrors, text, true);
      return { ...state, recentErrors };
    }
    case 'activity':
      return applyActivityEvent(state, event, at);
    case 'systemd':
      return state;
  }
}
