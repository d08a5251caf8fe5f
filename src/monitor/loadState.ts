import { phaseRank, type GpuMemory, type JournalEvent, type LoadPhase, type UnitStatus } from '../engine/events';
import type { Activity } from '../engine/activity';
import {
  applyActivityEvent,
  cpuCores,
  foldActivity,
  progressWitness,
  pushCpuSample,
  stallSignalText,
  type CpuSample,
  type ProgressMark,
} from './witnessMoves';
import { detach } from '../util/detach';
import { estimateEta, NOISE_SHARE, pushSample, RATE_WINDOW_MS, windowRate, type IoSample, type LoadPrior } from './eta';

/** The word the status bar shows. */
export type Verdict =
  | 'stopped'
  | 'stopping'
  | 'restarting'
  | 'loading'
  | 'warming up'
  | 'ready'
  | 'unhealthy'
  | 'failed'
  | 'unreachable'
  | 'stalled';

/** /health failures in a row, after ready and while the process lives, that make a server unhealthy. */
export const UNHEALTHY_AFTER_FAILURES = 3;

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
  /** The transport's kind of fault (e.g. host-key-changed, auth), when the connection is down. */
  readonly connectionErrorKind: string | undefined;
  readonly stalled: boolean;
  /** /health answers in a row that were not 200, counted once the server is ready. */
  readonly healthFailures: number;
  /** The last time the host itself confirmed what this state says (a unit, journal or HTTP answer). */
  readonly confirmedAt: number | undefined;
  /** Whether the unit's journal can be read; undefined until journalctl has said either way. */
  readonly journal: { readonly readable: boolean; readonly detail?: string } | undefined;
  /** Set when the restart was not ours: someone else (or systemd) restarted the unit. */
  readonly restartedBy: 'us' | 'someone else' | undefined;
  // --- witnesses (issue 4) ---
  /** Latest bytes witness: bytes read by MainPID and its descendants, and the model's size. */
  readonly io:
    | { readonly at: number; readonly readBytes: number; readonly coldBytes?: number; readonly totalBytes?: number }
    | undefined;
  /** Recent bytes samples (last ~60 s), for the read rate and the ETA. */
  readonly ioSamples: readonly IoSample[];
  /** Bytes/s over the last ~30 s of samples. */
  readonly readRate: number | undefined;
  /**
   * Bytes and time spent reading, split into cold (read_bytes grew) and warm (only the rest
   * grew), summed over the whole load: the mean rates the history keeps.
   */
  readonly ioTotals: {
    readonly coldBytes: number;
    readonly coldMs: number;
    readonly warmBytes: number;
    readonly warmMs: number;
  };
  /** Latest GPU memory reading (total over GPUs and per GPU). */
  readonly gpu:
    | {
        readonly at: number;
        readonly usedMiB: number;
        readonly totalMiB: number;
        readonly perGpu: readonly GpuMemory[];
        readonly utilPercent?: number;
      }
    | undefined;
  /** Highest total GPU memory seen in this load (moves are measured from progressMark, see witnessMoves.ts). */
  readonly gpuPeakMiB: number;
  /** When each phase was first seen. */
  readonly phaseTimes: Readonly<Partial<Record<LoadPhase, number>>>;
  /** What history and the page cache said before the load (rates, fixed phases, residency). */
  readonly prior: LoadPrior | undefined;
  /** Estimated time of readiness, once there is enough signal; recomputed at each signal. */
  readonly eta: { readonly at: number; readonly readyAt: number; readonly basis: string } | undefined;
  /** Set once when the shard count and the bytes read disagree badly; the watcher logs it. */
  readonly witnessWarning: string | undefined;
  // --- named quiet phases and stalls (issue 17, docs/phases-and-stalls.md) ---
  /** The long quiet step under way inside the phase (a JIT compile, weights after the last shard), if known. */
  readonly activity: Activity | undefined;
  /** The step the engine's own lines announced (activity is this, else one the state implies). */
  readonly lineActivity: Activity | undefined;
  /** SGLang's `Load weight end` lines seen (one per rank: the others may still be processing theirs). */
  readonly weightsEnded: number;
  /** vLLM said its weights are loaded (`Loading weights took`: one line for every worker). */
  readonly weightsDone: boolean;
  /** CPU time of the service's process tree: the latest reading, and the cores it kept busy lately. */
  readonly cpu: { readonly at: number; readonly seconds: number; readonly cores: number | undefined } | undefined;
  readonly cpuSamples: readonly CpuSample[];
  /** The witnesses' readings at the last progress: a move is measured from there, not from the last reading. */
  readonly progressMark: ProgressMark;
  /** Which witness moved last (at lastProgressAt), for "last seen". */
  readonly lastProgressWitness: string | undefined;
}

