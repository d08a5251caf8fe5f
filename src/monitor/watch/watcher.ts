import { errorText } from '../../util/errors';
import { TransportError } from '../../transport/transport';
import { rootCause } from '../../engine/rootCause';
import { engineFor } from '../../engine/engine';
import { isNewRun, isStarting, NO_RUN_YET, processKey, unitChangeAfterSettled } from '../state/unitChange';
import { targetFor, targetIo, type ServiceStatus, type Target, type TargetIo } from '../../target/target';
import { initialState, reduce } from '../state/loadState';
import type { LoadState, Signal } from '../state/loadStateTypes';
import { isFinished } from '../state/loadVerdict';
import {
  type WatcherDeps,
  type WatchOutcome,
  type WatchAlert,
  COMMAND_TIMEOUT_MS,
  COMPLETION_ALERT_MS,
  UNIT_BACKSTOP_MS,
  STEADY_UNIT_BACKSTOP_MS,
  STATE_READ_WHILE_LOADING_MS,
} from './watchTypes';
import { HttpWitness } from './httpWitness';
import { SamplerWitness } from './samplerWitness';
import { JournalWitness } from './journalWitness';
import { AnnouncedUrlFollower } from './announcedUrlFollower';
import type { WitnessContext } from './witness';
import { timeLimitWarning } from '../state/timeLimit';
import {
  changedOutside,
  completionFails,
  healthyAgain,
  notReadyAfter,
  unhealthy,
  unitProbeFailed,
  unreachableFor,
} from '../../present/words/watchWords';
import { couldNotReadBeforeRestart, stoppedByUser } from '../../present/words/watchWords';

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
  private journalSince: number | undefined;
  /** Set once the unit's current process is known: no journal before that. */
  private tiedToRun = false;
  /** After a restart (ours or not): the run that must be replaced before a new load is followed. */
  private awaitingRunAfter: string | undefined;
  /** systemd was seen stopping the unit (journal or `deactivating`): a process gone is stopped, not crashed. */
  private stopSeen = false;
  /** Journal entries older than this belong to an earlier process of the unit. */
  private processStartMonotonicUs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private unitProbeDue = true;
  private lastUnitProbeAt = 0;
  private probeAgain = false;
  private completionFailingSince: number | undefined;
  private readonly alerted = new Set<WatchAlert['kind']>();
  private settle: ((outcome: WatchOutcome) => void) | undefined;
  private running = false;
  private readonly disposables: { dispose(): void }[] = [];
  private readonly now: () => number;
  private readonly target: Target;
  /** The witnesses: each its own state, started and stopped by this watch. */
  private readonly journal: JournalWitness;
  private readonly sampler: SamplerWitness;
  private readonly http: HttpWitness;
  /** Where the server says it listens, followed only to an address the host has. */
  private readonly urls: AnnouncedUrlFollower;
  /** Where a path of the server's command line is on the host (a container's mounts). */
  private hostPath: (path: string) => string | undefined = (path) => path;
  /** The set end (a job's time limit) already warned of. */
  private timeLimitWarnedFor: number | undefined;

  constructor(private readonly deps: WatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.target = deps.target ?? targetFor(deps.profile);
    this.current = initialState(this.now());
    // What the witnesses see of this watch, and where their signals go.
    const context: WitnessContext = {
      deps,
      now: this.now,
      state: () => this.current,
      mode: () => this.mode,
      emit: (signal) => this.apply(signal),
      alertOnce: (alert) => this.alertOnce(alert),
      lookAtUnit: (soon) => {
        this.unitProbeDue = true;
        if (soon) this.probeSoon();
      },
      probeSoon: () => this.probeSoon(),
    };
    this.urls = new AnnouncedUrlFollower(context);
    this.sampler = new SamplerWitness(context, this.target, {
      following: () => this.running && this.tiedToRun && this.awaitingRunAfter === undefined,
      roundMs: () => this.roundMs,
      onHostAddresses: (addresses) => this.urls.onHostAddresses(addresses),
    });
    this.http = new HttpWitness(context, this.sampler);
    this.journal = new JournalWitness(context, this.target, {
      run: () => ({
        tied: this.tiedToRun,
        restarting: this.awaitingRunAfter !== undefined,
        since: this.journalSince,
        startMonotonicUs: this.processStartMonotonicUs,
      }),
      running: () => this.running,
      io: () => this.io,
      samplerLive: () => this.sampler.live,
      onStopping: () => {
        this.stopSeen = true;
      },
      onAnnounced: (url) => this.urls.onAnnounced(url),
    });
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

  /** The transport as the target uses it: each command traced, with the watch's timeout. */
  private get io(): TargetIo {
    return targetIo(this.deps.transport, COMMAND_TIMEOUT_MS, (command) => this.deps.log('trace', `$ ${command}`));
  }

  private get roundMs(): number {
    const steady = this.deps.options.steadyIntervalMs;
    return this.mode === 'steady' && steady !== undefined && this.awaitingRunAfter === undefined
      ? steady
      : this.deps.options.pollIntervalMs;
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
          message: completionFails(this.deps.profile.unit, completion.detail),
        });
      }
    } else this.completionFailingSince = undefined;
    // Once per set end: a requeued job has a new one.
    const warning = timeLimitWarning(this.deps.profile.unit, state, this.now());
    if (warning !== undefined && state.unit?.endsAt !== this.timeLimitWarnedFor) {
      this.timeLimitWarnedFor = state.unit?.endsAt;
      this.emitAlert({ kind: 'time-limit', level: 'warn', message: warning });
    }
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
        message: unhealthy(this.deps.profile.unit, next.healthFailures, next.lastSignal?.text ?? ''),
      });
    } else if (previous.verdict === 'unhealthy' && next.verdict === 'ready') {
      this.emitAlert({ kind: 'recovered', level: 'info', message: healthyAgain(this.deps.profile.unit) });
    }
  }

  private emitEnd(outcome: WatchOutcome): void {
    for (const listener of [...this.endListeners]) listener(outcome);
    const settle = this.settle;
    this.settle = undefined;
    settle?.(outcome);
  }

  /** The model path (ExecStart --model-path) and its *.safetensors bytes, once read when the watch is tied to a run. */
  get model(): { readonly path: string; readonly bytes: number | undefined } | undefined {
    return this.sampler.model;
  }

  /**
   * Restarts the unit (mode 'restart') or watches whatever it is doing now ('watch'),
   * then watches. Resolves with how the first load ended; a steady watch goes on after that
   * until cancelled (see onDidEnd for what it sees).
   */
  async run(mode: 'restart' | 'watch'): Promise<WatchOutcome> {
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
      else await this.findCurrentRun();
    } catch (error) {
      this.onCommandError(error, true);
    }
    if (this.running) {
      this.journal.start();
      this.schedule(this.awaitingRunAfter !== undefined ? this.deps.options.pollIntervalMs : 0);
    }
    return first;
  }

  cancel(reason = stoppedByUser()): void {
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
    let before: ServiceStatus;
    try {
      before = this.deps.unitBefore ?? (await this.showUnit());
    } catch (error) {
      if (error instanceof TransportError && error.kind !== 'command-timeout') throw error;
      // Without the run in place now, the new run could not be told from it: restart nothing.
      const message = couldNotReadBeforeRestart(unit, errorText(error));
      this.apply({ kind: 'restartFailed', at: this.now(), message });
      this.checkEnd();
      return;
    }
    this.awaitingRunAfter = processKey(before);
    // --no-block: systemctl returns once the job is queued; a slow stop (NCCL teardown, up to
    // TimeoutStopSec) is then followed as `stopping` instead of a command that hangs.
    const result = await this.target.restart(this.io);
    if (!result.ok) {
      this.awaitingRunAfter = undefined;
      const message = result.error.message;
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
      await this.tieToRun(unit);
    } else {
      if (unit.activeState === 'deactivating') this.stopSeen = true;
      this.apply({ kind: 'unit', at: this.now(), unit });
    }
  }

  private async findCurrentRun(): Promise<void> {
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
    await this.tieToRun(unit);
  }

  private async tieToRun(unit: ServiceStatus): Promise<void> {
    this.journalSince = unit.execMainStartedAt;
    this.processStartMonotonicUs = unit.execMainStartedMonotonicUs;
    this.tiedToRun = true;
    this.stopSeen = false;
    this.apply({ kind: 'tiedToRun', at: this.now(), unit });
    if (this.current.failure) {
      // A follow of the restart's lines is not kept for a run found dead: its tail is read instead.
      this.journal.stopRestartFollow();
      await this.journal.readFailureCause();
    } else {
      this.journal.followFromProcessStart();
      this.sampler.readExecStart(this.hostPath);
    }
    this.checkEnd();
  }

  /**
   * The unit was restarted or stopped by someone else (or by systemd) while we watched: start
   * a fresh load state and follow it, journal included, from the new run's start.
   */
  private async followNewRun(unit: ServiceStatus, change: 'new run' | 'stopping' | 'stopped'): Promise<void> {
    const previousKey = this.current.unit ? processKey(this.current.unit) : undefined;
    this.current = { ...initialState(this.now()), prior: this.current.prior, journal: this.current.journal };
    this.mode = 'load';
    this.tiedToRun = false;
    this.http.newRun();
    this.completionFailingSince = undefined;
    this.alerted.clear();
    this.journal.newRun();
    this.deps.log('info', changedOutside(change));
    this.apply({ kind: 'restartRequested', at: this.now(), external: true });
    if (change === 'new run') await this.tieToRun(unit);
    else {
      this.awaitingRunAfter = previousKey;
      this.apply({ kind: 'unit', at: this.now(), unit });
    }
  }

  /** The unit's state, and its command line (read in the same call: one remote command fewer per load). */
  private async showUnit(): Promise<ServiceStatus> {
    // Any look at the unit is the probe of this round (a line read meanwhile asks for another).
    this.unitProbeDue = false;
    this.lastUnitProbeAt = this.now();
    const state = await this.target.readState(this.io);
    this.sampler.setCommandLine([...state.argv]);
    this.journal.setGrammar(engineFor(state.argv)?.grammar);
    this.hostPath = state.hostPath;
    this.http.setNode(state.node);
    this.sampler.setServerNode(state.serverNode);
    if (state.note) this.alertOnce({ kind: 'journal', level: 'warn', message: state.note });
    return state.unit;
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
    this.deps.log('warn', unitProbeFailed(starting, errorText(error)));
  }

  private onReconnected(): void {
    this.apply({ kind: 'connection', at: this.now(), up: true });
    // The sampler's channel died with the connection: start it again.
    this.sampler.dropChannel();
    // The journal is read again from the process start; the reducer ignores what it already knows.
    this.journal.restart();
    this.journal.start();
    this.unitProbeDue = true;
    this.probeSoon();
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

  /** One round: the unit when due, HTTP health (whatever the journal says), the completion that proves readiness. */
  private async probe(): Promise<void> {
    if (!this.running || this.probing) return;
    this.probing = true;
    try {
      if (this.current.connected) {
        if (this.awaitingRunAfter !== undefined) await this.followRestart();
        else if (!this.tiedToRun) await this.findCurrentRun();
        else if (this.unitProbeIsDue()) await this.probeUnit();
        if (this.tiedToRun && this.awaitingRunAfter === undefined && this.running) await this.http.probe();
      }
      this.apply({ kind: 'tick', at: this.now(), stallMs: this.deps.options.stallMs });
      this.checkEnd();
      this.checkAlerts();
      this.sampler.sync();
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
    if (!this.journal.live && !this.sampler.live) return true;
    const elapsed = this.now() - this.lastUnitProbeAt;
    // A scheduler's end (a node failure) shows in no log line or process at once: read at a modest pace.
    if (this.target.endsOnlyInState && elapsed >= (this.mode === 'steady' ? this.roundMs : STATE_READ_WHILE_LOADING_MS))
      return true;
    if (this.mode === 'steady') return elapsed >= STEADY_UNIT_BACKSTOP_MS || this.current.healthFailures > 0;
    // Both live: the journal tells systemd's lines and the sampler a process gone; no backstop.
    if (this.journal.live && this.sampler.live) return false;
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
    else if (state.failure && this.journal.causeState === 'reading') return;
    else if (
      state.failure &&
      rootCause(state.failure.lines) === undefined &&
      this.tiedToRun &&
      this.journal.causeState === 'unread'
    ) {
      // systemd (or the sampler) told the end before the journal told why (a process that dies in
      // its first second: its lines may reach the journal after systemd's): read why first.
      void this.journal.readFailureCause().finally(() => this.checkEnd());
    } else if (state.failure) this.finish({ end: 'failed', state, message: state.failure.summary });
    else if (state.verdict === 'stopped') this.finish({ end: 'stopped', state });
    else if (state.downSince !== undefined && at - state.downSince >= this.deps.options.unreachableTimeoutMs) {
      this.finish({
        end: 'unreachable',
        state,
        message: unreachableFor(Math.round((at - state.downSince) / 1000)),
      });
    } else if (at - state.watchStartedAt >= this.deps.options.loadTimeoutMs) {
      this.finish({
        end: 'timeout',
        state,
        message: notReadyAfter(Math.round(this.deps.options.loadTimeoutMs / 60_000)),
      });
    }
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
      this.http.enterSteady();
      this.emitEnd(outcome);
      return;
    }
    if (goesOn) return;
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.journal.stop();
    this.sampler.stop();
    this.http.stop();
    this.urls.stop();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.emitEnd(outcome);
  }
}
