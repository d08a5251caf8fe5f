import { errorText } from '../util/errors';
import { TransportError } from '../transport/transport';
import { rootCause } from '../engine/rootCause';
import { engineFor } from '../engine/engine';
import { JournalReader } from '../engine/logReader';
import { isNewRun, isStarting, NO_RUN_YET, processKey, unitChangeAfterSettled } from './unitChange';
import type { ServiceStatus } from '../target/target';
import { initialState, reduce } from './loadState';
import { type WatchOutcome, UNIT_BACKSTOP_MS, STEADY_UNIT_BACKSTOP_MS } from './watchTypes';
import { HttpProbe } from './httpProbe';

/**
 * Watches one unit: follows the journal over the SSH connection, polls the unit and the HTTP
 * server through the tunnel, and folds every signal into the pure LoadState. A load ends in
 * ready, failed, stopped, timeout, unreachable or cancelled; with `steadyIntervalMs` the watch
 * then goes on cheaply (the journal, /health and the unit now and then), so a server that dies
 * after ready is `failed` at once and a restart by someone else is followed as a new load.
 * Knows nothing of VS Code.
 */
export class LoadWatcher extends HttpProbe {
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
  protected async restart(): Promise<void> {
    const unit = this.target.label;
    let before: ServiceStatus;
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
  protected async followRestart(): Promise<void> {
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

  protected async attachToCurrentRun(): Promise<void> {
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

  protected async attach(unit: ServiceStatus): Promise<void> {
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
   * The unit was restarted or stopped by someone else (or by systemd) while we watched: start
   * a fresh load state and follow it, journal included, from the new run's start.
   */
  protected async followNewRun(unit: ServiceStatus, change: 'new run' | 'stopping' | 'stopped'): Promise<void> {
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
  protected async showUnit(): Promise<ServiceStatus> {
    // Any look at the unit is the probe of this round (a line read meanwhile asks for another).
    this.unitProbeDue = false;
    this.lastUnitProbeAt = this.now();
    const state = await this.target.readState(this.io);
    this.execStartArgv = [...state.argv];
    const grammar = engineFor(state.argv)?.grammar;
    if (grammar !== this.grammar && !this.journal) this.journalReader = new JournalReader(grammar);
    this.grammar = grammar;
    this.hostPath = state.hostPath;
    if (state.note) this.alertOnce({ kind: 'journal', level: 'warn', message: state.note });
    return state.unit;
  }

  /**
   * A remote command failed. The connection going down is `unreachable` (the transport says so
   * through onStateChange as well); a command that timed out or failed is logged and tried
   * again next round: it says nothing about the host being reachable.
   */
  protected onCommandError(error: unknown, starting: boolean): void {
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

  protected onReconnected(): void {
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

  // ------------------------------------------------------------ probe rounds

  protected schedule(delayMs: number): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.probe(), delayMs);
  }

  protected probeSoon(): void {
    if (this.probing) this.probeAgain = true;
    else this.schedule(0);
  }

  /** One round: the unit when due, HTTP health (whatever the journal says), the completion that proves readiness. */
  protected async probe(): Promise<void> {
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

  protected unitProbeIsDue(): boolean {
    if (this.unitProbeDue) return true;
    // Neither the journal nor the sampler would tell an exit: ask systemd every round.
    if (this.journal === undefined && this.sampler?.process === undefined) return true;
    const elapsed = this.now() - this.lastUnitProbeAt;
    if (this.mode === 'steady') return elapsed >= STEADY_UNIT_BACKSTOP_MS || this.current.healthFailures > 0;
    // Both live: the journal tells systemd's lines and the sampler a process gone; no backstop.
    if (this.journal !== undefined && this.sampler?.process !== undefined) return false;
    return elapsed >= UNIT_BACKSTOP_MS;
  }

  protected async probeUnit(): Promise<void> {
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

  protected checkEnd(): void {
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

  /**
   * A load ended. Ready, failed and stopped go on as a steady watch when asked; anything else
   * (and a cancel) ends the watch for good.
   */
  protected finish(outcome: WatchOutcome): void {
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
