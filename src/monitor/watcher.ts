import type { ServerProfile } from '../config';
import { errorText } from '../util/errors';
import { TransportError, type RemoteProcess, type Transport } from '../remote/transport';
import { quote, withSudo } from '../remote/shell';
import { JournalReader, parseJournalJsonLine, journalFollowCommand } from '../server/journal';
import { execStartCommand, execStartOf, parseShow, showCommand, toUnitStatus } from '../server/systemd';
import type { SglangClient } from '../server/sglangHttp';
import { judgeCompletion, judgeHealth } from '../server/sglangResponses';
import type { UnitStatus } from '../server/events';
import { initialState, isFinished, reduce, wantsCompletionProbe, type LoadState, type Signal } from './loadState';
import type { LoadPrior } from './eta';
import { splitWitnessOutput, wantsWitnesses, witnessProbeCommand, witnessSignals, type WitnessOutput } from './witnessProbe';
import { modelPathOf } from '../server/execStart';
import { modelSizeCommand, parseModelSize } from '../server/procIo';
import { dropCacheWarning } from '../server/pageCache';

export interface WatchOptions {
  readonly pollIntervalMs: number;
  readonly stallMs: number;
  readonly loadTimeoutMs: number;
  readonly unreachableTimeoutMs: number;
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
}

/** How a watch ended. `state` is the last load state. */
export interface WatchOutcome {
  readonly end: 'ready' | 'failed' | 'stopped' | 'timeout' | 'unreachable' | 'cancelled';
  readonly state: LoadState;
  readonly message?: string;
}

const COMMAND_TIMEOUT_MS = 20_000;
/** Unit-state poll while the journal streams (a backstop: the journal reports exits at once). */
const UNIT_BACKSTOP_MS = 15_000;
const JOURNAL_RESTART_MS = 1_000;
/** Witness reads (bytes read, GPU memory) every this many polls while the weights load. */
const WITNESS_ROUNDS = 2;
const COMPLETION_PROMPT = 'hi';

/**
 * Watches one load of one unit: follows the journal over the SSH connection, polls the unit
 * and the HTTP server through the tunnel, and folds every signal into the pure LoadState.
 * Knows nothing of VS Code.
 */
export class LoadWatcher {
  private current: LoadState;
  private readonly listeners = new Set<(state: LoadState, previous: LoadState) => void>();
  private journal: RemoteProcess | undefined;
  private journalSince: number | undefined;
  /** Set once the unit's current process is known: no probe or journal before that. */
  private attached = false;
  /** Journal entries older than this belong to an earlier process of the unit. */
  private processStartMonotonicUs: number | undefined;
  private journalReader = new JournalReader();
  private timer: NodeJS.Timeout | undefined;
  private journalRestart: NodeJS.Timeout | undefined;
  private probing = false;
  private unitProbeDue = true;
  private lastUnitProbeAt = 0;
  private probeAgain = false;
  private modelName: string | undefined;
  /** The model's *.safetensors total, read at attach from ExecStart's --model-path. */
  private modelBytes: number | undefined;
  private modelPath: string | undefined;
  private settle: ((outcome: WatchOutcome) => void) | undefined;
  private readonly disposables: { dispose(): void }[] = [];
  private readonly now: () => number;

  constructor(private readonly deps: WatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.current = initialState(this.now());
  }

  get state(): LoadState {
    return this.current;
  }

  /** The model path (ExecStart --model-path) and its *.safetensors bytes, once read at attach. */
  get model(): { readonly path: string; readonly bytes: number | undefined } | undefined {
    return this.modelPath === undefined ? undefined : { path: this.modelPath, bytes: this.modelBytes };
  }

