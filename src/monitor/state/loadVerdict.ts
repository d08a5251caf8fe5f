/** Questions asked of a load state: its verdict; tied to a run, finished, wanting its completion probe. Pure. */
import { UNHEALTHY_AFTER_FAILURES, type LoadState, type Verdict } from './loadStateTypes';
import type { ServiceStatus } from '../../target/targetTypes';
import { hasRunningProcess } from './unitFailure';

export function verdictOf(state: LoadState): Verdict {
  if (state.failure) return 'failed';
  if (state.readyAt !== undefined) {
    if (!state.connected) return 'unreachable';
    return state.healthFailures >= UNHEALTHY_AFTER_FAILURES ? 'unhealthy' : 'ready';
  }
  if (!state.connected) return 'unreachable';
  if (state.restartRequestedAt !== undefined && state.mainPid === undefined) {
    if (state.unit?.activeState === 'deactivating') return 'stopping';
    // Our restart always starts a new process; a stop by someone else may not.
    if (state.restartedBy === 'someone else' && state.unit && isDown(state.unit)) return 'stopped';
    return 'restarting';
  }
  if (state.unit && isDown(state.unit)) return 'stopped';
  if (state.stalled) return 'stalled';
  if (state.phase === 'warming up') return 'warming up';
  return 'loading';
}

/** No process, none starting, and no job of the manager's that will start one (a restart between its stop and its start). */
function isDown(unit: ServiceStatus): boolean {
  return !hasRunningProcess(unit) && unit.activeState !== 'activating' && unit.jobPending !== true;
}

/** True once the load is tied to one process of the unit (after `tiedToRun`). */
export function isTiedToRun(state: LoadState): boolean {
  return state.baselineRestarts !== undefined;
}

/** True when SGLang says it is ready and the completion that proves it has not yet passed. */
export function wantsCompletionProbe(state: LoadState): boolean {
  return (
    state.readyAt === undefined &&
    state.failure === undefined &&
    state.mainPid !== undefined &&
    state.connected &&
    state.standIn === undefined &&
    (state.readyLogSeen || state.http === 'healthy')
  );
}

export function isFinished(state: LoadState): boolean {
  return state.readyAt !== undefined || state.failure !== undefined || state.verdict === 'stopped';
}
