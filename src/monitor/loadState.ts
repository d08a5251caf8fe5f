import { phaseRank, type UnitStatus } from '../engine/events';
import { listenerChange, standInAnswer } from './standInState';
import { cpuCores, foldActivity, progressWitness, pushCpuSample, stallSignalText } from './witnessMoves';
import { NOISE_SHARE, pushSample, RATE_WINDOW_MS, windowRate, type IoSample } from './ioRate';
import { UNHEALTHY_AFTER_FAILURES, type LoadState, type Signal, type Verdict } from './loadStateTypes';
import {
  advancePhase,
  foldJournal,
  kept,
  progressFor,
  withErrorLine,
  withEta,
  witnessDisagreement,
} from './loadProgress';

export { UNHEALTHY_AFTER_FAILURES } from './loadStateTypes';
export type { HttpVerdict, LoadState, Signal, Verdict } from './loadStateTypes';
export { bytesFraction, witnessDisagreement } from './loadProgress';

export function initialState(at: number): LoadState {
  return {
    verdict: 'loading',
    phase: undefined,
    watchStartedAt: at,
    restartRequestedAt: undefined,
    mainPid: undefined,
    processStartedAt: undefined,
    baselineRestarts: undefined,
    unit: undefined,
    shards: undefined,
    cudaGraphBatches: undefined,
    progress: undefined,
    lastProgressAt: at,
    lastSignal: undefined,
    http: undefined,
    readyLogSeen: false,
    completion: undefined,
    readyAt: undefined,
    failure: undefined,
    recentErrors: [],
    connected: true,
    downSince: undefined,
    connectionError: undefined,
    connectionErrorKind: undefined,
    stalled: false,
    healthFailures: 0,
    confirmedAt: undefined,
    journal: undefined,
    restartedBy: undefined,
    io: undefined,
    ioSamples: [],
    ioTotals: { coldBytes: 0, coldMs: 0, warmBytes: 0, warmMs: 0 },
    readRate: undefined,
    gpu: undefined,
    gpuPeakMiB: 0,
    phaseTimes: {},
    prior: undefined,
    eta: undefined,
    witnessWarning: undefined,
    activity: undefined,
    lineActivity: undefined,
    weightsEnded: 0,
    weightsDone: false,
    cpu: undefined,
    cpuSamples: [],
    progressMark: { readBytes: 0, gpuUsedMiB: undefined },
    lastProgressWitness: undefined,
    standIn: undefined,
  };
}

export function isAlive(unit: UnitStatus): boolean {
  return (
    unit.mainPid > 0 &&
    (unit.activeState === 'active' || unit.activeState === 'activating' || unit.activeState === 'reloading')
  );
}

function exitDescription(unit: UnitStatus): string {
  // systemd's and Docker's (OOMKilled) word for the kernel's OOM killer.
  if (unit.result === 'oom-kill') return `killed by signal ${unit.execMainStatus ?? 9} (out of memory: the OOM killer)`;
  if (unit.execMainCode === 'killed' || unit.execMainCode === 'dumped') {
    return `killed by signal ${unit.execMainStatus ?? '?'}${unit.execMainCode === 'dumped' ? ' (core dumped)' : ''}`;
  }
  if (unit.execMainStatus !== undefined) return `exited with status ${unit.execMainStatus}`;
  return `ended (${unit.result || unit.activeState})`;
}

/** Who restarts the service: systemd, or Docker (its restart policy) for a container. */
function managerOf(unit: UnitStatus): string {
  return unit.manager === 'docker' ? 'Docker' : 'systemd';
}

function notFound(unit: UnitStatus, after: boolean): string {
  if (unit.manager === 'docker')
    return `${unit.id ?? 'the container'} does not exist${after ? ' any more' : ''} (docker inspect: no such container)`;
  return after
    ? 'the unit is no longer known to systemd (LoadState=not-found)'
    : 'the unit is not known to systemd (LoadState=not-found)';
}

/** Why the unit, as seen now, means the load has failed; undefined when it has not. */
function unitFailure(state: LoadState, unit: UnitStatus): string | undefined {
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
  if (state.mainPid !== undefined && !isAlive(unit) && unit.activeState !== 'deactivating') {
    return (unit.result === 'success' && unit.execMainStatus === 0) || unit.stopRequested
      ? undefined
      : `the service ${exitDescription(unit)}`;
  }
  return undefined;
}