  onDidChange(listener: (state: LoadState, previous: LoadState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /**
   * Restarts the unit (mode 'restart') or attaches to whatever it is doing now ('attach'),
   * then watches until ready, failed, stopped, timed out, unreachable for too long, or cancelled.
   */
  async run(mode: 'restart' | 'attach'): Promise<WatchOutcome> {
    const finished = new Promise<WatchOutcome>((resolve) => (this.settle = resolve));
    this.disposables.push(
      this.deps.transport.onStateChange((s) => {
        if (s.kind === 'connected' && !this.current.connected) this.onReconnected();
        else if (s.kind === 'down') this.apply({ kind: 'connection', at: this.now(), up: false, error: s.error });
      }),
    );
    if (this.deps.prior) this.apply({ kind: 'prior', at: this.now(), prior: this.deps.prior });
    try {
      await this.deps.transport.connect();
      if (mode === 'restart') await this.restart();
      else await this.attach();
    } catch (error) {
      if (error instanceof TransportError) {
        // Could not reach the host (or it was not trusted): nothing is known about the server.
        this.apply({ kind: 'connection', at: this.now(), up: false, error: error.message });
        this.end({ end: 'unreachable', state: this.current, message: error.message });
      } else {
        this.end({ end: 'failed', state: this.current, message: errorText(error) });
      }
    }
    if (this.settle) {
      this.startJournal();
      this.schedule(0);
    }
    return finished;
  }

  cancel(reason = 'stopped by the user'): void {
    this.end({ end: 'cancelled', state: this.current, message: reason });
  }

  dispose(): void {
    this.cancel('disposed');
    this.listeners.clear();
  }

  private async restart(): Promise<void> {
    const { unit, sudo } = this.deps.profile;
    this.apply({ kind: 'restartRequested', at: this.now() });
    const result = await this.exec(withSudo(`systemctl restart ${quote(unit)}`, sudo));
    if (result.code !== 0) {
      const message = restartErrorMessage(result.stderr, this.deps.profile);
      this.apply({ kind: 'restartFailed', at: this.now(), message });
      this.end({ end: 'failed', state: this.current, message });
      return;
    }
    await this.attach();
  }

  private async attach(): Promise<void> {
    const unit = await this.showUnit();
    this.journalSince = unit.execMainStartedAt;
    this.processStartMonotonicUs = unit.execMainStartedMonotonicUs;
    this.attached = true;
    this.apply({ kind: 'attached', at: this.now(), unit });
    if (!this.current.failure) await this.readModel();
    if (this.current.failure) this.end({ end: 'failed', state: this.current, message: this.current.failure.summary });
    else if (this.current.verdict === 'stopped') this.end({ end: 'stopped', state: this.current });
  }

  private async showUnit(onWitnesses?: (out: WitnessOutput) => void): Promise<UnitStatus> {
    const witnesses = onWitnesses ? wantsWitnesses(this.current) : undefined;
    const show = showCommand(this.deps.profile.unit);
    const result = await this.exec(witnesses ? witnessProbeCommand(show, witnesses.mainPid, witnesses.controlGroup) : show);
    if (result.code !== 0) throw new Error(`systemctl show failed: ${result.stderr.trim() || `exit ${result.code}`}`);
    const out = splitWitnessOutput(result.stdout);
    if (witnesses && onWitnesses) onWitnesses(out);
    return toUnitStatus(parseShow(out.show));
  }

  /** The model path from ExecStart and the size of its *.safetensors: the bytes witness's 100 %. */
  private async readModel(): Promise<void> {
    try {
      const argv = execStartOf((await this.exec(execStartCommand(this.deps.profile.unit))).stdout);
      const warning = dropCacheWarning(argv);
      if (warning) this.deps.log('warn', warning);
      const modelPath = modelPathOf(argv);
      if (!modelPath || !modelPath.startsWith('/')) {
        this.deps.log('info', `No local --model-path in ExecStart${modelPath ? ` (${modelPath})` : ''}: progress comes from the journal only.`);
        return;
      }
      this.modelPath = modelPath;
      const size = parseModelSize((await this.exec(modelSizeCommand(modelPath))).stdout);
      if (size.files === 0) {
        this.deps.log('info', `No *.safetensors in ${modelPath}: progress comes from the journal only.`);
        return;
      }
      this.modelBytes = size.bytes;
      this.deps.log('info', `Model ${modelPath}: ${size.files} safetensors files, ${(size.bytes / 1e9).toFixed(1)} GB.`);
    } catch (error) {
      this.deps.log('warn', `Could not read the model size: ${errorText(error)}`);
    }
  }

  private async exec(command: string) {
    this.deps.log('trace', `$ ${command}`);
    return this.deps.transport.exec(command, { timeoutMs: COMMAND_TIMEOUT_MS });
  }

  private startJournal(): void {
    if (!this.settle || this.journal || !this.attached) return;
    const since = (this.journalSince ?? this.current.watchStartedAt) - 1000;
    const command = journalFollowCommand(this.deps.profile.unit, since);
    this.deps.log('trace', `$ ${command}`);
    this.deps.transport
      .stream(command, (line) => this.onJournalLine(line))
      .then((process) => {
        if (!this.settle) {
          process.kill();
          return;
        }
        this.journal = process;
        void process.exited.then(() => {
          if (this.journal !== process) return;
          this.journal = undefined;
          // journalctl ended on its own (the connection is fine): follow again, polling fast meanwhile.
          if (this.settle && this.current.connected) this.journalRestart = setTimeout(() => this.startJournal(), JOURNAL_RESTART_MS);
        });
      })
      .catch((error) => this.deps.log('warn', `Could not follow the journal: ${errorText(error)}`));
  }

  private onJournalLine(line: string): void {
    const entry = parseJournalJsonLine(line);
    if (!entry) return;
    // --since has one-second precision: drop what an earlier process of the unit logged.
    const start = this.processStartMonotonicUs;
    if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) return;
    for (const event of this.journalReader.read(entry.message, entry.at)) {
      const text = entry.message.replace(/\r/g, ' ').trim().slice(0, 300);
      this.apply({ kind: 'journal', at: this.now(), event, text });
      if (event.type === 'systemd') this.unitProbeDue = true;
      if (event.type === 'ready' || event.type === 'httpUp' || event.type === 'systemd') this.probeSoon();
    }
  }

  private onReconnected(): void {
    this.apply({ kind: 'connection', at: this.now(), up: true });
    this.journal?.kill();
    this.journal = undefined;
    // The journal is read again from the process start; the reducer ignores what it already knows.
    this.journalReader = new JournalReader();
    this.startJournal();
    this.probeSoon();
  }

  private schedule(delayMs: number): void {
    if (!this.settle) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.probe(), delayMs);
  }

