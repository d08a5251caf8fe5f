import type { ServerProfile } from '../config/config';
import { errorText } from '../util/errors';
import { TransportError, type RemoteProcess, type Transport } from '../transport/transport';
import { JOURNAL_ACCESS_FIX, JournalReader, journalProblem } from '../engine/sglang/journal';
import { rootCause } from '../engine/rootCause';
import { targetFor, type ServiceTarget } from '../target/target';
import type { SglangClient } from '../engine/sglang/sglangHttp';
import { judgeCompletion, judgeHealth } from '../engine/sglang/sglangResponses';
import { isNewRun, isStarting, NO_RUN_YET, processKey, unitChangeAfterSettled } from './unitChange';
import type { UnitStatus } from '../engine/events';
import {
  initialState,
  isAlive,
  isFinished,
  reduce,
  wantsCompletionProbe,
  type LoadState,
  type Signal,
} from './loadState';
import type { LoadPrior } from './eta';
import { wantsWitnesses } from './witnessProbe';
import { samplerCommand, SamplerReader } from './sampler';
import { apiKeyFromArgv, modelPathOf } from '../engine/execStart';
import { compareServerUrl } from '../engine/sglang/sglangUrl';
import type { ModelSize } from '../host/procIo';
import { dropCacheWarning } from '../host/pageCache';

export interface WatchOptions {
  readonly pollIntervalMs: number;
  readonly stallMs: number;
  readonly loadTimeoutMs: number;
  readonly unreachableTimeoutMs: number;
  /**
   * After a load ends in ready, failed or stopped, keep watching (journal follow, /health and
   * the unit at this interval) so the state stays true; undefined: stop watching there.
   */
  readonly steadyIntervalMs?: number;
  /** /health says up but the completion keeps failing this long: alert (default 30 s). */
  readonly completionAlertMs?: number;
  /**
   * false: a node rank >= 1 of a multi-node server, which serves no HTTP: no /health or
   * completion; it is ready once its journal says its load is done (CUDA graphs captured).
   */
  readonly servesHttp?: boolean;
}

export type LogLevel = 'trace' | 'info' | 'warn' | 'error';

export interface WatcherDeps {
  readonly profile: ServerProfile;
  readonly transport: Transport;
  readonly http: SglangClient;
  readonly options: WatchOptions;
  readonly log: (level: LogLevel, message: string) => void;
  readonly now?: () => number;
  /** What history and the page cache say about this load (ETA prior), if known. */
  readonly prior?: LoadPrior;
  /** What is restarted and watched; default: the profile's unit or container (targetFor). */
  readonly target?: ServiceTarget;
  /** A look at the unit taken moments before a restart (by whoever decided to restart): not asked again. */
  readonly unitBefore?: UnitStatus;
}

/** How a watch ended. `state` is the last load state. */
export interface WatchOutcome {
  readonly end: 'ready' | 'failed' | 'stopped' | 'timeout' | 'unreachable' | 'cancelled';
  readonly state: LoadState;
  readonly message?: string;
}

/** Something the user should be told while the watch goes on (the fronts choose how). */
export interface WatchAlert {
  readonly kind: 'completion' | 'journal' | 'url' | 'unhealthy' | 'recovered';
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
}

const COMMAND_TIMEOUT_MS = 20_000;
/** While the port is seen closed, one /health every this many rounds (a backstop for the port witness). */
const HEALTH_BACKSTOP_ROUNDS = 5;

interface WantedSampler {
  readonly pid: number;
  readonly intervalMs: number;
  readonly listenPort: number | undefined;
}

function urlPort(url: string): number | undefined {
  try {
    const parsed = new URL(url);
    return parsed.port ? Number(parsed.port) : 80;
  } catch {
    return undefined;
  }
}

/**
 * `systemctl show` while only one of the journal and the sampler is live: a backstop (the journal
 * reports systemd's exit lines, the sampler a main process gone, at once).
 */
const UNIT_BACKSTOP_MS = 5 * 60_000;
const STEADY_UNIT_BACKSTOP_MS = 10 * 60_000;
const JOURNAL_RETRY_FIRST_MS = 1_000;
const JOURNAL_RETRY_MAX_MS = 60_000;
const COMPLETION_PROMPT = 'hi';
const COMPLETION_ALERT_MS = 30_000;
/** Journal lines read for the cause of a run found already failed. */
const FAILURE_TAIL_LINES = 200;
/** Reads of that tail while none of its lines tells the cause, this far apart. */
const FAILURE_TAIL_READS = 3;
const FAILURE_TAIL_RETRY_MS = 1_000;
/** A process that ends this soon after its start may have its last lines in the journal after systemd's. */
const EARLY_EXIT_MS = 5_000;

/**
 * Watches one unit: follows the journal over the SSH connection, polls the unit and the HTTP
 * server through the tunnel, and folds every signal into the pure LoadState. A load ends in
 * ready, failed, stopped, timeout, unreachable or cancelled; with `steadyIntervalMs` the watch
 * then goes on cheaply (the journal, /health and the unit now and then), so a server that dies
 * after ready is `failed` at once and a restart by someone else is followed as a new load.
 * Knows nothing of VS Code.
 */
