/**
 * What a fresh reading of the unit means for a load that is being followed: the same process,
 * a new one (someone restarted the unit, or systemd did), the old one stopping, or stopped.
 * Pure: the watcher acts on the answer.
 */
import type { ServiceStatus } from '../../target/target';
import { hasRunningProcess } from './unitFailure';
import type { LoadState } from './loadStateTypes';

/** Tells one run of the unit from the next: systemd's InvocationID, else start time and PID. */
export function processKey(unit: ServiceStatus): string {
  if (unit.invocationId) return unit.invocationId;
  return `${unit.execMainStartedMonotonicUs ?? unit.execMainStartedAt ?? 0}:${unit.execMainPid ?? unit.mainPid}`;
}

/** A start job with no main process yet (an ExecStartPre, PID 1 forking it): the next run is not there yet. */
export function isStarting(unit: ServiceStatus): boolean {
  return unit.activeState === 'activating' && unit.mainPid === 0;
}

/** The key of "no run yet": any run that shows up is the new one. */
export const NO_RUN_YET = 'no run yet';

/**
 * Waiting to be restarted after a crash (systemd's `auto-restart`, Docker's `restarting`): the
 * run its key names has already ended. Docker spends most of a crash loop here (its back-off
 * doubles up to a minute), so a watch that waited for a live process could poll past every run.
 */
function crashedAwaitingRestart(unit: ServiceStatus): boolean {
  return unit.activeState === 'activating' && unit.subState.startsWith('auto-restart');
}

/** True when `unit` shows a run of the unit that started after the one `previousKey` names. */
export function isNewRun(previousKey: string, unit: ServiceStatus): boolean {
  if (processKey(unit) === previousKey) return false;
  // A crashed run waiting for its restart is a new run that has ended (the reducer calls it a crash loop).
  if (previousKey !== NO_RUN_YET && crashedAwaitingRestart(unit) && unit.execMainStartedAt !== undefined) return true;
  if (isStarting(unit)) return false;
  // A watch begun during a start: only a live process, or one that failed, is its run (not a leftover state).
  if (previousKey === NO_RUN_YET) return hasRunningProcess(unit) || unit.activeState === 'failed';
  // A new run is alive or has already ended; `deactivating` is the old one on its way out.
  return (
    unit.activeState !== 'deactivating' &&
    (hasRunningProcess(unit) || unit.activeState === 'failed' || unit.execMainStartedAt !== undefined)
  );
}

export type UnitChange =
  /** The process the state follows (or its ending, which the reducer judges). */
  | 'same'
  /** Another run than the one the state follows: a new load to follow. */
  | 'new run'
  /** The process is being stopped by systemd (systemctl stop/restart, by anyone). */
  | 'stopping'
  /** The process was stopped on purpose (a stop was seen) and nothing replaced it. */
  | 'stopped';

/**
 * Judges a unit reading taken while the state is settled (ready, failed or stopped).
 * `stopSeen`: the journal said systemd is stopping the unit, or the unit was seen deactivating.
 */
export function unitChangeAfterSettled(state: LoadState, unit: ServiceStatus, stopSeen: boolean): UnitChange {
  const known = state.unit;
  if (known && processKey(known) !== processKey(unit) && isNewRun(processKey(known), unit)) return 'new run';
  if (state.mainPid !== undefined && unit.mainPid > 0 && unit.mainPid !== state.mainPid && hasRunningProcess(unit))
    return 'new run';
  if (state.readyAt === undefined || state.failure !== undefined) return 'same';
  if (unit.activeState === 'deactivating') return 'stopping';
  if ((stopSeen || unit.stopRequested === true) && !hasRunningProcess(unit) && unit.activeState !== 'failed')
    return 'stopped';
  return 'same';
}
