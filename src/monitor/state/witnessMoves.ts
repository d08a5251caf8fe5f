/**
 * What counts as a load moving on, and the quiet step under way (docs/phases-and-stalls.md). Pure.
 *
 * A witness moves when the engine prints a line that says something new (a phase, a count, a
 * step it announces), when HTTP opens, or when the host shows work: bytes read or GPU memory
 * moved by more than noise since the last move, the process tree's CPU time growing at a
 * quarter of a core or more, a GPU busy. A /health that is refused (or fails) and a reading equal to the last
 * one are not moves: a load that is `stalled` stays so until a witness really moves.
 */
import { ACTIVITY_LABELS, activityLabel, type Activity } from '../../engine/activity';
import type { JournalEvent } from '../../engine/events';
import type { LoadState } from './loadStateTypes';
import {
  bytesReadMoved,
  cpuBusy,
  gpuBusy,
  gpuMemoryMoved,
  graphBatchMoved,
  httpOpened,
  journalStep,
  noWitnessMoved,
  phaseBegan,
  readyLineMoved,
  shardMoved,
  someRanksDone,
} from '../../present/words/witnessWords';

/** Bytes read since the last move that count as a move (sockets, /proc reads and imports stay under it). */
export const IO_MOVE_BYTES = 8 * 1024 * 1024;
/** GPU memory (summed over GPUs) moved since the last move, up or down, that counts as a move. */
export const GPU_MOVE_MIB = 64;
/** CPU time of the tree growing at this many cores or more is work: an idle (hung) Python tree uses a few % of one; a compiler, a weight post-processing or torch.compile keep one or more busy. */
export const CPU_BUSY_CORES = 0.25;
/** The busiest GPU at this utilisation or more is work. */
export const GPU_BUSY_PERCENT = 10;
/** The CPU rate is measured over this much of the latest samples. */
const CPU_WINDOW_MS = 15_000;
const CPU_KEEP_MS = 30_000;

export interface CpuSample {
  readonly at: number;
  readonly seconds: number;
}

/** The witnesses' readings at the last move. */
export interface ProgressMark {
  readonly readBytes: number;
  readonly gpuUsedMiB: number | undefined;
}

export function pushCpuSample(samples: readonly CpuSample[], sample: CpuSample): CpuSample[] {
  const kept = samples.filter((s) => s.at < sample.at && sample.at - s.at <= CPU_KEEP_MS);
  return [...kept, sample];
}

/** Cores kept busy over the latest window (CPU seconds per second); undefined with less than 1 s of samples. */
export function cpuCores(samples: readonly CpuSample[]): number | undefined {
  const last = samples[samples.length - 1];
  if (!last) return undefined;
  const first = samples.find((s) => last.at - s.at <= CPU_WINDOW_MS && last.at - s.at >= 1000);
  if (!first) return undefined;
  // A tree that lost a process (its time not yet counted in its parent) reads lower: no work, not negative work.
  return Math.max(0, last.seconds - first.seconds) / ((last.at - first.at) / 1000);
}

const answering = (http: LoadState['http']): boolean => http === 'warming' || http === 'healthy';

/** The witness that moved between two states, in words; undefined when none did. */
export function progressWitness(before: LoadState, after: LoadState): string | undefined {
  if (after.phase !== undefined && before.phase !== after.phase) return phaseBegan(after.phase);
  if (after.shards && before.shards?.done !== after.shards.done)
    return shardMoved(after.shards.done, after.shards.total);
  if (after.cudaGraphBatches && before.cudaGraphBatches?.done !== after.cudaGraphBatches.done) {
    return graphBatchMoved(after.cudaGraphBatches.done, after.cudaGraphBatches.total);
  }
  if (after.readyLogSeen && !before.readyLogSeen) return readyLineMoved();
  if (after.weightsEnded > before.weightsEnded || (after.weightsDone && !before.weightsDone))
    return '"Load weight end"';
  if (answering(after.http) && !answering(before.http)) return httpOpened();
  const line = after.lineActivity;
  if (line && line !== before.lineActivity) return journalStep(activityLabel(line), false);
  if (!line && before.lineActivity) return journalStep(ACTIVITY_LABELS[before.lineActivity.kind], true);
  const mark = after.progressMark;
  if (after.io && after.io.readBytes - mark.readBytes >= IO_MOVE_BYTES) return bytesReadMoved();
  if (after.gpu && mark.gpuUsedMiB !== undefined && Math.abs(after.gpu.usedMiB - mark.gpuUsedMiB) >= GPU_MOVE_MIB)
    return gpuMemoryMoved();
  // Busy readings count only on the signal that carries them, not again at every later signal.
  if (after.cpu && after.cpu !== before.cpu && after.cpu.cores !== undefined && after.cpu.cores >= CPU_BUSY_CORES) {
    return cpuBusy(after.cpu.cores.toFixed(1));
  }
  if (after.gpu && after.gpu !== before.gpu && (after.gpu.utilPercent ?? 0) >= GPU_BUSY_PERCENT)
    return gpuBusy(after.gpu.utilPercent ?? 0);
  return undefined;
}