export class LoadWatcher {
  private current: LoadState;
  private readonly listeners = new Set<(state: LoadState, previous: LoadState) => void>();
  private readonly endListeners = new Set<(outcome: WatchOutcome) => void>();
  private readonly alertListeners = new Set<(alert: WatchAlert) => void>();
  private mode: 'load' | 'steady' = 'load';
  private journal: RemoteProcess | undefined;
  /** The sampler (main process alive, bytes read, GPU memory) and what it was started for. */
  private sampler: ({ process: RemoteProcess | undefined } & WantedSampler) | undefined;
  /**
   * The sampler's look at the server's port while it loads. While no socket listens there, a
   * /health through the tunnel could only be refused: it is asked every HEALTH_BACKSTOP_ROUNDS
   * rounds instead of each, and at once when the port opens. Not trusted any more once /health
   * answered while the port looked closed (a server in another network namespace).
   */
  private port: { listening: boolean; at: number } | undefined;
  private portWitnessTrusted = true;
  private healthSkipped = 0;
  private journalStarting = false;
  private journalRetryMs = JOURNAL_RETRY_FIRST_MS;
  private journalSince: number | undefined;
  /** Set once the unit's current process is known: no journal before that. */
  private attached = false;
  /** After a restart (ours or not): the run that must be replaced before a new load is followed. */
  private awaitingRunAfter: string | undefined;
  /** systemd was seen stopping the unit (journal or `deactivating`): a process gone is stopped, not crashed. */
  private stopSeen = false;
  /** Journal entries older than this belong to an earlier process of the unit. */
  private processStartMonotonicUs: number | undefined;
  private journalReader = new JournalReader();
  private timer: NodeJS.Timeout | undefined;
  private journalRetry: NodeJS.Timeout | undefined;
  private probing = false;
  private unitProbeDue = true;
  private lastUnitProbeAt = 0;
  private lastHealthAt = 0;
  private probeAgain = false;
  private modelName: string | undefined;
  /** The model's *.safetensors total, read at attach from ExecStart's --model-path. */
  private modelBytes: number | undefined;
  private modelPath: string | undefined;
  /** ExecStart of the last `systemctl show`. */
  private execStartArgv: string[] = [];
  private completionFailingSince: number | undefined;
  /** The journal tail of a failed run: read once per run, and the end waits while it is read. */
  private failureCause: 'unread' | 'reading' | 'read' = 'unread';
  private readonly alerted = new Set<WatchAlert['kind']>();
  private settle: ((outcome: WatchOutcome) => void) | undefined;
  private running = false;
  private readonly disposables: { dispose(): void }[] = [];
  private readonly now: () => number;
  private readonly target: ServiceTarget;
  /** Where a path of the server's command line is on the host (a container's mounts). */
  private hostPath: (path: string) => string | undefined = (path) => path;

  constructor(private readonly deps: WatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.target = deps.target ?? targetFor(deps.profile);
    this.current = initialState(this.now());
  }

  get state(): LoadState {
    return this.current;
  }

  /** True while a load is followed (not yet ready, failed or stopped): a second restart must wait. */
  get loading(): boolean {
    return this.running && this.mode === 'load';
  }

  /** True until the watch has ended for good (steady watching included). */
  get active(): boolean {
    return this.running;
  }

  /** The model path (ExecStart --model-path) and its *.safetensors bytes, once read at attach. */
  get model(): { readonly path: string; readonly bytes: number | undefined } | undefined {
    return this.modelPath === undefined ? undefined : { path: this.modelPath, bytes: this.modelBytes };
  }