function verdictOf(state: LoadState): Verdict {
  if (state.failure) return 'failed';
  if (state.readyAt !== undefined) {
    if (!state.connected) return 'unreachable';
    return state.healthFailures >= UNHEALTHY_AFTER_FAILURES ? 'unhealthy' : 'ready';
  }
  if (!state.connected) return 'unreachable';
  if (state.restartRequestedAt !== undefined && state.mainPid === undefined) {
    if (state.unit?.activeState === 'deactivating') return 'stopping';
    // Our restart always starts a new process; a stop by someone else may not.
    if (
      state.restartedBy === 'someone else' &&
      state.unit &&
      !isAlive(state.unit) &&
      state.unit.activeState !== 'activating'
    )
      return 'stopped';
    return 'restarting';
  }
  if (state.unit && !isAlive(state.unit) && state.unit.activeState !== 'activating') return 'stopped';
  if (state.stalled) return 'stalled';
  if (state.phase === 'warming up') return 'warming up';
  return 'loading';
}

function finish(before: LoadState, after: LoadState, at: number, text: string | undefined): LoadState {
  if (after.failure === undefined && after.readyAt === undefined && before.failure === undefined) {
    const computed = progressFor(after);
    const progress = computed === undefined ? after.progress : Math.max(computed, after.progress ?? 0);
    after = { ...after, progress };
  }
  if (after.phase !== undefined && after.phaseTimes[after.phase] === undefined) {
    after = { ...after, phaseTimes: { ...after.phaseTimes, [after.phase]: at } };
  }
  after = foldActivity(before, after, at);
  const moved = progressWitness(before, after);
  if (moved !== undefined) {
    after = {
      ...after,
      lastProgressAt: at,
      lastProgressWitness: moved,
      stalled: false,
      progressMark: { readBytes: after.io?.readBytes ?? 0, gpuUsedMiB: after.gpu?.usedMiB },
    };
  } else if (after.gpu !== undefined && after.progressMark.gpuUsedMiB === undefined) {
    // The first GPU reading is where moves are measured from, not a move.
    after = { ...after, progressMark: { ...after.progressMark, gpuUsedMiB: after.gpu.usedMiB } };
  }
  if (after.failure === undefined && after.readyAt === undefined) {
    after = withEta(after, at);
    if (after.witnessWarning === undefined) {
      const warning = witnessDisagreement(after);
      if (warning) after = { ...after, witnessWarning: warning };
    }
  } else if (after.eta !== undefined) {
    after = { ...after, eta: undefined };
  }
  if (text !== undefined) after = { ...after, lastSignal: { at, text } };
  return { ...after, verdict: verdictOf(after) };
}

function fail(state: LoadState, summary: string): LoadState {
  if (state.failure || state.readyAt !== undefined) return state;
  return { ...state, failure: { summary, lines: state.recentErrors } };
}

/**
 * Folds one signal into the load state. Pure: the same signals in the same order give the
 * same state. `ready` needs SGLang's own readiness (the ready log line or /health 200) and
 * then a real completion whose JSON has a non-empty `choices` array, from the same process.
 */
