import { phaseRank, type JournalEvent, type LoadPhase, type UnitStatus } from '../server/events';

/** The word the status bar shows. */
export type Verdict = 'stopped' | 'restarting' | 'loading' | 'warming up' | 'ready' | 'failed' | 'unreachable' | 'stalled';

export type HttpVerdict = 'refused' | 'warming' | 'healthy' | 'error';

/** Everything the monitor knows about one load. Built only by `reduce`. */
export interface LoadState {
  readonly verdict: Verdict;
  readonly phase: LoadPhase | undefined;
  readonly watchStartedAt: number;
  readonly restartRequestedAt: number | undefined;
  /** The service process this load belongs to; signals about another process end it. */
  readonly mainPid: number | undefined;
  readonly processStartedAt: number | undefined;
  readonly baselineRestarts: number | undefined;
  readonly unit: UnitStatus | undefined;
  readonly shards: { readonly done: number; readonly total: number } | undefined;
  readonly cudaGraphBatches: { readonly done: number; readonly total: number } | undefined;
  /** Overall progress of the load, 0..1, never decreasing within one process. */
  readonly progress: number | undefined;
  readonly lastProgressAt: number;
  readonly lastSignal: { readonly at: number; readonly text: string } | undefined;
  readonly http: HttpVerdict | undefined;
  readonly readyLogSeen: boolean;
  /** The last 1-token completion's verdict, when one was tried. */
  readonly completion: { readonly ok: boolean; readonly detail: string } | undefined;
  readonly readyAt: number | undefined;
  readonly failure: { readonly summary: string; readonly lines: readonly string[] } | undefined;
  readonly recentErrors: readonly string[];
  readonly connected: boolean;
  readonly downSince: number | undefined;
  readonly connectionError: string | undefined;
  readonly stalled: boolean;
}

export type Signal =
  | { readonly kind: 'restartRequested'; readonly at: number }
  /** The unit as seen right after `systemctl restart` returned (or when attaching). */
  | { readonly kind: 'attached'; readonly at: number; readonly unit: UnitStatus }
  | { readonly kind: 'restartFailed'; readonly at: number; readonly message: string }
  | { readonly kind: 'unit'; readonly at: number; readonly unit: UnitStatus }
  | { readonly kind: 'journal'; readonly at: number; readonly event: JournalEvent; readonly text: string }
  | { readonly kind: 'http'; readonly at: number; readonly result: HttpVerdict; readonly detail: string }
  | { readonly kind: 'completion'; readonly at: number; readonly ok: boolean; readonly detail: string }
  | { readonly kind: 'connection'; readonly at: number; readonly up: boolean; readonly error?: string }
  | { readonly kind: 'tick'; readonly at: number; readonly stallMs: number };

const MAX_ERROR_LINES = 12;

// Share of the whole load each phase stands for, so one percentage covers all of it.
// Weights dominate a cold start (minutes); KV allocation and graph capture take seconds to a minute.
const WEIGHTS_SHARE = 0.9;
const KV_DONE = 0.92;
const GRAPHS_DONE = 0.98;

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
    stalled: false,
  };
}

export function isAlive(unit: UnitStatus): boolean {
  return unit.mainPid > 0 && (unit.activeState === 'active' || unit.activeState === 'activating' || unit.activeState === 'reloading');
}

function exitDescription(unit: UnitStatus): string {
  if (unit.execMainCode === 'killed' || unit.execMainCode === 'dumped') {
    return `killed by signal ${unit.execMainStatus ?? '?'}${unit.execMainCode === 'dumped' ? ' (core dumped)' : ''}`;
  }
  if (unit.execMainStatus !== undefined) return `exited with status ${unit.execMainStatus}`;
  return `ended (${unit.result || unit.activeState})`;
}