  onDidChange(listener: (state: LoadState, previous: LoadState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Every end of a load (a steady watch can see several: a crash after ready, a new load...). */
  onDidEnd(listener: (outcome: WatchOutcome) => void): { dispose(): void } {
    this.endListeners.add(listener);
    return { dispose: () => this.endListeners.delete(listener) };
  }

  onAlert(listener: (alert: WatchAlert) => void): { dispose(): void } {
    this.alertListeners.add(listener);
    return { dispose: () => this.alertListeners.delete(listener) };
  }

  /**
   * Restarts the unit (mode 'restart') or attaches to whatever it is doing now ('attach'),
   * then watches. Resolves with how the first load ended; a steady watch goes on after that
   * until cancelled (see onDidEnd for what it sees).
   */
  async run(mode: 'restart' | 'attach'): Promise<WatchOutcome> {
    const first = new Promise<WatchOutcome>((resolve) => (this.settle = resolve));
    this.running = true;
    this.disposables.push(
      this.deps.transport.onStateChange((s) => {
        if (s.kind === 'connected' && !this.current.connected) this.onReconnected();
        else if (s.kind === 'down')
          this.apply({
            kind: 'connection',
            at: this.now(),
            up: false,
            error: s.error,
            ...(s.errorKind ? { errorKind: s.errorKind } : {}),
          });
      }),
    );
    // The prior is folded in silently: a first state shown before the host said anything would
    // read `loading` while nothing is known yet.
    if (this.deps.prior) this.current = reduce(this.current, { kind: 'prior', at: this.now(), prior: this.deps.prior });
    if (mode === 'restart') this.apply({ kind: 'restartRequested', at: this.now() });
    try {
      await this.deps.transport.connect();
      if (mode === 'restart') await this.restart();
      else await this.attachToCurrentRun();
    } catch (error) {
      this.onCommandError(error, true);
    }
    if (this.running) {
      this.startJournal();
      this.schedule(this.awaitingRunAfter !== undefined ? this.deps.options.pollIntervalMs : 0);
    }
    return first;
  }

  cancel(reason = 'stopped by the user'): void {
    this.finish({ end: 'cancelled', state: this.current, message: reason });
  }

  dispose(): void {
    this.cancel('disposed');
    this.listeners.clear();
    this.endListeners.clear();
    this.alertListeners.clear();
  }

  /** `systemctl restart --no-block`, then follow the unit until its next run starts. */
  private async restart(): Promise<void> {
    const unit = this.target.label;
    let before: UnitStatus;
    try {
      before = this.deps.unitBefore ?? (await this.showUnit());
    } catch (error) {
      if (error instanceof TransportError && error.kind !== 'command-timeout') throw error;
      // Without the run in place now, the new run could not be told from it: restart nothing.
      const message = `could not read ${unit} before restarting it (${errorText(error)}); nothing was restarted`;
      this.apply({ kind: 'restartFailed', at: this.now(), message });
      this.checkEnd();
      return;
    }
    this.awaitingRunAfter = processKey(before);
    // --no-block: systemctl returns once the job is queued; a slow stop (NCCL teardown, up to
    // TimeoutStopSec) is then followed as `stopping` instead of a command that hangs.
    const result = await this.exec(this.target.restartCommand());
    if (result.code !== 0) {
      this.awaitingRunAfter = undefined;
      const message = this.target.restartError(result.stderr);
      this.apply({ kind: 'restartFailed', at: this.now(), message });
      this.checkEnd();
      return;
    }
    // The job was only queued: the first look comes with the first probe round, a poll interval on.
  }

  /** One look at the unit while a restart is under way: still the old run, or the new one. */
  private async followRestart(): Promise<void> {
    const previous = this.awaitingRunAfter;
    if (previous === undefined) return;
    const unit = await this.showUnit();
    if (isNewRun(previous, unit)) {
      this.awaitingRunAfter = undefined;
      await this.attach(unit);
    } else {
      if (unit.activeState === 'deactivating') this.stopSeen = true;
      this.apply({ kind: 'unit', at: this.now(), unit });
    }
  }

  private async attachToCurrentRun(): Promise<void> {
    const unit = await this.showUnit();
    if (unit.activeState === 'deactivating' || isStarting(unit)) {
      // Someone is stopping (or restarting) it right now, or its start has no process yet: follow
      // that, as after our own restart (a start's InvocationID is already the new run's).
      this.apply({ kind: 'restartRequested', at: this.now(), external: true });
      this.awaitingRunAfter = isStarting(unit) ? NO_RUN_YET : processKey(unit);
      this.stopSeen = true;
      this.apply({ kind: 'unit', at: this.now(), unit });
      return;
    }
    await this.attach(unit);
  }

  private async attach(unit: UnitStatus): Promise<void> {
    this.journalSince = unit.execMainStartedAt;
    this.processStartMonotonicUs = unit.execMainStartedMonotonicUs;
    this.attached = true;
    this.stopSeen = false;
    this.apply({ kind: 'attached', at: this.now(), unit });
    if (this.current.failure) await this.readFailureCause();
    else {
      this.startJournal();
      this.readExecStart();
    }
    this.checkEnd();
  }

  /**
   * A failed run's last journal lines: why it failed (the follow may not have told it yet). A
   * process that dies in its first second may have its lines reach the journal after systemd's
   * exit line: while no line tells the cause of such a young death, the tail is read again.
   */
  private async readFailureCause(): Promise<void> {
    this.failureCause = 'reading';
    try {
      for (let read = 1; ; read++) {
        await this.applyFailureTail();
        if (
          read >= FAILURE_TAIL_READS ||
          !this.running ||
          !this.diedYoung() ||
          rootCause(this.current.failure?.lines ?? []) !== undefined
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, FAILURE_TAIL_RETRY_MS));
      }
    } catch (error) {
      this.deps.log('warn', `Could not read why ${this.deps.profile.unit} failed: ${errorText(error)}`);
    } finally {
      this.failureCause = 'read';
    }
  }

  /** The process ended within EARLY_EXIT_MS of its start (systemd's timestamps). */
  private diedYoung(): boolean {
    const unit = this.current.unit;
    if (unit?.execMainStartedAt === undefined || unit.execMainExitedAt === undefined) return false;
    return unit.execMainExitedAt - unit.execMainStartedAt <= EARLY_EXIT_MS;
  }

  private async applyFailureTail(): Promise<void> {
    const result = await this.exec(this.target.logTailCommand(FAILURE_TAIL_LINES));
    const reader = new JournalReader();
    // Lines the follow (or a previous read) already told are not told twice.
    const known = new Map<string, number>();
    for (const text of this.current.failure?.lines ?? []) known.set(text, (known.get(text) ?? 0) + 1);
    for (const line of result.stdout.split('\n')) {
      const entry = this.target.parseLogLine(line);
      if (!entry) continue;
      const start = this.processStartMonotonicUs;
      if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) continue;
      for (const { event, text } of reader.readLines(entry.message, entry.at)) {
        if (event.type !== 'error') continue;
        const seen = known.get(text) ?? 0;
        if (seen > 0) known.set(text, seen - 1);
        else this.apply({ kind: 'journal', at: this.now(), event, text });
      }
    }
  }