export function reduce(state: LoadState, signal: Signal): LoadState {
  if (signal.kind === 'journalStatus') return reduceJournalStatus(state, signal);
  if (state.readyAt !== undefined || state.failure !== undefined) return reduceSettled(state, signal);
  switch (signal.kind) {
    case 'restartRequested': {
      const restartedBy = signal.external ? 'someone else' : 'us';
      const next: LoadState = { ...state, restartRequestedAt: signal.at, mainPid: undefined, restartedBy };
      return finish(
        state,
        next,
        signal.at,
        signal.external ? 'the unit was stopped or restarted by someone else' : 'restart requested',
      );
    }
    case 'restartFailed':
      return finish(state, fail(state, signal.message), signal.at, signal.message);
    case 'attached': {
      const unit = signal.unit;
      const alive = isAlive(unit);
      let next: LoadState = {
        ...state,
        unit,
        mainPid: alive ? unit.mainPid : undefined,
        processStartedAt: unit.execMainStartedAt,
        baselineRestarts: unit.nRestarts,
        confirmedAt: signal.at,
        // After our own restart the process is just starting; attached to a load under way, the
        // phase (and percentage) is unknown until the journal, read from the process start, says.
        phase: alive && state.restartRequestedAt !== undefined ? (state.phase ?? 'starting') : state.phase,
      };
      if (unit.loadState === 'not-found') {
        next = fail(next, unitFailure(next, unit) ?? notFound(unit, false));
      } else if (!alive && state.restartRequestedAt !== undefined && unit.subState === 'auto-restart') {
        // The new run already crashed before the first look, and systemd restarts it again.
        next = fail(
          next,
          `the service crashed and ${managerOf(unit)} is restarting it (${exitDescription(unit)}; ${unit.manager === 'docker' ? 'its restart policy restarts it' : 'the unit restarts on failure'}: crash loop)`,
        );
      } else if (!alive && state.restartRequestedAt !== undefined) {
        next = fail(next, `the service did not start: it ${exitDescription(unit)}`);
      } else if (!alive && unit.activeState === 'failed') {
        next = fail(next, `the service ${exitDescription(unit)}`);
      }
      return finish(state, next, signal.at, `unit ${unit.activeState}/${unit.subState}, PID ${unit.mainPid}`);
    }
    case 'unit': {
      // Before the new process is attached, the unit still shows the old one (stopping) or none.
      if (!isAttached(state)) {
        const changed =
          state.unit?.activeState !== signal.unit.activeState || state.unit?.subState !== signal.unit.subState;
        const next: LoadState = { ...state, unit: signal.unit, confirmedAt: signal.at };
        return finish(
          state,
          next,
          signal.at,
          changed ? `unit ${signal.unit.activeState}/${signal.unit.subState}` : undefined,
        );
      }
      const why = unitFailure(state, signal.unit);
      const observed: LoadState = { ...state, unit: signal.unit, confirmedAt: signal.at };
      const next = why ? fail(observed, why) : observed;
      const changed =
        state.unit?.activeState !== signal.unit.activeState || state.unit?.subState !== signal.unit.subState;
      return finish(
        state,
        next,
        signal.at,
        changed ? `unit ${signal.unit.activeState}/${signal.unit.subState}` : undefined,
      );
    }
    case 'journal': {
      const text = kept(signal.text);
      let next = foldJournal(state, signal.event, text, signal.at);
      // The engine's own line says it is up: the phase no longer rests on HTTP alone.
      const up =
        signal.event.type === 'httpUp' ||
        signal.event.type === 'ready' ||
        (signal.event.type === 'phase' && phaseRank(signal.event.phase) >= phaseRank('warming up'));
      if (next.phaseBeforeHttp && up) next = { ...next, phaseBeforeHttp: undefined };
      const relevant = signal.event.type !== 'systemd' || signal.event.what !== 'started';
      return finish(state, next, signal.at, relevant ? text : undefined);
    }
    case 'http': {
      if (state.standIn) return standInAnswer(state, signal.at, `HTTP: ${signal.detail}`);
      let next: LoadState = { ...state, http: signal.result, confirmedAt: signal.at };
      if (signal.result === 'warming' || signal.result === 'healthy') {
        next = advancePhase(next, 'warming up');
        if (next.phase !== state.phase) next = { ...next, phaseBeforeHttp: { phase: state.phase, at: signal.at } };
      }
      const changed = state.http !== signal.result;
      return finish(state, next, signal.at, changed ? `HTTP: ${signal.detail}` : undefined);
    }
    case 'listener': {
      const change = listenerChange(state, signal.standIn);
      return change ? finish(state, change.next, signal.at, change.text) : state;
    }
    case 'completion': {
      if (state.standIn) return standInAnswer(state, signal.at, `completion: ${signal.detail}`);
      const next: LoadState = {
        ...state,
        completion: { ok: signal.ok, detail: signal.detail },
        confirmedAt: signal.at,
        readyAt: signal.ok && state.mainPid !== undefined && state.connected ? signal.at : undefined,
        phase: signal.ok && state.mainPid !== undefined ? 'ready' : state.phase,
      };
      return finish(
        state,
        next.readyAt !== undefined ? { ...next, progress: 1 } : next,
        signal.at,
        `completion: ${signal.detail}`,
      );
    }
    case 'connection': {
      if (signal.up === state.connected) return state;
      const next: LoadState = signal.up
        ? {
            ...state,
            connected: true,
            downSince: undefined,
            connectionError: undefined,
            connectionErrorKind: undefined,
            http: undefined,
          }
        : {
            ...state,
            connected: false,
            downSince: signal.at,
            connectionError: signal.error,
            connectionErrorKind: signal.errorKind,
            http: undefined,
          };
      return finish(
        state,
        next,
        signal.at,
        signal.up ? 'connection restored' : `connection lost: ${signal.error ?? 'unknown error'}`,
      );
    }
    case 'io': {
      const sample: IoSample = {
        at: signal.at,
        bytes: signal.readBytes,
        ...(signal.coldBytes !== undefined ? { coldBytes: signal.coldBytes } : {}),
      };
      const ioSamples = pushSample(state.ioSamples, sample);
      const prev = state.ioSamples[state.ioSamples.length - 1];
      let ioTotals = state.ioTotals;
      if (prev && signal.at > prev.at) {
        const dt = signal.at - prev.at;
        const dCold =
          prev.coldBytes !== undefined && sample.coldBytes !== undefined
            ? Math.max(0, sample.coldBytes - prev.coldBytes)
            : 0;
        const dWarm = Math.max(0, sample.bytes - prev.bytes - dCold);
        // An interval counts for the kind that did most of its reading, and only when that is more
        // than a trickle (sockets, imports after the weights would make a warm rate of ~0 MB/s).
        const model = signal.totalBytes ?? state.io?.totalBytes ?? state.prior?.totalBytes;
        const trickle = model !== undefined ? (model * NOISE_SHARE * dt) / RATE_WINDOW_MS : 0;
        if (dCold > trickle && dCold >= dWarm)
          ioTotals = { ...ioTotals, coldBytes: ioTotals.coldBytes + dCold, coldMs: ioTotals.coldMs + dt };
        else if (dWarm > trickle && dWarm > dCold)
          ioTotals = { ...ioTotals, warmBytes: ioTotals.warmBytes + dWarm, warmMs: ioTotals.warmMs + dt };
      }
      const totalBytes = signal.totalBytes ?? state.io?.totalBytes;
      const allRead =
        state.phase === 'loading weights' &&
        state.weightsReadAt === undefined &&
        totalBytes !== undefined &&
        totalBytes > 0 &&
        signal.readBytes >= totalBytes;
      const next: LoadState = {
        ...state,
        ...(allRead ? { weightsReadAt: signal.at } : {}),
        io: {
          at: signal.at,
          readBytes: Math.max(signal.readBytes, state.io?.readBytes ?? 0),
          ...(signal.coldBytes !== undefined ? { coldBytes: signal.coldBytes } : {}),
          ...(totalBytes !== undefined ? { totalBytes } : {}),
        },
        ioSamples,
        ioTotals,
        readRate: windowRate(ioSamples),
      };
      return finish(state, next, signal.at, undefined);
    }
    case 'gpu': {
      const next: LoadState = {
        ...state,
        gpu: {
          at: signal.at,
          usedMiB: signal.usedMiB,
          totalMiB: signal.totalMiB,
          perGpu: signal.perGpu,
          ...(signal.utilPercent !== undefined ? { utilPercent: signal.utilPercent } : {}),
        },
        gpuPeakMiB: Math.max(state.gpuPeakMiB, signal.usedMiB),
      };
      return finish(state, next, signal.at, undefined);
    }
    case 'cpu': {
      const cpuSamples = pushCpuSample(state.cpuSamples, { at: signal.at, seconds: signal.cpuSeconds });
      const next: LoadState = {
        ...state,
        cpuSamples,
        cpu: { at: signal.at, seconds: signal.cpuSeconds, cores: cpuCores(cpuSamples) },
      };
      return finish(state, next, signal.at, undefined);
    }
    case 'prior':
      return finish(state, { ...state, prior: signal.prior }, signal.at, undefined);
    case 'tick': {
      const alive = state.unit !== undefined && isAlive(state.unit);
      const stalled = alive && state.connected && signal.at - state.lastProgressAt >= signal.stallMs;
      // (a quiet step is named after a while: the clock alone may name it)
      const named = foldActivity(state, state, signal.at).activity !== state.activity;
      if (stalled === state.stalled && !named) return state;
      return finish(state, { ...state, stalled }, signal.at, stalled ? stallSignalText(state, signal.at) : undefined);
    }
  }
}