  private probeSoon(): void {
    if (this.probing) this.probeAgain = true;
    else this.schedule(0);
  }

  /** One round: unit state, HTTP health, and the completion that proves readiness. */
  private async probe(): Promise<void> {
    if (!this.settle || this.probing || !this.attached) return;
    this.probing = true;
    try {
      if (this.current.connected) {
        // While the journal streams, systemd's exit lines and SGLang's phase lines arrive at once,
        // so the unit is polled only as a backstop (fewer remote processes); without it, every round.
        const at = this.now();
        const journalLive = this.journal !== undefined;
        // While the weights load, the same one command also reads the witnesses (bytes read, GPU
        // memory): they drive the read rate, the ETA, progress without shard lines and stall
        // detection, so it runs more often then (still one remote command per round).
        const poll = this.deps.options.pollIntervalMs;
        const interval = wantsWitnesses(this.current) !== undefined ? WITNESS_ROUNDS * poll : Math.max(UNIT_BACKSTOP_MS, poll);
        if (this.unitProbeDue || !journalLive || at - this.lastUnitProbeAt >= interval) {
          this.unitProbeDue = false;
          this.lastUnitProbeAt = at;
          await this.probeUnit();
        }
        // The port stays closed for the whole load: ask only once SGLang says HTTP is up.
        if (!journalLive || this.current.phase === 'warming up' || this.current.readyLogSeen) await this.probeHttp();
      }
      this.apply({ kind: 'tick', at: this.now(), stallMs: this.deps.options.stallMs });
      this.checkEnd();
    } finally {
      this.probing = false;
      const again = this.probeAgain;
      this.probeAgain = false;
      this.schedule(again ? 0 : this.deps.options.pollIntervalMs);
    }
  }