  /**
   * The unit was restarted or stopped by someone else (or by systemd) while we watched: start
   * a fresh load state and follow it, journal included, from the new run's start.
   */
  private async followNewRun(unit: UnitStatus, change: 'new run' | 'stopping' | 'stopped'): Promise<void> {
    const previousKey = this.current.unit ? processKey(this.current.unit) : undefined;
    this.current = { ...initialState(this.now()), prior: this.current.prior, journal: this.current.journal };
    this.mode = 'load';
    this.attached = false;
    this.modelName = undefined;
    this.completionFailingSince = undefined;
    this.failureCause = 'unread';
    this.alerted.clear();
    this.restartJournal();
    this.deps.log(
      'info',
      change === 'new run'
        ? 'The unit was restarted (not by this watch): following the new load.'
        : `The unit is ${change} (not by this watch).`,
    );
    this.apply({ kind: 'restartRequested', at: this.now(), external: true });
    if (change === 'new run') await this.attach(unit);
    else {
      this.awaitingRunAfter = previousKey;
      this.apply({ kind: 'unit', at: this.now(), unit });
    }
  }

  /** The unit's state, and its command line (read in the same call: one remote command fewer per load). */
  private async showUnit(): Promise<UnitStatus> {
    // Any look at the unit is the probe of this round (a line read meanwhile asks for another).
    this.unitProbeDue = false;
    this.lastUnitProbeAt = this.now();
    const state = await this.target.readState((command) => this.exec(command));
    this.execStartArgv = [...state.argv];
    this.hostPath = state.hostPath;
    if (state.note) this.alertOnce({ kind: 'journal', level: 'warn', message: state.note });
    return state.unit;
  }

  /**
   * What ExecStart says: the API key, and the model path whose *.safetensors size (the bytes
   * witness's 100 %) the sampler reads in its first line (a container's: on the host, through
   * the volume that holds it).
   */
  private readExecStart(): void {
    const argv = this.execStartArgv;
    const warning = dropCacheWarning(argv);
    if (warning) this.deps.log('warn', warning);
    // SGLang with --api-key answers only /health without it: the key in ExecStart is the one it wants.
    const apiKey = apiKeyFromArgv(argv);
    if (apiKey !== undefined) this.deps.http.setApiKey(apiKey);
    const given = modelPathOf(argv);
    const modelPath = given && given.startsWith('/') ? this.hostPath(given) : undefined;
    if (!given || !given.startsWith('/') || modelPath === undefined) {
      this.modelPath = undefined;
      this.modelBytes = undefined;
      const why =
        given && given.startsWith('/')
          ? `${given} is in no volume of ${this.target.label}`
          : `No local --model-path in ExecStart${given ? ` (${given})` : ''}`;
      this.deps.log('info', `${why}: progress comes from the journal only.`);
      return;
    }
    if (modelPath !== this.modelPath) this.modelBytes = undefined;
    this.modelPath = modelPath;
  }

  private onModelSize(size: ModelSize): void {
    if (size.files === 0) {
      this.deps.log('info', `No *.safetensors in ${this.modelPath}: progress comes from the journal only.`);
      return;
    }
    this.modelBytes = size.bytes;
    this.deps.log(
      'info',
      `Model ${this.modelPath}: ${size.files} safetensors files, ${(size.bytes / 1e9).toFixed(1)} GB.`,
    );
  }

  private async exec(command: string) {
    this.deps.log('trace', `$ ${command}`);
    return this.deps.transport.exec(command, { timeoutMs: COMMAND_TIMEOUT_MS });
  }

  /**
   * A remote command failed. The connection going down is `unreachable` (the transport says so
   * through onStateChange as well); a command that timed out or failed is logged and tried
   * again next round: it says nothing about the host being reachable.
   */
  private onCommandError(error: unknown, starting: boolean): void {
    if (error instanceof TransportError && error.kind !== 'command-timeout') {
      this.apply({ kind: 'connection', at: this.now(), up: false, error: error.message, errorKind: error.kind });
      if (starting) this.finish({ end: 'unreachable', state: this.current, message: error.message });
      return;
    }
    this.deps.log(
      'warn',
      `${starting ? 'Could not look at the unit' : 'Unit probe failed'}: ${errorText(error)}; trying again.`,
    );
  }

