/** The watcher's state, listeners and signal folding; the witnesses (journal, sampler, HTTP) and the probe rounds extend it. */
import type { RemoteProcess } from '../transport/transport';
import { JournalReader } from '../engine/logReader';
import type { LogGrammar } from '../engine/engine';
import { targetFor, targetIo, type Target, type TargetIo } from '../target/target';
import { initialState, reduce } from './loadState';
import type { LoadState, Signal } from './loadStateTypes';
import { isFinished } from './loadVerdict';
import {
  type WatcherDeps,
  type WatchOutcome,
  type WatchAlert,
  COMMAND_TIMEOUT_MS,
  type WantedSampler,
  JOURNAL_RETRY_FIRST_MS,
  COMPLETION_ALERT_MS,
} from './watchTypes';

export abstract class WatchCore {
  protected current: LoadState;
  protected readonly listeners = new Set<(state: LoadState, previous: LoadState) => void>();
  protected readonly endListeners = new Set<(outcome: WatchOutcome) => void>();
  protected readonly alertListeners = new Set<(alert: WatchAlert) => void>();
  protected mode: 'load' | 'steady' = 'load';
  protected journal: RemoteProcess | undefined;
  /** The sampler (main process alive, bytes read, GPU memory) and what it was started for. */
  protected sampler: ({ process: RemoteProcess | undefined } & WantedSampler) | undefined;
  /**
   * The sampler's look at the server's port while it loads. While no socket listens there, a
   * /health through the tunnel could only be refused: it is asked every HEALTH_BACKSTOP_ROUNDS
   * rounds instead of each, and at once when the port opens. Not trusted any more once /health
   * answered while the port looked closed (a server in another network namespace).
   */
  protected port: { listening: boolean; at: number } | undefined;
  protected portWitnessTrusted = true;
  protected healthSkipped = 0;
  protected journalStarting = false;
  protected journalRetryMs = JOURNAL_RETRY_FIRST_MS;
  protected journalSince: number | undefined;
  /** Set once the unit's current process is known: no journal before that. */
  protected attached = false;
  /** After a restart (ours or not): the run that must be replaced before a new load is followed. */
  protected awaitingRunAfter: string | undefined;
  /** systemd was seen stopping the unit (journal or `deactivating`): a process gone is stopped, not crashed. */
  protected stopSeen = false;
  /** Journal entries older than this belong to an earlier process of the unit. */
  protected processStartMonotonicUs: number | undefined;
  protected journalReader = new JournalReader();
  /** The engine's log grammar, once its command line is known (engineFor); until then every engine's. */
  protected grammar: LogGrammar | undefined;
  protected timer: NodeJS.Timeout | undefined;
  protected journalRetry: NodeJS.Timeout | undefined;
  protected probing = false;
  protected unitProbeDue = true;
  protected lastUnitProbeAt = 0;
  protected lastHealthAt = 0;
  protected probeAgain = false;
  protected modelName: string | undefined;
  /** The model's *.safetensors total, read at attach from ExecStart's --model-path. */
  protected modelBytes: number | undefined;
  protected modelPath: string | undefined;
  /** ExecStart of the last `systemctl show`. */
  protected execStartArgv: string[] = [];
  protected completionFailingSince: number | undefined;
  /** The journal tail of a failed run: read once per run, and the end waits while it is read. */
  protected failureCause: 'unread' | 'reading' | 'read' = 'unread';
  protected readonly alerted = new Set<WatchAlert['kind']>();
  protected settle: ((outcome: WatchOutcome) => void) | undefined;
  protected running = false;
  protected readonly disposables: { dispose(): void }[] = [];
  protected readonly now: () => number;
  protected readonly target: Target;
  /** Where a path of the server's command line is on the host (a container's mounts). */
  protected hostPath: (path: string) => string | undefined = (path) => path;

  constructor(protected readonly deps: WatcherDeps) {
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

  /** The transport as the target uses it: each command traced, with the watch's timeout. */
  protected get io(): TargetIo {
    return targetIo(this.deps.transport, COMMAND_TIMEOUT_MS, (command) => this.deps.log('trace', `$ ${command}`));
  }

  protected get roundMs(): number {
    const steady = this.deps.options.steadyIntervalMs;
    return this.mode === 'steady' && steady !== undefined && this.awaitingRunAfter === undefined
      ? steady
      : this.deps.options.pollIntervalMs;
  }

  protected checkAlerts(): void {
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

  protected alertOnce(alert: WatchAlert): void {
    if (this.alerted.has(alert.kind)) return;
    this.alerted.add(alert.kind);
    this.emitAlert(alert);
  }

  protected emitAlert(alert: WatchAlert): void {
    this.deps.log(alert.level === 'info' ? 'info' : alert.level, alert.message);
    for (const listener of [...this.alertListeners]) listener(alert);
  }

  protected apply(signal: Signal): void {
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
  protected onSteadyChange(next: LoadState, previous: LoadState): void {
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

  protected emitEnd(outcome: WatchOutcome): void {
    for (const listener of [...this.endListeners]) listener(outcome);
    const settle = this.settle;
    this.settle = undefined;
    settle?.(outcome);
  }

  protected abstract schedule(delayMs: number): void;

  protected abstract probeSoon(): void;
}
