/** What a unit's status (systemd's or Docker's) says about a load: whether its process runs, and why it failed. Pure. */
import { mainProcessExit } from '../../engine/logRules';
import type { ServiceStatus } from '../../target/target';
import type { LoadState } from './loadStateTypes';
import {
  containerMissing,
  crashLoopRestarted,
  crashLoopRestartedExitUnseen,
  crashLoopRestarting,
  endedAs,
  exitedWithStatus,
  killedBySignal,
  killedOutOfMemory,
  lostAfterReady as lostAfterReadyWords,
  processReplaced,
  serviceEnded,
  unitNotFound,
} from '../../present/words/failureWords';

/** A main process that runs (active, activating, reloading): a unit in auto-restart has none. */
export function hasRunningProcess(unit: ServiceStatus): boolean {
  return (
    unit.mainPid > 0 &&
    (unit.activeState === 'active' || unit.activeState === 'activating' || unit.activeState === 'reloading')
  );
}

export function exitDescription(unit: ServiceStatus): string {
  if (unit.endedBecause) return unit.endedBecause;
  // systemd's and Docker's (OOMKilled) word for the kernel's OOM killer.
  if (unit.result === 'oom-kill') return killedOutOfMemory(unit.execMainStatus ?? 9);
  if (unit.execMainCode === 'killed' || unit.execMainCode === 'dumped')
    return killedBySignal(unit.execMainStatus ?? '?', unit.execMainCode === 'dumped');
  if (unit.execMainStatus !== undefined) return exitedWithStatus(unit.execMainStatus);
  return endedAs(unit.result || unit.activeState);
}

/**
 * How the crashed run ended, once its manager has restarted it. systemd zeroes a unit's exit fields
 * when the next run starts (ExecMainCode=0, ExecMainStatus=0: "exited with status 0" would be
 * false), so the crashed run's end is then read from the journal's exit line, when the watch has
 * seen it. Docker's status carries the run before's exit (dockerInspect).
 */
function crashedRunExit(state: LoadState, unit: ServiceStatus): string | undefined {
  if (!hasRunningProcess(unit) || unit.execMainCode !== undefined || unit.endedBecause) return exitDescription(unit);
  const exit = [...state.recentErrors]
    .reverse()
    .map(mainProcessExit)
    .find((e) => e !== undefined);
  if (exit === undefined) return undefined;
  if (exit.code === 'exited') return exitedWithStatus(exit.status);
  return killedBySignal(exit.status, exit.code === 'dumped');
}

/** Who restarts the service: systemd, or Docker (its restart policy) for a container. */
export function managerOf(unit: ServiceStatus): string {
  return unit.managerName ?? (unit.manager === 'docker' ? 'Docker' : 'systemd');
}

export function notFound(unit: ServiceStatus, after: boolean): string {
  if (unit.notFoundText) return unit.notFoundText;
  return unit.manager === 'docker' ? containerMissing(unit.id, after) : unitNotFound(after);
}

/** Why the unit, as seen now, means the load has failed; undefined when it has not. */
export function unitFailure(state: LoadState, unit: ServiceStatus): string | undefined {
  if (unit.loadState === 'not-found') return notFound(unit, false);
  if (state.baselineRestarts !== undefined && unit.nRestarts > state.baselineRestarts) {
    const counter = unit.manager === 'docker' ? 'RestartCount' : 'NRestarts';
    const exit = crashedRunExit(state, unit);
    return exit === undefined
      ? crashLoopRestartedExitUnseen(managerOf(unit), counter, unit.nRestarts)
      : crashLoopRestarted(managerOf(unit), exit, counter, unit.nRestarts);
  }
  if (unit.subState === 'auto-restart') return crashLoop(unit);
  if (unit.activeState === 'failed') return serviceEnded(exitDescription(unit));
  if (state.mainPid !== undefined && unit.mainPid > 0 && unit.mainPid !== state.mainPid)
    return processReplaced(state.mainPid, unit.mainPid);
  if (state.mainPid !== undefined && !hasRunningProcess(unit) && unit.activeState !== 'deactivating') {
    return (unit.result === 'success' && unit.execMainStatus === 0) || unit.stopRequested
      ? undefined
      : serviceEnded(exitDescription(unit));
  }
  return undefined;
}

/** A run that crashed and waits for its manager to restart it (systemd's auto-restart, Docker's restart policy). */
export function crashLoop(unit: ServiceStatus): string {
  return crashLoopRestarting(managerOf(unit), exitDescription(unit), unit.manager === 'docker');
}

/** Why a unit seen after ready means the server is gone; undefined while it still serves. */
export function lostAfterReady(unit: ServiceStatus): string | undefined {
  if (unit.loadState === 'not-found') return notFound(unit, true);
  if (unit.subState === 'auto-restart') return lostAfterReadyWords(exitDescription(unit), managerOf(unit));
  if (unit.activeState === 'failed' || !hasRunningProcess(unit)) return lostAfterReadyWords(exitDescription(unit));
  return undefined;
}