  // ------------------------------------------------------------ journal

  private startJournal(): void {
    if (!this.running || this.journal || this.journalStarting || !this.attached || this.journalRetry) return;
    const since = (this.journalSince ?? this.current.watchStartedAt) - 1000;
    const command = this.target.logFollowCommand(since);
    const stderr: string[] = [];
    this.journalStarting = true;
    this.deps.log('trace', `$ ${command}`);
    this.deps.transport
      .stream(
        command,
        (line) => this.onJournalLine(line),
        (line) => {
          if (stderr.length < 20) stderr.push(line);
          const problem = journalProblem([line], undefined);
          // The hint comes while journalctl goes on following nothing: stop it, try again later.
          if (problem && this.journal) this.onJournalEnded(this.journal, stderr, undefined);
        },
      )
      .then((process) => {
        this.journalStarting = false;
        if (!this.running) {
          process.kill();
          return;
        }
        this.journal = process;
        if (journalProblem(stderr, undefined)) this.onJournalEnded(process, stderr, undefined);
        void process.exited.then((code) => this.onJournalEnded(process, stderr, code));
      })
      .catch((error) => {
        this.journalStarting = false;
        this.deps.log('warn', `Could not follow the journal: ${errorText(error)}`);
      });
  }

  /** journalctl ended, or said it cannot read the journal: say why, follow again with backoff. */
  private onJournalEnded(process: RemoteProcess, stderr: readonly string[], code: number | null | undefined): void {
    if (this.journal !== process) return;
    this.journal = undefined;
    process.kill();
    if (!this.running || !this.current.connected) return;
    const problem = journalProblem(stderr, code);
    if (problem) {
      const unreadable = code === undefined || /not readable/.test(problem);
      const detail = unreadable ? `${problem}. Fix: ${JOURNAL_ACCESS_FIX}` : problem;
      this.apply({ kind: 'journalStatus', at: this.now(), readable: false, detail });
      this.alertOnce({
        kind: 'journal',
        level: 'warn',
        message: `The journal of ${this.deps.profile.unit} cannot be followed: ${detail}. Watching from systemd and HTTP alone.`,
      });
    }
    this.deps.log(
      problem ? 'warn' : 'info',
      `journalctl ended (exit ${code ?? 'none'})${stderr.length ? `: ${stderr.join(' ').slice(0, 300)}` : ''}; following again in ${Math.round(this.journalRetryMs / 1000)} s.`,
    );
    const delay = this.journalRetryMs;
    this.journalRetryMs = Math.min(JOURNAL_RETRY_MAX_MS, this.journalRetryMs * 2);
    this.journalRetry = setTimeout(() => {
      this.journalRetry = undefined;
      this.startJournal();
    }, delay);
    // Without the journal (and without the sampler), exits come only from the unit probe: look at once.
    // A container's log follow ends when the container stops: look at once too.
    if (this.sampler?.process === undefined || this.target.logFollowEndsWithService) {
      this.unitProbeDue = true;
      this.probeSoon();
    }
  }

  private restartJournal(): void {
    const journal = this.journal;
    this.journal = undefined;
    journal?.kill();
    clearTimeout(this.journalRetry);
    this.journalRetry = undefined;
    this.journalRetryMs = JOURNAL_RETRY_FIRST_MS;
    this.journalReader = new JournalReader();
  }

