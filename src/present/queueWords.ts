/**
 * The words for a server whose run waits in a scheduler's queue, and for the end its manager
 * sets (a batch job's time limit): "queued · starts ~14:05 (Resources)", "the job ends at 18:40,
 * in 2h 11m: the server stops then". Pure; the clock is the caller's.
 */
import type { LoadState } from '../monitor/state/loadStateTypes';
import { timeLeftBeforeEnd } from '../monitor/state/timeLimit';
import { wholeLoadForecast } from '../monitor/eta/etaLoad';
import { formatDuration, hourMinute } from '../util/duration';
import { sourceText } from './etaTooltip';

/** True while the load waits for its run in a queue: no process yet, and the manager says it is queued. */
export function isQueued(state: LoadState): boolean {
  const unit = state.unit;
  return (
    unit?.queued !== undefined &&
    unit.mainPid === 0 &&
    state.readyAt === undefined &&
    state.failure === undefined &&
    (state.verdict === 'restarting' || state.verdict === 'loading')
  );
}

/** "queued · starts ~14:05 (Resources)", "queued (Priority)", "queued"; undefined when the load is not queued. */
export function queuedWord(state: LoadState, now: number): string | undefined {
  if (!isQueued(state)) return undefined;
  const queued = state.unit?.queued;
  const start = queued?.estimatedStartAt;
  const starts = start !== undefined && start > now ? ` · starts ~${hourMinute(start)}` : '';
  return `queued${starts}${queued?.reason ? ` (${queued.reason})` : ''}`;
}

/** The tooltip's line for the queue: why it waits and the scheduler's estimate. */
export function queueLine(state: LoadState, now: number): string | undefined {
  const text = queueText(state, now);
  return text === undefined ? undefined : `Queue: ${text}`;
}

/** "waiting for Resources; the scheduler expects to start it at 14:05 (in 1h 5m)". */
export function queueText(state: LoadState, now: number): string | undefined {
  if (!isQueued(state)) return undefined;
  const queued = state.unit?.queued;
  const reason = queued?.reason ? `waiting for ${queued.reason}` : 'waiting';
  const start = queued?.estimatedStartAt;
  const estimate =
    start !== undefined && start > now
      ? `; the scheduler expects to start it at ${hourMinute(start)} (in ${formatDuration(start - now)})`
      : '; the scheduler has no estimate of its start yet';
  return `${reason}${estimate}`;
}

/**
 * The ready estimate of a queued run: the scheduler's estimated start, then the load as this
 * server's history (else the defaults) has it. `start` alone when the load cannot be foreseen;
 * `unknown` when the scheduler gives no start (the wait is not guessed); undefined when not queued.
 */
export type QueuedEta =
  | {
      readonly kind: 'estimate';
      readonly startAt: number;
      readonly loadMs: number;
      readonly readyAt: number;
      readonly lowAt: number;
      readonly highAt: number;
      /** Where the load's part comes from, in words ("from this server's 3 previous loads"). */
      readonly source: string;
    }
  | { readonly kind: 'start'; readonly startAt: number }
  | { readonly kind: 'unknown'; readonly loadMs?: number };

export function queuedEta(state: LoadState, now: number): QueuedEta | undefined {
  if (!isQueued(state)) return undefined;
  const start = state.unit?.queued?.estimatedStartAt;
  const load = wholeLoadForecast(state);
  if (start === undefined || start <= now) return { kind: 'unknown', ...(load ? { loadMs: load.midMs } : {}) };
  if (!load) return { kind: 'start', startAt: start };
  return {
    kind: 'estimate',
    startAt: start,
    loadMs: load.midMs,
    readyAt: start + load.midMs,
    lowAt: start + load.lowMs,
    highAt: start + load.highMs,
    source: sourceText(state, load.source),
  };
}

/**
 * The tooltip's ETA line for a queued run, saying that the wait counts: "ETA: ready ~15:12 (in
 * 1h 12m), counting the wait in the queue: the scheduler's start at 14:05 (in 1h 5m), then a load
 * of about 7m 0s (from ...)". Without the scheduler's estimate the wait is said to be unknown.
 */
export function queuedEtaLine(state: LoadState, now: number): string | undefined {
  const eta = queuedEta(state, now);
  if (eta === undefined) return undefined;
  if (eta.kind === 'unknown')
    return `ETA: unknown: the wait in the queue is not known (the scheduler has no estimate of the start yet)${
      eta.loadMs !== undefined ? `; once it starts, the load takes about ${formatDuration(eta.loadMs)}` : ''
    }`;
  const start = `the scheduler's start at ${hourMinute(eta.startAt)} (in ${formatDuration(eta.startAt - now)})`;
  if (eta.kind === 'start') return `ETA: not before ${start}; how long the load then takes is not known yet`;
  return `ETA: ready ~${hourMinute(eta.readyAt)} (in ${formatDuration(eta.readyAt - now)}), counting the wait in the queue: ${start}, then a load of about ${formatDuration(eta.loadMs)} (${eta.source})`;
}

/** "The job ends at 18:40, in 2h 11m: the server stops then"; undefined without a set end or once it passed. */
export function endLine(state: LoadState, now: number): string | undefined {
  const endsAt = state.unit?.endsAt;
  if (endsAt === undefined || endsAt <= now || state.unit?.mainPid === 0) return undefined;
  return `Time limit: the job ends at ${hourMinute(endsAt)}, in ${formatDuration(endsAt - now)}: the server stops then`;
}

/** "ends in 14m 59s" once the set end is within the warning time (the status bar says it beside the state). */
export function endSoonWord(state: LoadState, now: number): string | undefined {
  const left = timeLeftBeforeEnd(state, now);
  return left === undefined ? undefined : `ends in ${formatDuration(left)}`;
}
