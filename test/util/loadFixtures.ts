/** Builders shared by the load-state tests: a running unit as systemd shows it, and a fold of signals. */
import type { ServiceStatus } from '../../src/target/target';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';

/**
 * A loaded, active, running unit (main PID 4242, started at 1000 ms), with the given fields
 * changed; a field given as undefined is left out (systemd did not say it).
 */
export function runningUnit(overrides: Partial<ServiceStatus> = {}): ServiceStatus {
  const unit: Record<string, unknown> = {
    loadState: 'loaded',
    activeState: 'active',
    subState: 'running',
    mainPid: 4242,
    nRestarts: 0,
    result: 'success',
    execMainStartedAt: 1000,
    dropInPaths: [],
    needDaemonReload: false,
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete unit[key];
  return unit as unknown as ServiceStatus;
}

/** The state after these signals, from `start` (a watch begun at 0 by default). */
export function foldSignals(signals: readonly Signal[], start: LoadState = initialState(0)): LoadState {
  return signals.reduce(reduce, start);
}

/** A load half through its shards: restarted at 1 s, tied to the run of `unit` at 2 s, 32 of 64 shards at 3 s. */
export function halfLoaded(unit: ServiceStatus = runningUnit({ mainPid: 7 })): LoadState {
  return foldSignals([
    { kind: 'restartRequested', at: 1000 },
    { kind: 'tiedToRun', at: 2000, unit },
    {
      kind: 'journal',
      at: 3000,
      event: { type: 'shards', done: 32, total: 64, percent: 50 },
      text: 'shards 32/64',
    },
  ]);
}

/** What systemd shows of a unit whose main process was killed by SIGKILL (a crash). */
export const KILLED: Partial<ServiceStatus> = {
  activeState: 'failed',
  subState: 'failed',
  mainPid: 0,
  result: 'signal',
  execMainCode: 'killed',
  execMainStatus: 9,
};

/** The journal's line that `done` of `total` shards are loaded (the percent rounded down, as the log says it). */
export function shardsLine(at: number, done: number, text = `shards ${done}/64`, total = 64): Signal {
  return {
    kind: 'journal',
    at,
    event: { type: 'shards', done, total, percent: Math.floor((done / total) * 100) },
    text,
  };
}