  private onJournalLine(line: string): void {
    const entry = this.target.parseLogLine(line);
    if (!entry) return;
    this.journalRetryMs = JOURNAL_RETRY_FIRST_MS;
    if (this.current.journal?.readable !== true) this.apply({ kind: 'journalStatus', at: this.now(), readable: true });
    // --since has one-second precision: drop what an earlier process of the unit logged.
    const start = this.processStartMonotonicUs;
    if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) return;
    for (const { event, text } of this.journalReader.readLines(entry.message, entry.at)) {
      // "Started" of the run this watch follows, still alive, tells nothing new: no look at the unit
      // for it. (A new run after a stop or a failure is news: look.)
      const known =
        event.type === 'systemd' &&
        event.what === 'started' &&
        this.attached &&
        this.awaitingRunAfter === undefined &&
        this.current.unit !== undefined &&
        isAlive(this.current.unit) &&
        this.current.failure === undefined;
      if (event.type === 'systemd' && !known) {
        this.unitProbeDue = true;
        if (event.what === 'stopping') this.stopSeen = true;
      }
      if (
        event.type === 'ready' ||
        event.type === 'httpUp' ||
        event.type === 'graphsCaptured' ||
        (event.type === 'systemd' && !known)
      )
        this.probeSoon();
      if (event.type === 'httpUp' && event.url) this.checkAnnouncedUrl(event.url);
      // A restart under way: the new run's lines are read again once it is attached.
      if (this.awaitingRunAfter !== undefined || !this.attached) continue;
      this.apply({ kind: 'journal', at: this.now(), event, text });
    }
  }

  private onReconnected(): void {
    this.apply({ kind: 'connection', at: this.now(), up: true });
    // The sampler's channel died with the connection: start it again.
    const sampler = this.sampler;
    this.sampler = undefined;
    sampler?.process?.kill();
    // The journal is read again from the process start; the reducer ignores what it already knows.
    this.restartJournal();
    this.startJournal();
    this.unitProbeDue = true;
    this.probeSoon();
  }

  /** SGLang says where it listens; when that is not the configured url, say so and use what it said. */
  private checkAnnouncedUrl(announced: string): void {
    const verdict = compareServerUrl(this.deps.http.baseUrl, announced);
    if (verdict.ok) return;
    this.deps.http.setBaseUrl(verdict.useUrl);
    this.alertOnce({ kind: 'url', level: 'warn', message: `${verdict.message} Using ${verdict.useUrl}.` });
  }

  // ------------------------------------------------------------ probe rounds

  private schedule(delayMs: number): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.probe(), delayMs);
  }

  private probeSoon(): void {
    if (this.probing) this.probeAgain = true;
    else this.schedule(0);
  }

  private get roundMs(): number {
    const steady = this.deps.options.steadyIntervalMs;
    return this.mode === 'steady' && steady !== undefined && this.awaitingRunAfter === undefined
      ? steady
      : this.deps.options.pollIntervalMs;
  }

  /** One round: the unit when due, HTTP health (whatever the journal says), the completion that proves readiness. */
  private async probe(): Promise<void> {
    if (!this.running || this.probing) return;
    this.probing = true;
    try {
      if (this.current.connected) {
        if (this.awaitingRunAfter !== undefined) await this.followRestart();
        else if (!this.attached) await this.attachToCurrentRun();
        else if (this.unitProbeIsDue()) await this.probeUnit();
        if (this.attached && this.awaitingRunAfter === undefined && this.running) await this.probeHttp();
      }
      this.apply({ kind: 'tick', at: this.now(), stallMs: this.deps.options.stallMs });
      this.checkEnd();
      this.checkAlerts();
      this.syncSampler();
    } catch (error) {
      this.onCommandError(error, false);
    } finally {
      this.probing = false;
      const again = this.probeAgain;
      this.probeAgain = false;
      this.schedule(again ? 0 : this.roundMs);
    }
  }

  private unitProbeIsDue(): boolean {
    if (this.unitProbeDue) return true;
    // Neither the journal nor the sampler would tell an exit: ask systemd every round.
    if (this.journal === undefined && this.sampler?.process === undefined) return true;
    const elapsed = this.now() - this.lastUnitProbeAt;
    if (this.mode === 'steady') return elapsed >= STEADY_UNIT_BACKSTOP_MS || this.current.healthFailures > 0;
    // Both live: the journal tells systemd's lines and the sampler a process gone; no backstop.
    if (this.journal !== undefined && this.sampler?.process !== undefined) return false;
    return elapsed >= UNIT_BACKSTOP_MS;
  }

  private async probeUnit(): Promise<void> {
    const unit = await this.showUnit();
    const at = this.now();
    if (this.mode === 'steady') {
      if (unit.activeState === 'deactivating') this.stopSeen = true;
      const change = unitChangeAfterSettled(this.current, unit, this.stopSeen);
      if (change !== 'same') {
        await this.followNewRun(unit, change);
        return;
      }
    }
    this.apply({ kind: 'unit', at, unit });
  }

  // ------------------------------------------------------------ sampler

  /** The sampler the state wants now: for the followed process, fast while it loads, slow once settled. */
  private wantedSampler(): WantedSampler | undefined {
    const state = this.current;
    if (!this.running || !this.attached || this.awaitingRunAfter !== undefined || !state.connected) return undefined;
    if (state.mainPid === undefined || state.failure || state.verdict === 'stopped') return undefined;
    const loading = this.mode === 'load' || wantsWitnesses(state) !== undefined;
    const intervalMs = loading
      ? this.deps.options.pollIntervalMs
      : (this.deps.options.steadyIntervalMs ?? this.deps.options.pollIntervalMs);
    const listenPort =
      this.mode === 'load' && this.portWitnessTrusted && this.deps.options.servesHttp !== false
        ? urlPort(this.deps.http.baseUrl)
        : undefined;
    return { pid: state.mainPid, intervalMs, listenPort };
  }

  /** Starts, restarts (new process, new pace) or stops the sampler to match the state. */
  private syncSampler(): void {
    const wanted = this.wantedSampler();
    const current = this.sampler;
    if (
      current &&
      wanted &&
      current.pid === wanted.pid &&
      current.intervalMs === wanted.intervalMs &&
      current.listenPort === wanted.listenPort
    )
      return;
    if (current) {
      this.sampler = undefined;
      current.process?.kill();
    }
    this.port = undefined;
    if (!wanted) return;
    const entry: { process: RemoteProcess | undefined } & WantedSampler = { process: undefined, ...wanted };
    this.sampler = entry;
    const reader = new SamplerReader(() => this.modelBytes);
    let exitSeen = false;
    const sizeFrom = this.modelBytes === undefined ? this.modelPath : undefined;
    const command = samplerCommand({
      mainPid: wanted.pid,
      intervalMs: wanted.intervalMs,
      controlGroup: this.current.unit?.controlGroup,
      modelPath: sizeFrom,
      listenPort: wanted.listenPort,
    });
    this.deps.log('trace', `$ sampler for PID ${wanted.pid} every ${wanted.intervalMs} ms`);
    this.deps.transport
      .stream(command, (line) => {
        if (this.sampler !== entry) return;
        const round = reader.read(line, this.now());
        if (round.modelSize) this.onModelSize(round.modelSize);
        if (round.listening !== undefined) this.onPortSeen(round.listening);
        for (const signal of round.signals) this.apply(signal);
        // The main process is gone: systemd says how it ended (once).
        if (round.alive === false && !exitSeen) {
          exitSeen = true;
          this.unitProbeDue = true;
          this.probeSoon();
        }
      })
      .then((process) => {
        if (this.sampler !== entry) {
          process.kill();
          return;
        }
        entry.process = process;
        void process.exited.then((code) => {
          if (this.sampler !== entry) return;
          // Ended on its own (not killed by us): the unit probe takes over; not restarted in a loop.
          entry.process = undefined;
          if (code !== null)
            this.deps.log('warn', `The sampler ended (exit ${code}); the unit is asked every round instead.`);
        });
      })
      .catch((error) => {
        if (this.sampler === entry) this.deps.log('warn', `Could not start the sampler: ${errorText(error)}`);
      });
  }

  private onPortSeen(listening: boolean): void {
    const opened = listening && this.port?.listening !== true;
    this.port = { listening, at: this.now() };
    if (opened) this.probeSoon();
  }

  /** The sampler saw, this round or the last, that nothing listens on the port: /health would be refused. */
  private portSeenClosed(): boolean {
    const port = this.port;
    return this.portWitnessTrusted && port !== undefined && !port.listening && this.now() - port.at <= 2 * this.roundMs;
  }

  private async probeHttp(): Promise<void> {
    const state = this.current;
    if (state.failure) return;
    if (this.deps.options.servesHttp === false) {
      const graphs = state.cudaGraphBatches;
      if (
        state.readyAt === undefined &&
        state.mainPid !== undefined &&
        state.connected &&
        graphs &&
        graphs.done >= graphs.total
      ) {
        this.apply({
          kind: 'completion',
          at: this.now(),
          ok: true,
          detail: 'this rank finished loading (it serves no HTTP: node rank 0 does)',
        });
      }
      return;
    }
    if (this.mode === 'steady') {
      const steady = this.deps.options.steadyIntervalMs ?? 0;
      if (this.now() - this.lastHealthAt < steady && state.healthFailures === 0) return;
    } else if (this.portSeenClosed() && this.healthSkipped < HEALTH_BACKSTOP_ROUNDS - 1) {
      this.healthSkipped++;
      return;
    }
    this.healthSkipped = 0;
    const closedBefore = this.portSeenClosed();
    this.lastHealthAt = this.now();
    const health = await this.deps.http.health();
    const at = this.now();
    if (closedBefore && health.kind === 'http') {
      this.portWitnessTrusted = false;
      this.deps.log(
        'info',
        `/health answered while no socket listened on its port in the host's view (another network namespace?): /health is asked every round.`,
      );
    }
    if (health.kind === 'refused')
      this.apply({ kind: 'http', at, result: 'refused', detail: 'port closed (connection refused)' });
    else if (health.kind === 'http') {
      const judged = judgeHealth(health.status);
      const result = judged === 'ok' ? 'healthy' : judged === 'warming' ? 'warming' : 'error';
      this.apply({ kind: 'http', at, result, detail: `/health ${health.status}` });
    } else
      this.apply({
        kind: 'http',
        at,
        result: 'error',
        detail: `/health ${health.kind}: ${'message' in health ? health.message : ''}`.trim(),
      });
    // A failing /health after ready: look at the process too (dead, or alive but unhealthy).
    if (this.mode === 'steady' && this.current.healthFailures > 0) this.unitProbeDue = true;

    if (wantsCompletionProbe(this.current)) await this.probeCompletion();
  }

  private async probeCompletion(): Promise<void> {
    if (!this.modelName) {
      const models = await this.deps.http.models();
      if (!models.ok) {
        this.apply({ kind: 'completion', at: this.now(), ok: false, detail: `/v1/models: ${models.reason}` });
        return;
      }
      this.modelName = models.ids[0];
    }
    const response = await this.deps.http.completion(this.modelName ?? 'default', COMPLETION_PROMPT, 1);
    const at = this.now();
    if (response.kind !== 'http') {
      this.apply({
        kind: 'completion',
        at,
        ok: false,
        detail: response.kind === 'refused' ? 'connection refused' : response.kind,
      });
      return;
    }
    const judged = judgeCompletion(
      response.status,
      response.contentType,
      response.body,
      response.truncated,
      response.apiKeySent === true,
    );
    this.apply({
      kind: 'completion',
      at,
      ok: judged.ok,
      detail: judged.ok ? `1-token completion answered (${JSON.stringify(judged.text)})` : judged.reason,
    });
  }

  // ------------------------------------------------------------ ends and alerts

  private checkEnd(): void {
    if (!this.running) return;
    const state = this.current;
    const at = this.now();
    if (this.mode === 'steady') {
      // Serving -> failed after ready is a new end for the fronts; so is a new load's end (load mode).
      return;
    }
    if (state.readyAt !== undefined) this.finish({ end: 'ready', state });
    else if (state.failure && this.failureCause === 'reading') return;
    else if (
      state.failure &&
      rootCause(state.failure.lines) === undefined &&
      this.attached &&
      this.failureCause === 'unread'
    ) {
      // systemd (or the sampler) told the end before the journal told why (a process that dies in
      // its first second: its lines may reach the journal after systemd's): read why first.
      void this.readFailureCause().finally(() => this.checkEnd());
    } else if (state.failure) this.finish({ end: 'failed', state, message: state.failure.summary });
    else if (state.verdict === 'stopped') this.finish({ end: 'stopped', state });
    else if (state.downSince !== undefined && at - state.downSince >= this.deps.options.unreachableTimeoutMs) {
      this.finish({
        end: 'unreachable',
        state,
        message: `the host could not be reached for ${Math.round((at - state.downSince) / 1000)} s`,
      });
    } else if (at - state.watchStartedAt >= this.deps.options.loadTimeoutMs) {
      this.finish({
        end: 'timeout',
        state,
        message: `not ready after ${Math.round(this.deps.options.loadTimeoutMs / 60_000)} min`,
      });
    }
  }

  private checkAlerts(): void {
    const state = this.current;
    const completion = state.completion;
    if (state.readyAt === undefined && state.failure === undefined && completion && !completion.ok) {
      this.completionFailingSince ??= this.now();
      if (this.now() - this.completionFailingSince >= (this.deps.options.completionAlertMs ?? COMPLETION_ALERT_MS)) {
        this.alertOnce({
          kind: 'completion',
          level: 'warn',
          message: `${this.deps.profile.unit} says it is up, but a 1-token completion fails: ${completion.detail}`,
        });
      }
    } else this.completionFailingSince = undefined;
  }

  private alertOnce(alert: WatchAlert): void {
    if (this.alerted.has(alert.kind)) return;
    this.alerted.add(alert.kind);
    this.emitAlert(alert);
  }

  private emitAlert(alert: WatchAlert): void {
    this.deps.log(alert.level === 'info' ? 'info' : alert.level, alert.message);
    for (const listener of [...this.alertListeners]) listener(alert);
  }

  private apply(signal: Signal): void {
    const previous = this.current;
    const next = reduce(previous, signal);
    if (next === previous) return;
    this.current = next;
    if (next.witnessWarning !== undefined && previous.witnessWarning === undefined)
      this.deps.log('warn', next.witnessWarning);
    for (const listener of [...this.listeners]) listener(next, previous);
    if (this.mode === 'steady') this.onSteadyChange(next, previous);
    if (isFinished(next) && !isFinished(previous)) this.schedule(0);
  }

  /** After ready: a crash is a new end; unhealthy and its recovery are alerts. */
  private onSteadyChange(next: LoadState, previous: LoadState): void {
    if (next.failure && !previous.failure) this.emitEnd({ end: 'failed', state: next, message: next.failure.summary });
    if (next.verdict === 'unhealthy' && previous.verdict !== 'unhealthy') {
      this.emitAlert({
        kind: 'unhealthy',
        level: 'warn',
        message: `${this.deps.profile.unit} is unhealthy: /health failed ${next.healthFailures} times in a row while the process runs (${next.lastSignal?.text ?? ''}).`,
      });
    } else if (previous.verdict === 'unhealthy' && next.verdict === 'ready') {
      this.emitAlert({ kind: 'recovered', level: 'info', message: `${this.deps.profile.unit} is healthy again.` });
    }
  }

  private emitEnd(outcome: WatchOutcome): void {
    for (const listener of [...this.endListeners]) listener(outcome);
    const settle = this.settle;
    this.settle = undefined;
    settle?.(outcome);
  }

  /**
   * A load ended. Ready, failed and stopped go on as a steady watch when asked; anything else
   * (and a cancel) ends the watch for good.
   */
  private finish(outcome: WatchOutcome): void {
    if (!this.running) return;
    const goesOn =
      this.deps.options.steadyIntervalMs !== undefined &&
      (outcome.end === 'ready' || outcome.end === 'failed' || outcome.end === 'stopped');
    if (goesOn && this.mode === 'load') {
      this.mode = 'steady';
      this.lastHealthAt = this.now();
      this.emitEnd(outcome);
      return;
    }
    if (goesOn) return;
    this.running = false;
    clearTimeout(this.timer);
    clearTimeout(this.journalRetry);
    this.timer = undefined;
    this.journalRetry = undefined;
    this.journal?.kill();
    this.journal = undefined;
    this.syncSampler();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.emitEnd(outcome);
  }
}
