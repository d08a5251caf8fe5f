/**
 * The words for a server whose run waits in a scheduler's queue, and for the end its manager
 * sets (a batch job's time limit): "queued · starts ~14:05 (Resources)", "the job ends at 18:40,
 * in 2h 11m: the server stops then". Pure; the clock is the caller's.
 */
import type { LoadState } from '../monitor/state/loadStateTypes';
import { timeLeftBeforeEnd } from '../monitor/state/timeLimit';
import { formatDuration, hourMinute } from '../util/duration';

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