/** True once the load is tied to one process of the unit (after `attached`). */
export function isAttached(state: LoadState): boolean {
  return state.baselineRestarts !== undefined;
}

function reduceJournalStatus(state: LoadState, signal: Extract<Signal, { kind: 'journalStatus' }>): LoadState {
  if (state.journal?.readable === signal.readable && state.journal.detail === signal.detail) return state;
  const journal = { readable: signal.readable, ...(signal.detail !== undefined ? { detail: signal.detail } : {}) };
  return { ...state, journal };
}

/** Why a unit seen after ready means the server is gone; undefined while it still serves. */
function lostAfterReady(unit: UnitStatus): string | undefined {
  if (unit.loadState === 'not-found') return notFound(unit, true);
  if (unit.subState === 'auto-restart')
    return `the service ${exitDescription(unit)} after it was ready, and ${managerOf(unit)} is restarting it`;
  if (unit.activeState === 'failed' || !isAlive(unit)) return `the service ${exitDescription(unit)} after it was ready`;
  return undefined;
}

/**
 * A load that has ended (ready or failed) still takes in what keeps it true: the connection,
 * /health answers after ready (three failures in a row: unhealthy), the unit (a process gone
 * after ready: failed), journal error lines (the cause of a failure).
 */
function reduceSettled(state: LoadState, signal: Signal): LoadState {
  const settle = (next: LoadState, text?: string): LoadState => {
    const verdict = verdictOf(next);
    const lastSignal = text !== undefined ? { at: signal.at, text } : next.lastSignal;
    return { ...next, verdict, lastSignal };
  };
  const serving = state.readyAt !== undefined && state.failure === undefined;
  switch (signal.kind) {
    case 'journal': {
      if (signal.event.type !== 'error') return state;
      const text = kept(signal.text);
      // Serving: only the last lines (a crash after days of request errors is told by its own).
      const recentErrors = withErrorLine(state.recentErrors, text, !serving);
      const failure = state.failure ? { ...state.failure, lines: recentErrors } : undefined;
      return settle({ ...state, recentErrors, failure }, serving ? text : undefined);
    }
    case 'http': {
      if (!serving) return state;
      const healthFailures = signal.result === 'healthy' ? 0 : state.healthFailures + 1;
      const next = settle({ ...state, http: signal.result, healthFailures, confirmedAt: signal.at });
      const changed = next.verdict !== state.verdict || (signal.result !== state.http && healthFailures <= 1);
      return changed ? { ...next, lastSignal: { at: signal.at, text: `HTTP: ${signal.detail}` } } : next;
    }
    case 'unit': {
      const observed: LoadState = { ...state, unit: signal.unit, confirmedAt: signal.at };
      const why = serving ? lostAfterReady(signal.unit) : undefined;
      if (!why) return settle(observed);
      return settle({ ...observed, failure: { summary: why, lines: state.recentErrors } }, why);
    }
    case 'connection': {
      if (signal.up === state.connected) return state;
      const next: LoadState = signal.up
        ? {
            ...state,
            connected: true,
            downSince: undefined,
            connectionError: undefined,
            connectionErrorKind: undefined,
          }
        : {
            ...state,
            connected: false,
            downSince: signal.at,
            connectionError: signal.error,
            connectionErrorKind: signal.errorKind,
          };
      return settle(next, signal.up ? 'connection restored' : `connection lost: ${signal.error ?? 'unknown error'}`);
    }
    default:
      return state;
  }
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

/** "9m 42s", "42s", "1h 3m". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}