export type Signal =
  | { readonly kind: 'restartRequested'; readonly at: number; readonly external?: boolean }
  /** Whether journalctl can read the unit's journal (it says so on stderr, or by exiting). */
  | { readonly kind: 'journalStatus'; readonly at: number; readonly readable: boolean; readonly detail?: string }
  /** The unit as seen right after `systemctl restart` returned (or when attaching). */
  | { readonly kind: 'attached'; readonly at: number; readonly unit: UnitStatus }
  | { readonly kind: 'restartFailed'; readonly at: number; readonly message: string }
  | { readonly kind: 'unit'; readonly at: number; readonly unit: UnitStatus }
  | { readonly kind: 'journal'; readonly at: number; readonly event: JournalEvent; readonly text: string }
  | { readonly kind: 'http'; readonly at: number; readonly result: HttpVerdict; readonly detail: string }
  | { readonly kind: 'completion'; readonly at: number; readonly ok: boolean; readonly detail: string }
  | {
      readonly kind: 'connection';
      readonly at: number;
      readonly up: boolean;
      readonly error?: string;
      readonly errorKind?: string;
    }
  | { readonly kind: 'tick'; readonly at: number; readonly stallMs: number }
  /**
   * Bytes read by MainPID + descendants. `readBytes` is the larger of read_bytes (storage reads,
   * mmap faults included, page-cache hits not), rchar (read() calls, page-cache hits included,
   * mmap faults not) and the cgroup's rbytes: a cold mmap load shows only in read_bytes, a
   * read()-based or page-cached load only in rchar, and a filesystem without block accounting
   * (tmpfs, some overlay/container setups) keeps read_bytes at 0; taking the larger never counts
   * a byte twice and never stays at 0 while either grows. `coldBytes` is read_bytes alone.
   */
  | {
      readonly kind: 'io';
      readonly at: number;
      readonly readBytes: number;
      readonly coldBytes?: number;
      readonly totalBytes?: number;
    }
  | {
      readonly kind: 'gpu';
      readonly at: number;
      readonly usedMiB: number;
      readonly totalMiB: number;
      readonly perGpu: readonly GpuMemory[];
      readonly utilPercent?: number;
    }
  /** CPU seconds (user + system) of MainPID and its descendants, or of the unit's cgroup. */
  | { readonly kind: 'cpu'; readonly at: number; readonly cpuSeconds: number }
  /** History / page-cache knowledge for this load (ETA prior); sent at the start of a watch. */
  | { readonly kind: 'prior'; readonly at: number; readonly prior: LoadPrior };

const MAX_ERROR_LINES = 12;
/**
 * While a load runs, its first error lines are kept as well as its last: the first exception
 * of the first rank that failed says why (server/rootCause), the last ones how it ended.
 */
const FIRST_ERROR_LINES = 12;

function withErrorLine(lines: readonly string[], text: string, keepFirst: boolean): readonly string[] {
  const next = [...lines, text];
  const limit = keepFirst ? FIRST_ERROR_LINES + MAX_ERROR_LINES : MAX_ERROR_LINES;
  if (next.length <= limit) return next;
  return keepFirst
    ? [...next.slice(0, FIRST_ERROR_LINES), ...next.slice(-MAX_ERROR_LINES)]
    : next.slice(-MAX_ERROR_LINES);
}

/** Characters of a journal line the state keeps (the watcher passes 300). */
const MAX_LINE_CHARS = 1_000;

/**
 * A journal line as the state keeps it: cut, and copied off the line it was cut from (a V8
 * slice of a 10 MB line keeps the 10 MB alive as long as the state keeps the slice).
 */
function kept(text: string): string {
  return detach(text.slice(0, MAX_LINE_CHARS));
}

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

