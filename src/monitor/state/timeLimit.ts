/**
 * A run whose manager ends it at a set time (a batch job's time limit): when the end is close
 * enough to warn of, and the warning's words. Pure; the clock is the caller's.
 */
import { formatDuration, hourMinute } from '../../util/duration';
import type { LoadState } from './loadStateTypes';
import { timeLimitNear } from '../../present/words/failureWords';

/** How long before the set end the watch warns: time to save work or plan a new job. */
export const TIME_LIMIT_WARNING_MS = 15 * 60_000;

/** The time left when the run's set end is within the warning time; undefined otherwise (no end, no run, passed). */
export function timeLeftBeforeEnd(state: LoadState, now: number): number | undefined {
  const unit = state.unit;
  if (unit?.endsAt === undefined || unit.mainPid === 0 || state.failure) return undefined;
  const left = unit.endsAt - now;
  return left > 0 && left <= TIME_LIMIT_WARNING_MS ? left : undefined;
}

/** "Slurm job kimi-k26 reaches its time limit at 18:40, in 14m 59s: Slurm ends it then, and the server stops." */
export function timeLimitWarning(label: string, state: LoadState, now: number): string | undefined {
  const left = timeLeftBeforeEnd(state, now);
  if (left === undefined || state.unit?.endsAt === undefined) return undefined;
  return timeLimitNear(label, hourMinute(state.unit.endsAt), formatDuration(left), state.unit.managerName);
}