/** Why the unit, as seen now, means the load has failed; undefined when it has not. */
function unitFailure(state: LoadState, unit: UnitStatus): string | undefined {
  if (unit.loadState === 'not-found') return 'the unit is not known to systemd (LoadState=not-found)';
  if (state.baselineRestarts !== undefined && unit.nRestarts > state.baselineRestarts) {
    return `the service crashed and systemd restarted it (${exitDescription(unit)}; NRestarts=${unit.nRestarts}: crash loop)`;
  }
  if (unit.subState === 'auto-restart') return `the service crashed and systemd is restarting it (${exitDescription(unit)})`;
  if (unit.activeState === 'failed') return `the service ${exitDescription(unit)}`;
  if (state.mainPid !== undefined && unit.mainPid > 0 && unit.mainPid !== state.mainPid) {
    return `the service process was replaced (PID ${state.mainPid} -> ${unit.mainPid}) before it became ready`;
  }
  if (state.mainPid !== undefined && !isAlive(unit) && unit.activeState !== 'deactivating') {
    return unit.result === 'success' && unit.execMainStatus === 0 ? undefined : `the service ${exitDescription(unit)}`;
  }
  return undefined;
}

function progressFor(state: LoadState): number | undefined {
  switch (state.phase) {
    case undefined:
      return undefined;
    case 'starting':
      return 0;
    case 'loading weights':
      return state.shards ? (state.shards.done / Math.max(1, state.shards.total)) * WEIGHTS_SHARE : 0;
    case 'allocating KV cache':
      return WEIGHTS_SHARE;
    case 'capturing CUDA graphs': {
      const graphs = state.cudaGraphBatches;
      return KV_DONE + (graphs ? (graphs.done / Math.max(1, graphs.total)) * (GRAPHS_DONE - KV_DONE) : 0);
    }
    case 'warming up':
      return GRAPHS_DONE;
    case 'ready':
      return 1;
  }
}

function advancePhase(state: LoadState, phase: LoadPhase): LoadState {
  if (state.phase !== undefined && phaseRank(phase) <= phaseRank(state.phase)) return state;
  return { ...state, phase };
}

function foldJournal(state: LoadState, event: JournalEvent, text: string): LoadState {
  switch (event.type) {
    case 'phase':
      return advancePhase(state, event.phase);
    case 'shards': {
      const next = advancePhase(state, 'loading weights');
      const done = Math.max(event.done, next.shards?.done ?? 0);
      return { ...next, shards: { done, total: event.total } };
    }
    case 'weightsLoaded': {
      const next = advancePhase(state, 'loading weights');
      return next.shards ? { ...next, shards: { done: next.shards.total, total: next.shards.total } } : next;
    }
    case 'kvCache':
      return advancePhase(state, 'allocating KV cache');
    case 'cudaGraphBatches': {
      const next = advancePhase(state, 'capturing CUDA graphs');
      const done = Math.max(event.done, next.cudaGraphBatches?.done ?? 0);
      return { ...next, cudaGraphBatches: { done, total: event.total } };
    }
    case 'httpUp':
      return advancePhase(state, 'warming up');
    case 'ready':
      return { ...advancePhase(state, 'warming up'), readyLogSeen: true };
    case 'error': {
      const recentErrors = [...state.recentErrors, text].slice(-MAX_ERROR_LINES);
      return { ...state, recentErrors };
    }
    case 'systemd':
      return state;
  }
}

function madeProgress(before: LoadState, after: LoadState): boolean {
  return (
    before.phase !== after.phase ||
    before.shards?.done !== after.shards?.done ||
    before.cudaGraphBatches?.done !== after.cudaGraphBatches?.done ||
    before.readyLogSeen !== after.readyLogSeen ||
    (before.http !== after.http && after.http !== 'error')
  );
}

