import { phaseRank } from '../../engine/events';
import { listenerChange, standInAnswer } from './standInState';
import { foldActivity, progressWitness, stallSignalText } from './witnessMoves';
import type { LoadState, Signal } from './loadStateTypes';
import { advancePhase, foldJournal, kept, progressFor, withEta, witnessDisagreement } from './loadProgress';
import { crashLoop, exitDescription, hasRunningProcess, notFound, unitFailure } from './unitFailure';
import { didNotStart, restartSignal, serviceEnded, unitSignal } from '../../present/words/failureWords';
import { isTiedToRun, verdictOf } from './loadVerdict';
import { reduceSettled } from './loadSettled';
import { foldConnection, foldCpu, foldGpu, foldIo } from './loadReadings';

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
      return finish(state, next, signal.at, restartSignal(signal.external === true));
    }
    case 'restartFailed':
      return finish(state, fail(state, signal.message), signal.at, signal.message);
    case 'tiedToRun': {
      const unit = signal.unit;
      const alive = hasRunningProcess(unit);
      let next: LoadState = {
        ...state,
        unit,
        mainPid: alive ? unit.mainPid : undefined,
        processStartedAt: unit.execMainStartedAt,
        baselineRestarts: unit.nRestarts,
        confirmedAt: signal.at,
        // After our own restart the process is just starting; watching a load under way, the
        // phase (and percentage) is unknown until the journal, read from the process start, says.
        phase: alive && state.restartRequestedAt !== undefined ? (state.phase ?? 'starting') : state.phase,
      };
      if (unit.loadState === 'not-found') {
        next = fail(next, unitFailure(next, unit) ?? notFound(unit, false));
      } else if (!alive && state.restartRequestedAt !== undefined && unit.subState === 'auto-restart') {
        // The new run already crashed before the first look, and systemd restarts it again.
        next = fail(next, crashLoop(unit));
      } else if (!alive && state.restartRequestedAt !== undefined) {
        next = fail(next, didNotStart(exitDescription(unit)));
      } else if (!alive && unit.activeState === 'failed') {
        next = fail(next, serviceEnded(exitDescription(unit)));
      }
      return finish(state, next, signal.at, unitSignal(unit.activeState, unit.subState, unit.mainPid));
    }
    case 'unit': {
      // Before the watch is tied to the new process, the unit still shows the old one (stopping) or none.
      if (!isTiedToRun(state)) {
        const changed =
          state.unit?.activeState !== signal.unit.activeState || state.unit?.subState !== signal.unit.subState;
        const next: LoadState = { ...state, unit: signal.unit, confirmedAt: signal.at };
        return finish(
          state,
          next,
          signal.at,
          changed ? unitSignal(signal.unit.activeState, signal.unit.subState) : undefined,
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
        changed ? unitSignal(signal.unit.activeState, signal.unit.subState) : undefined,
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
      const { next, text } = foldConnection(state, signal, true);
      return finish(state, next, signal.at, text);
    }
    case 'io':
      return finish(state, foldIo(state, signal), signal.at, undefined);
    case 'gpu':
      return finish(state, foldGpu(state, signal), signal.at, undefined);
    case 'cpu':
      return finish(state, foldCpu(state, signal), signal.at, undefined);
    case 'prior':
      return finish(state, { ...state, prior: signal.prior }, signal.at, undefined);
    case 'tick': {
      const alive = state.unit !== undefined && hasRunningProcess(state.unit);
      const stalled = alive && state.connected && signal.at - state.lastProgressAt >= signal.stallMs;
      // (a quiet step is named after a while: the clock alone may name it)
      const named = foldActivity(state, state, signal.at).activity !== state.activity;
      if (stalled === state.stalled && !named) return state;
      return finish(state, { ...state, stalled }, signal.at, stalled ? stallSignalText(state, signal.at) : undefined);
    }
  }
}

function reduceJournalStatus(state: LoadState, signal: Extract<Signal, { kind: 'journalStatus' }>): LoadState {
  if (state.journal?.readable === signal.readable && state.journal.detail === signal.detail) return state;
  const journal = { readable: signal.readable, ...(signal.detail !== undefined ? { detail: signal.detail } : {}) };
  return { ...state, journal };
}