/** An `activity` line folded into the step the engine announced. */
export function applyActivityEvent(
  state: LoadState,
  event: Extract<JournalEvent, { type: 'activity' }>,
  at: number,
): LoadState {
  const current = state.lineActivity;
  // SGLang's piecewise graphs run torch.compile inside them: its lines are the same step.
  if (current?.kind === 'piecewise-graphs' && event.activity === 'torch-compile') return state;
  const same = current?.kind === event.activity;
  switch (event.edge) {
    case 'end':
      return same ? { ...state, lineActivity: undefined } : state;
    case 'start':
      // Another kernel of the same compile session, another graph of the same torch.compile: the step goes on.
      return { ...state, lineActivity: { kind: event.activity, since: same ? current.since : at } };
    case 'progress':
      if (same && current.done === event.done && current.total === event.total) return state;
      return {
        ...state,
        lineActivity: {
          kind: event.activity,
          since: same ? current.since : at,
          ...(event.done !== undefined && event.total !== undefined ? { done: event.done, total: event.total } : {}),
        },
      };
  }
}

/**
 * The shard bar at 100 % and no "Load weight end" for this long is a step of its own: most
 * engines hand over within seconds, and a step named for a second only makes the ETA flicker.
 */
export const POST_SHARDS_NAMED_AFTER_MS = 10_000;

/** The step the state itself implies: the shard bar at 100 % while the phase is still the weights. */
function impliedActivity(state: LoadState, at: number, previous: Activity | undefined): Activity | undefined {
  if (state.phase !== 'loading weights' || state.weightsDone || !state.shards || state.shards.done < state.shards.total)
    return undefined;
  if (previous?.kind !== 'post-shards' && at - (state.weightsReadAt ?? at) < POST_SHARDS_NAMED_AFTER_MS)
    return undefined;
  const since = previous?.kind === 'post-shards' ? previous.since : (state.weightsReadAt ?? at);
  // Not a count: ranks whose `Load weight end` lines are identical are read once (rank de-duplication).
  return { kind: 'post-shards', since, ...(state.weightsEnded > 0 ? { note: someRanksDone() } : {}) };
}

/**
 * The step under way after a signal: the one the engine announced, until it says it ended, the
 * phase moves on or the phase's own counters move; else the one the state implies.
 */
export function foldActivity(before: LoadState, after: LoadState, at: number): LoadState {
  let line = after.lineActivity;
  if (line && line === before.lineActivity) {
    const phaseMoved = before.phase !== after.phase;
    const countersMoved =
      (after.shards?.done ?? 0) > (before.shards?.done ?? 0) ||
      (after.cudaGraphBatches?.done ?? 0) > (before.cudaGraphBatches?.done ?? 0);
    if (phaseMoved || countersMoved) line = undefined;
  }
  if (after.failure !== undefined || after.readyAt !== undefined) line = undefined;
  const activity = line ?? impliedActivity({ ...after, lineActivity: line }, at, before.activity);
  const unchanged =
    activity === before.activity ||
    (activity !== undefined && before.activity !== undefined && sameActivity(activity, before.activity));
  const seen = after.stepsSeen ?? [];
  const stepsSeen = activity && !seen.includes(activity.kind) ? [...seen, activity.kind] : after.stepsSeen;
  return {
    ...after,
    lineActivity: line,
    activity: unchanged ? before.activity : activity,
    ...(stepsSeen ? { stepsSeen } : {}),
  };
}

function sameActivity(a: Activity, b: Activity): boolean {
  return a.kind === b.kind && a.since === b.since && a.done === b.done && a.total === b.total && a.note === b.note;
}

/** "10:31:02" (local time). */
export function clockTime(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** The journal's words when a load becomes stalled: how long, and which witness moved last, when. */
export function stallSignalText(state: LoadState, at: number): string {
  const seconds = Math.round((at - state.lastProgressAt) / 1000);
  return noWitnessMoved(seconds, state.lastProgressWitness, clockTime(state.lastProgressAt));
}