  private async probeUnit(): Promise<void> {
    try {
      let witnesses: WitnessOutput | undefined;
      const unit = await this.showUnit((out) => (witnesses = out));
      const at = this.now();
      this.apply({ kind: 'unit', at, unit });
      if (witnesses) for (const signal of witnessSignals(witnesses, at, this.modelBytes)) this.apply(signal);
    } catch (error) {
      this.deps.log('warn', `Unit probe failed: ${errorText(error)}`);
    }
  }

  private async probeHttp(): Promise<void> {
    if (!this.settle || this.current.failure) return;
    const health = await this.deps.http.health();
    const at = this.now();
    if (health.kind === 'refused') this.apply({ kind: 'http', at, result: 'refused', detail: 'port closed (connection refused)' });
    else if (health.kind === 'http') {
      const judged = judgeHealth(health.status);
      const result = judged === 'ok' ? 'healthy' : judged === 'warming' ? 'warming' : 'error';
      this.apply({ kind: 'http', at, result, detail: `/health ${health.status}` });
    } else this.apply({ kind: 'http', at, result: 'error', detail: `/health ${health.kind}: ${'message' in health ? health.message : ''}`.trim() });

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
      this.apply({ kind: 'completion', at, ok: false, detail: response.kind === 'refused' ? 'connection refused' : response.kind });
      return;
    }
    const judged = judgeCompletion(response.status, response.contentType, response.body, response.truncated);
    this.apply({
      kind: 'completion',
      at,
      ok: judged.ok,
      detail: judged.ok ? `1-token completion answered (${JSON.stringify(judged.text)})` : judged.reason,
    });
  }

  private checkEnd(): void {
    const state = this.current;
    const at = this.now();
    if (state.readyAt !== undefined) this.end({ end: 'ready', state });
    else if (state.failure) this.end({ end: 'failed', state, message: state.failure.summary });
    else if (state.verdict === 'stopped') this.end({ end: 'stopped', state });
    else if (state.downSince !== undefined && at - state.downSince >= this.deps.options.unreachableTimeoutMs) {
      this.end({ end: 'unreachable', state, message: `the host could not be reached for ${Math.round((at - state.downSince) / 1000)} s` });
    } else if (at - state.watchStartedAt >= this.deps.options.loadTimeoutMs) {
      this.end({ end: 'timeout', state, message: `not ready after ${Math.round(this.deps.options.loadTimeoutMs / 60_000)} min` });
    }
  }

  private apply(signal: Signal): void {
    const previous = this.current;
    const next = reduce(previous, signal);
    if (next === previous) return;
    this.current = next;
    if (next.witnessWarning !== undefined && previous.witnessWarning === undefined) this.deps.log('warn', next.witnessWarning);
    for (const listener of [...this.listeners]) listener(next, previous);
    if (isFinished(next) && !isFinished(previous)) this.schedule(0);
  }

  private end(outcome: WatchOutcome): void {
    const settle = this.settle;
    if (!settle) return;
    this.settle = undefined;
    clearTimeout(this.timer);
    clearTimeout(this.journalRestart);
    this.timer = undefined;
    this.journal?.kill();
    this.journal = undefined;
    for (const d of this.disposables.splice(0)) d.dispose();
    settle(outcome);
  }
}

function restartErrorMessage(stderr: string, profile: ServerProfile): string {
  const text = stderr.trim();
  if (/a password is required|a terminal is required/i.test(text)) {
    return `sudo asks for a password on ${profile.host ?? 'this machine'}: allow "systemctl restart ${profile.unit}" without a password (sudoers NOPASSWD) or connect as a user who may restart it.`;
  }
  if (/access denied|interactive authentication required|permission denied/i.test(text)) {
    return `Not allowed to restart ${profile.unit}: ${text.split('\n')[0]}. Set "sudo": true for this server or connect as a user who may restart it.`;
  }
  return `systemctl restart ${profile.unit} failed: ${text.split('\n').slice(-3).join(' ') || 'no message'}`;
}