function progressFor(state: LoadState): number | undefined {
  switch (state.phase) {
    case undefined:
      return undefined;
    case 'starting':
      return 0;
    case 'loading weights': {
      if (state.shards) return (state.shards.done / Math.max(1, state.shards.total)) * WEIGHTS_SHARE;
      const bytes = bytesFraction(state);
      return bytes !== undefined ? Math.min(1, bytes) * WEIGHTS_SHARE : 0;
    }
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

function totalBytesOf(state: LoadState): number | undefined {
  return state.io?.totalBytes ?? state.prior?.totalBytes;
}

/** Bytes read / model bytes, when both are known. */
export function bytesFraction(state: LoadState): number | undefined {
  const total = totalBytesOf(state);
  if (!state.io || total === undefined || total <= 0) return undefined;
  return Math.min(1, state.io.readBytes / total);
}

/** Shard % and byte % more than 25 points apart after 20 % of the load: a sentence to log. */
export function witnessDisagreement(state: LoadState): string | undefined {
  if (state.phase !== 'loading weights' || !state.shards) return undefined;
  const bytes = bytesFraction(state);
  if (bytes === undefined) return undefined;
  const shards = state.shards.done / Math.max(1, state.shards.total);
  if (Math.max(bytes, shards) < 0.2 || Math.abs(bytes - shards) <= 0.25) return undefined;
  const why =
    bytes < shards
      ? 'fewer bytes read than shards done: the weights are probably in the page cache (cache hits of an mmap load are not counted), or another process tree reads them'
      : 'more bytes read than shards done: something else in the service reads files, or the shard lines lag';
  return `Witnesses disagree: shards ${Math.round(shards * 100)}% vs bytes read ${Math.round(bytes * 100)}% (${why}).`;
}

function withEta(state: LoadState, at: number): LoadState {
  // A named quiet step (a JIT compile, weights after the last shard) has no forecast: no ETA rather than "30s left" for minutes.
  if (state.activity !== undefined) return state.eta === undefined ? state : { ...state, eta: undefined };
  const weightsEndedAt =
    state.phaseTimes['allocating KV cache'] ??
    state.phaseTimes['capturing CUDA graphs'] ??
    state.phaseTimes['warming up'];
  const totalBytes = totalBytesOf(state);
  const eta = estimateEta({
    now: at,
    phase: state.phase,
    ...(state.phaseTimes['loading weights'] !== undefined
      ? { weightsStartedAt: state.phaseTimes['loading weights'] }
      : {}),
    ...(weightsEndedAt !== undefined ? { weightsEndedAt } : {}),
    ...(totalBytes !== undefined ? { totalBytes } : {}),
    samples: state.ioSamples,
    ...(state.shards ? { shards: state.shards } : {}),
    lastProgressAt: state.lastProgressAt,
    ...(state.prior ? { prior: state.prior } : {}),
  });
  return { ...state, eta: eta ? { at, readyAt: at + eta.remainingMs, basis: eta.basis } : undefined };
}

function advancePhase(state: LoadState, phase: LoadPhase): LoadState {
  if (state.phase !== undefined && phaseRank(phase) <= phaseRank(state.phase)) return state;
  return { ...state, phase };
}

function foldJournal(state: LoadState, event: JournalEvent, text: string, at: number): LoadState {
  switch (event.type) {
    case 'phase':
      return advancePhase(state, event.phase);
    case 'shards': {
      // 400 digits read as Infinity: Infinity/Infinity would make the progress NaN.
      if (!Number.isFinite(event.done) || !Number.isFinite(event.total)) return state;
      const next = advancePhase(state, 'loading weights');
      const done = Math.max(event.done, next.shards?.done ?? 0);
      return { ...next, shards: { done, total: event.total } };
    }
    case 'weightsLoaded': {
      // SGLang's line names the model class (`type=`), once per rank; vLLM's lines do not, and say it for all workers.
      const next =
        event.modelType !== undefined
          ? { ...advancePhase(state, 'loading weights'), weightsEnded: state.weightsEnded + 1 }
          : { ...advancePhase(state, 'loading weights'), weightsDone: true };
      return next.shards ? { ...next, shards: { done: next.shards.total, total: next.shards.total } } : next;
    }
    case 'kvCache':
      return advancePhase(state, 'allocating KV cache');
    case 'cudaGraphBatches': {
      if (!Number.isFinite(event.done) || !Number.isFinite(event.total)) return state;
      const next = advancePhase(state, 'capturing CUDA graphs');
      const done = Math.max(event.done, next.cudaGraphBatches?.done ?? 0);
      return { ...next, cudaGraphBatches: { done, total: event.total } };
    }
    case 'graphsCaptured': {
      const next = advancePhase(state, 'capturing CUDA graphs');
      const total = next.cudaGraphBatches?.total ?? 1;
      return next.phase === 'capturing CUDA graphs' ? { ...next, cudaGraphBatches: { done: total, total } } : next;
    }
    case 'httpUp':
      return advancePhase(state, 'warming up');
    case 'ready':
      return { ...advancePhase(state, 'warming up'), readyLogSeen: true };
    case 'error': {
      const recentErrors = withErrorLine(state.recentErrors, text, true);
      return { ...state, recentErrors };
    }
    case 'activity':
      return applyActivityEvent(state, event, at);
    case 'systemd':
      return state;
  }
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
      const next = foldJournal(state, signal.event, text, signal.at);
      const relevant = signal.event.type !== 'systemd' || signal.event.what !== 'started';
      return finish(state, next, signal.at, relevant ? text : undefined);
    }
    case 'http': {
      let next: LoadState = { ...state, http: signal.result, confirmedAt: signal.at };
      if (signal.result === 'warming' || signal.result === 'healthy') next = advancePhase(next, 'warming up');
      const changed = state.http !== signal.result;
      return finish(state, next, signal.at, changed ? `HTTP: ${signal.detail}` : undefined);
    }
    case 'completion': {
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
      const next: LoadState = {
        ...state,
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
      if (stalled === state.stalled) return state;
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
