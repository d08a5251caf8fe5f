/** The sampler witness: the model's size from ExecStart, and the sampler (process alive, bytes, GPU, port) kept in step with the state. */
import { errorText } from '../util/errors';
import type { RemoteProcess } from '../transport/transport';
import { wantsWitnesses } from './witnessProbe';
import { samplerCommand, SamplerReader } from './sampler';
import { apiKeyFromArgv, modelPathOf } from '../engine/execStart';
import type { ModelSize } from '../host/procIo';
import { dropCacheWarning } from '../host/pageCache';
import { type WantedSampler, urlPort } from './watchTypes';
import { JournalFollow } from './journalFollow';
import { isPortForwarder, runsContainerCli, standInText, type PortOwner } from '../host/portOwner';

function pidAndCommand(owner: PortOwner): { pid?: number; command?: string } {
  if (owner.kind !== 'other') return {};
  return {
    ...(owner.pid !== undefined ? { pid: owner.pid } : {}),
    ...(owner.command ? { command: owner.command } : {}),
  };
}

export abstract class SamplerFollow extends JournalFollow {
  /** Said once per watch: who holds the port cannot be told (another user's process, a forwarder). */
  private portOwnerUnreadableSaid = false;

  /**
   * What ExecStart says: the API key, and the model path whose *.safetensors size (the bytes
   * witness's 100 %) the sampler reads in its first line (a container's: on the host, through
   * the volume that holds it).
   */
  protected readExecStart(): void {
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

  protected onModelSize(size: ModelSize): void {
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

  // ------------------------------------------------------------ sampler

  /** The sampler the state wants now: for the followed process, fast while it loads, slow once settled. */
  protected wantedSampler(): WantedSampler | undefined {
    const state = this.current;
    if (!this.running || !this.attached || this.awaitingRunAfter !== undefined || !state.connected) return undefined;
    if (state.mainPid === undefined || state.failure || state.verdict === 'stopped') return undefined;
    if (state.unit?.mainPidElsewhere) return undefined;
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
  protected syncSampler(): void {
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
        if (round.portOwner && wanted.listenPort !== undefined) this.onPortOwner(round.portOwner, wanted.listenPort);
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

  protected onPortSeen(listening: boolean): void {
    const opened = listening && this.port?.listening !== true;
    this.port = { listening, at: this.now() };
    if (!listening) this.apply({ kind: 'listener', at: this.now(), standIn: undefined });
    if (opened) this.probeSoon();
  }

  /** Who holds the port's listening socket (each time it is a new one): a stand-in is named, in the state and the log. */
  protected onPortOwner(owner: PortOwner, port: number): void {
    const at = this.now();
    const service = this.target.label;
    const outsideTree = runsContainerCli(this.execStartArgv);
    if (owner.kind === 'other' && !isPortForwarder(owner) && !outsideTree) {
      const standIn = { port, service, since: at, ...pidAndCommand(owner) };
      this.deps.log(
        'warn',
        `${standInText(standIn)}: its answers are not counted; the load keeps the phase its own witnesses say.`,
      );
      this.apply({ kind: 'listener', at, standIn });
      return;
    }
    if (owner.kind === 'unit' && this.current.standIn)
      this.deps.log('info', `port ${port} is answered by ${service} now.`);
    if (owner.kind === 'unknown' && !this.portOwnerUnreadableSaid) {
      this.portOwnerUnreadableSaid = true;
      this.deps.log(
        'info',
        `Who listens on port ${port} cannot be told: the fds of ${service}'s processes (/proc/PID/fd) are not readable by this login (the server runs as another user); answers on the port are taken as the server's.`,
      );
    }
    if (owner.kind === 'other' && outsideTree && !isPortForwarder(owner) && !this.portOwnerUnreadableSaid) {
      this.portOwnerUnreadableSaid = true;
      this.deps.log(
        'info',
        `port ${port} is held by pid ${owner.pid ?? '?'} (${owner.command ?? '?'}); ${service} runs a container CLI, whose server runs outside its process tree: answers on the port are taken as the server's.`,
      );
    }
    if (isPortForwarder(owner) && owner.kind === 'other' && !this.portOwnerUnreadableSaid) {
      this.portOwnerUnreadableSaid = true;
      this.deps.log(
        'info',
        `port ${port} is held by pid ${owner.pid} (${owner.command}), which forwards it into another network namespace: answers on the port are taken as the server's.`,
      );
    }
    this.apply({ kind: 'listener', at, standIn: undefined });
  }

  /**
   * The sampler watches the port but has not said yet who listens there (its first round is still
   * to come): an answer now could be a stand-in's, taken for the server's before it is named.
   */
  protected portOwnerPending(): boolean {
    return this.portWitnessTrusted && this.wantedSampler()?.listenPort !== undefined && this.port === undefined;
  }

  /** The sampler saw, this round or the last, that nothing listens on the port: /health would be refused. */
  protected portSeenClosed(): boolean {
    const port = this.port;
    return this.portWitnessTrusted && port !== undefined && !port.listening && this.now() - port.at <= 2 * this.roundMs;
  }
}
