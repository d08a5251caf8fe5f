/** What a unit's status (systemd's or Docker's) says about a load: whether its process runs, and why it failed. Pure. */
import type { ServiceStatus } from '../../target/target';
import type { LoadState } from './loadStateTypes';

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
  if (unit.result === 'oom-kill') return `killed by signal ${unit.execMainStatus ?? 9} (out of memory: the OOM killer)`;
  if (unit.execMainCode === 'killed' || unit.execMainCode === 'dumped') {
    return `killed by signal ${unit.execMainStatus ?? '?'}${unit.execMainCode === 'dumped' ? ' (core dumped)' : ''}`;
  }
  if (unit.execMainStatus !== undefined) return `exited with status ${unit.execMainStatus}`;
  return `ended (${unit.result || unit.activeState})`;
}

/** Who restarts the service: systemd, or Docker (its restart policy) for a container. */
export function managerOf(unit: ServiceStatus): string {
  return unit.managerName ?? (unit.manager === 'docker' ? 'Docker' : 'systemd');
}

export function notFound(unit: ServiceStatus, after: boolean): string {
  if (unit.notFoundText) return unit.notFoundText;
  if (unit.manager === 'docker')
    return `${unit.id ?? 'the container'} does not exist${after ? ' any more' : ''} (docker inspect: no such container)`;
  return after
    ? 'the unit is no longer known to systemd (LoadState=not-found)'
    : 'the unit is not known to systemd (LoadState=not-found)';
}

/** Why the unit, as seen now, means the load has failed; undefined when it has not. */
export function unitFailure(state: LoadState, unit: ServiceStatus): string | undefined {
  if (unit.loadState === 'not-found') return notFound(unit, false);
  if (state.baselineRestarts !== undefined && unit.nRestarts > state.baselineRestarts) {
    return `the service crashed and ${managerOf(unit)} restarted it (${exitDescription(unit)}; ${unit.manager === 'docker' ? 'RestartCount' : 'NRestarts'}=${unit.nRestarts}: crash loop)`;
  }
  if (unit.subState === 'auto-restart')
    return `the service crashed and ${managerOf(unit)} is restarting it (${exitDescription(unit)}; ${unit.manager === 'docker' ? 'its restart policy restarts it' : 'the unit restarts on failure'}: crash loop)`;
  if (unit.activeState === 'failed') return `the service ${exitDescription(unit)}`;
  if (state.mainPid !== undefined && unit.mainPid > 0 && unit.mainPid !== state.mainPid) {
    return `the service process was replaced (PID ${state.mainPid} -> ${unit.mainPid}) before it became ready`;
  }
  if (state.mainPid !== undefined && !hasRunningProcess(unit) && unit.activeState !== 'deactivating') {
    return (unit.result === 'success' && unit.execMainStatus === 0) || unit.stopRequested
      ? undefined
      : `the service ${exitDescription(unit)}`;
  }
  return undefined;
}

/** Why a unit seen after ready means the server is gone; undefined while it still serves. */
export function lostAfterReady(unit: ServiceStatus): string | undefined {
  if (unit.loadState === 'not-found') return notFound(unit, true);
  if (unit.subState === 'auto-restart')
    return `the service ${exitDescription(unit)} after it was ready, and ${managerOf(unit)} is restarting it`;
  if (unit.activeState === 'failed' || !hasRunningProcess(unit))
    return `the service ${exitDescription(unit)} after it was ready`;
  return undefined;
}