function verdictOf(state: LoadState): Verdict {
  if (state.failure) return 'failed';
  if (state.readyAt !== undefined) return 'ready';
  if (!state.connected) return 'unreachable';
  if (state.restartRequestedAt !== undefined && state.mainPid === undefined) return 'restarting';
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
  if (madeProgress(before, after)) after = { ...after, lastProgressAt: at, stalled: false };
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
  if (state.readyAt !== undefined || state.failure !== undefined) {
    // A finished load only takes in what helps explain it.
    if (signal.kind === 'journal' && signal.event.type === 'error') {
      const recentErrors = [...state.recentErrors, signal.text].slice(-MAX_ERROR_LINES);
      const failure = state.failure ? { ...state.failure, lines: recentErrors } : undefined;
      return { ...state, recentErrors, failure };
    }
    return state;
  }
  switch (signal.kind) {
    case 'restartRequested':
      return finish(state, { ...state, restartRequestedAt: signal.at, mainPid: undefined }, signal.at, 'restart requested');
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
        phase: alive ? (state.phase ?? 'starting') : state.phase,
      };
      if (unit.loadState === 'not-found') {
        next = fail(next, unitFailure(next, unit) ?? 'the unit is not known to systemd');
      } else if (!alive && state.restartRequestedAt !== undefined) {
        next = fail(next, `the service did not start: it ${exitDescription(unit)}`);
      } else if (!alive && unit.activeState === 'failed') {
        next = fail(next, `the service ${exitDescription(unit)}`);
      }
      return finish(state, next, signal.at, `unit ${unit.activeState}/${unit.subState}, PID ${unit.mainPid}`);
    }
    case 'unit': {
      const why = unitFailure(state, signal.unit);
      const next = why ? fail({ ...state, unit: signal.unit }, why) : { ...state, unit: signal.unit };
      const changed = state.unit?.activeState !== signal.unit.activeState || state.unit?.subState !== signal.unit.subState;
      return finish(state, next, signal.at, changed ? `unit ${signal.unit.activeState}/${signal.unit.subState}` : undefined);
    }
    case 'journal': {
      const next = foldJournal(state, signal.event, signal.text);
      const relevant = signal.event.type !== 'systemd' || signal.event.what !== 'started';
      return finish(state, next, signal.at, relevant ? signal.text : undefined);
    }
    case 'http': {
      let next: LoadState = { ...state, http: signal.result };
      if (signal.result === 'warming' || signal.result === 'healthy') next = advancePhase(next, 'warming up');
      const changed = state.http !== signal.result;
      return finish(state, next, signal.at, changed ? `HTTP: ${signal.detail}` : undefined);
    }
    case 'completion': {
      const next: LoadState = {
        ...state,
        completion: { ok: signal.ok, detail: signal.detail },
        readyAt: signal.ok && state.mainPid !== undefined && state.connected ? signal.at : undefined,
        phase: signal.ok && state.mainPid !== undefined ? 'ready' : state.phase,
      };
      return finish(state, next.readyAt !== undefined ? { ...next, progress: 1 } : next, signal.at, `completion: ${signal.detail}`);
    }
    case 'connection': {
      if (signal.up === state.connected) return state;
      const next: LoadState = signal.up
        ? { ...state, connected: true, downSince: undefined, connectionError: undefined, http: undefined }
        : { ...state, connected: false, downSince: signal.at, connectionError: signal.error, http: undefined };
      return finish(state, next, signal.at, signal.up ? 'connection restored' : `connection lost: ${signal.error ?? 'unknown error'}`);
    }
    case 'tick': {
      const alive = state.unit !== undefined && isAlive(state.unit);
      const stalled = alive && state.connected && signal.at - state.lastProgressAt >= signal.stallMs;
      if (stalled === state.stalled) return state;
      return finish(state, { ...state, stalled }, signal.at, stalled ? `no progress for ${Math.round((signal.at - state.lastProgressAt) / 1000)} s` : undefined);
    }
  }
}

/** True when SGLang says it is ready and the completion that proves it has not yet passed. */
export function wantsCompletionProbe(state: LoadState): boolean {
  return (
    state.readyAt === undefined &&
    state.failure === undefined &&
    state.mainPid !== undefined &&
    state.connected &&
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
