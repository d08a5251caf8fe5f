/** The sampler witness: the model's size from ExecStart, and the sampler (process alive, bytes, GPU, port) kept in step with the state. */
import { errorText } from '../../util/errors';
import type { RemoteProcess } from '../../transport/transport';
import type { ServerNodeShell, Target } from '../../target/target';
import { wantsWitnesses } from './witnessProbe';
import { samplerCommand, SamplerReader } from './sampler';
import { apiKeyFromArgv, modelPathOf } from '../../engine/execStart';
import type { ModelSize } from '../../host/procIo';
import { dropCacheWarning } from '../../host/pageCache';
import { HEALTH_BACKSTOP_ROUNDS, type WantedSampler, urlPort } from './watchTypes';
import { isPortForwarder, runsContainerCli, standInText, type PortOwner } from '../../host/portOwner';
import type { PortView } from './httpWitness';
import type { Witness, WitnessContext } from './witness';
import {
  journalOnlyProgress,
  lackingWords,
  modelPathInNoVolume,
  modelSize,
  noLocalModelPath,
  nodeSamplerEnded,
  noSafetensors,
  portAnsweredBy,
  portHeldByContainerCli,
  portHeldByForwarder,
  portOwnerUnreadable,
  samplerCouldNotRun,
  samplerEnded,
  samplerRunsOn,
  samplerStartFailed,
  standInNotCounted,
} from '../../present/words/watchWords';

function pidAndCommand(owner: PortOwner): { pid?: number; command?: string } {
  if (owner.kind !== 'other') return {};
  return {
    ...(owner.pid !== undefined ? { pid: owner.pid } : {}),
    ...(owner.command ? { command: owner.command } : {}),
  };
}

/** What the sampler witness asks of the watcher that holds it. */
export interface SamplerHooks {
  /** The watch follows a known process (tied to its run, no restart under way). */
  following(): boolean;
  /** The watch's round now. */
  roundMs(): number;
  /** The host's addresses, read at each start of the sampler. */
  onHostAddresses(addresses: readonly string[]): void;
}

export class SamplerWitness implements Witness, PortView {
  /** The sampler and what it was started for. */
  private sampler: ({ process: RemoteProcess | undefined } & WantedSampler) | undefined;
  /**
   * The sampler's look at the server's port while it loads. While no socket listens there, a
   * /health through the tunnel could only be refused: it is asked every HEALTH_BACKSTOP_ROUNDS
   * rounds instead of each, and at once when the port opens. Not trusted any more once /health
   * answered while the port looked closed (a server in another network namespace).
   */
  private port: { listening: boolean; at: number } | undefined;
  private portTrusted = true;
  /**
   * Who holds the listening socket was read since the port was last seen closed. Until then an
   * answer on the port may be a stand-in's: the sampler's round can come late on a busy host,
   * after the socket opened but before its owner line.
   */
  private ownerRead = false;
  /** When the sampler was last started: its silence since then counts as lag, like a late round. */
  private samplerSince = 0;
  /** Said once per watch: who holds the port cannot be told (another user's process, a forwarder). */
  private portOwnerUnreadableSaid = false;
  /** The model's *.safetensors total, read by the sampler from ExecStart's --model-path. */
  private modelBytes: number | undefined;
  private modelPath: string | undefined;
  /** ExecStart of the last look at the unit. */
  private execStartArgv: readonly string[] = [];
  /** Where the server's node is reached when it is not the SSH host (the target's last look). */
  private serverNode: ServerNodeShell | undefined;
  /** What was last said of the witnesses the watch lacks (said once until it changes). */
  private lackSaid: string | undefined;
  /** The place (ServerNodeShell key) where the sampler could not run: not tried again there. */
  private failedAt: string | undefined;

  constructor(
    private readonly ctx: WitnessContext,
    private readonly target: Target,
    private readonly hooks: SamplerHooks,
  ) {}

  /** The model path (ExecStart --model-path) and its *.safetensors bytes, once read. */
  get model(): { readonly path: string; readonly bytes: number | undefined } | undefined {
    return this.modelPath === undefined ? undefined : { path: this.modelPath, bytes: this.modelBytes };
  }

  /** The sampler runs on the host now (it tells a process gone at once). */
  get live(): boolean {
    return this.sampler?.process !== undefined;
  }

  /** Where the server runs when it is not the SSH host, from the last look at the target. */
  setServerNode(place: ServerNodeShell | undefined): void {
    this.serverNode = place;
  }

  /** Says once (until the reason changes) which witnesses the watch goes without, and why. */
  private sayLacking(why: string): void {
    if (this.lackSaid === why) return;
    this.lackSaid = why;
    this.ctx.deps.log('info', lackingWords(this.target.label, why));
  }

  /** The command line of the last look at the unit. */
  setCommandLine(argv: readonly string[]): void {
    this.execStartArgv = argv;
  }

  /**
   * What ExecStart says: the API key, and the model path whose *.safetensors size (the bytes
   * witness's 100 %) the sampler reads in its first line (a container's: on the host, through
   * the volume that holds it).
   */
  readExecStart(hostPath: (path: string) => string | undefined): void {
    const { deps } = this.ctx;
    const argv = this.execStartArgv;
    const warning = dropCacheWarning(argv);
    if (warning) deps.log('warn', warning);
    // SGLang with --api-key answers only /health without it: the key in ExecStart is the one it wants.
    const apiKey = apiKeyFromArgv(argv);
    if (apiKey !== undefined) deps.http.setApiKey(apiKey);
    const given = modelPathOf(argv);
    const modelPath = given && given.startsWith('/') ? hostPath(given) : undefined;
    if (!given || !given.startsWith('/') || modelPath === undefined) {
      this.modelPath = undefined;
      this.modelBytes = undefined;
      const why =
        given && given.startsWith('/') ? modelPathInNoVolume(given, this.target.label) : noLocalModelPath(given);
      deps.log('info', journalOnlyProgress(why));
      return;
    }
    if (modelPath !== this.modelPath) this.modelBytes = undefined;
    this.modelPath = modelPath;
  }

  private onModelSize(size: ModelSize): void {
    if (size.files === 0) {
      this.ctx.deps.log('info', noSafetensors(this.modelPath));
      return;
    }
    this.modelBytes = size.bytes;
    this.ctx.deps.log('info', modelSize(this.modelPath, size.files, size.bytes));
  }

  /** The sampler the state wants now: for the followed process, fast while it loads, slow once settled. */
  private wanted(): WantedSampler | undefined {
    const { ctx } = this;
    const state = ctx.state();
    if (!state.connected) return undefined;
    const place = state.unit?.mainPidElsewhere ? this.serverNode : undefined;
    // Said while a restart waits too: a job in the queue has no node to sample yet.
    if (place?.kind === 'lacking') this.sayLacking(place.why);
    if (!this.hooks.following() || (state.unit?.mainPidElsewhere && place?.kind !== 'inside')) return undefined;
    if (state.mainPid === undefined || state.failure || state.verdict === 'stopped') return undefined;
    if (place?.kind === 'inside' && this.failedAt === place.key) return undefined;
    const { options, http } = ctx.deps;
    const loading = ctx.mode() === 'load' || wantsWitnesses(state) !== undefined;
    const intervalMs = loading ? options.pollIntervalMs : (options.steadyIntervalMs ?? options.pollIntervalMs);
    const listenPort =
      ctx.mode() === 'load' && this.portTrusted && options.servesHttp !== false ? urlPort(http.baseUrl) : undefined;
    return { pid: state.mainPid, intervalMs, listenPort, ...(place?.kind === 'inside' ? { place } : {}) };
  }

  /** Starts, restarts (new process, new pace) or stops the sampler to match the state. */
  sync(): void {
    const { ctx } = this;
    const wanted = this.wanted();
    const current = this.sampler;
    if (
      current &&
      wanted &&
      current.pid === wanted.pid &&
      current.intervalMs === wanted.intervalMs &&
      current.listenPort === wanted.listenPort &&
      current.place?.key === wanted.place?.key
    )
      return;
    if (current) {
      this.sampler = undefined;
      current.process?.kill();
    }
    this.port = undefined;
    this.ownerRead = false;
    this.samplerSince = ctx.now();
    if (!wanted) return;
    const entry: { process: RemoteProcess | undefined } & WantedSampler = { process: undefined, ...wanted };
    this.sampler = entry;
    const reader = new SamplerReader(() => this.modelBytes);
    let exitSeen = false;
    const sizeFrom = this.modelBytes === undefined ? this.modelPath : undefined;
    const place = wanted.place;
    const script = samplerCommand({
      mainPid: wanted.pid,
      intervalMs: wanted.intervalMs,
      controlGroup: ctx.state().unit?.controlGroup,
      modelPath: sizeFrom,
      listenPort: wanted.listenPort,
      // Another node's addresses say nothing of where the SSH host's url goes.
      hostAddresses: place === undefined,
      ...(place ? { rootsSh: place.rootsSh } : {}),
    });
    const command = place ? place.wrap(script) : script;
    ctx.deps.log(
      'trace',
      place
        ? `$ sampler ${place.where} every ${wanted.intervalMs} ms`
        : `$ sampler for PID ${wanted.pid} every ${wanted.intervalMs} ms`,
    );
    /** The sampler's last words on stderr (why srun refused a step), and whether it ran at all. */
    const stderr: string[] = [];
    let started = false;
    ctx.deps.transport
      .stream(
        command,
        (line) => {
          if (this.sampler !== entry) return;
          const round = reader.read(line, ctx.now());
          if (round.roots && place) {
            started = true;
            this.lackSaid = undefined;
            ctx.deps.log('info', samplerRunsOn(place.where, round.roots));
          }
          if (round.hostAddresses) this.hooks.onHostAddresses(round.hostAddresses);
          if (round.modelSize) this.onModelSize(round.modelSize);
          if (round.portOwner && wanted.listenPort !== undefined) this.onPortOwner(round.portOwner, wanted.listenPort);
          if (round.listening !== undefined) this.onPortSeen(round.listening);
          for (const signal of round.signals) ctx.emit(signal);
          // The main process is gone: systemd says how it ended (once).
          if (round.alive === false && !exitSeen) {
            exitSeen = true;
            ctx.lookAtUnit(true);
          }
        },
        (line) => {
          if (stderr.push(line.slice(0, 300)) > 3) stderr.shift();
        },
      )
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
          if (place && !started) {
            // Not there (srun refused the step, no process of the job on its node): not tried again for this run.
            this.failedAt = place.key;
            const said = stderr.join(' ').trim();
            this.sayLacking(samplerCouldNotRun(place.where, code, said));
          } else if (place) {
            ctx.lookAtUnit(true);
            ctx.deps.log('info', nodeSamplerEnded(place.where, code));
          } else if (code !== null) ctx.deps.log('warn', samplerEnded(code));
        });
      })
      .catch((error) => {
        if (this.sampler === entry) ctx.deps.log('warn', samplerStartFailed(errorText(error)));
      });
  }

  /** The connection went down with the sampler's channel: forget it, the next round starts another. */
  dropChannel(): void {
    const sampler = this.sampler;
    this.sampler = undefined;
    sampler?.process?.kill();
  }

  stop(): void {
    this.dropChannel();
    this.port = undefined;
  }

  private onPortSeen(listening: boolean): void {
    const { ctx } = this;
    const opened = listening && this.port?.listening !== true;
    this.port = { listening, at: ctx.now() };
    if (!listening) this.ownerRead = false;
    if (!listening) ctx.emit({ kind: 'listener', at: ctx.now(), standIn: undefined });
    if (opened) ctx.probeSoon();
  }

  /** Who holds the port's listening socket (each time it is a new one): a stand-in is named, in the state and the log. */
  private onPortOwner(owner: PortOwner, port: number): void {
    const { ctx } = this;
    const log = ctx.deps.log;
    const at = ctx.now();
    const service = this.target.label;
    const outsideTree = runsContainerCli(this.execStartArgv);
    this.ownerRead = true;
    if (owner.kind === 'other' && !isPortForwarder(owner) && !outsideTree) {
      const standIn = { port, service, since: at, ...pidAndCommand(owner) };
      log('warn', standInNotCounted(standInText(standIn)));
      ctx.emit({ kind: 'listener', at, standIn });
      return;
    }
    if (owner.kind === 'unit' && ctx.state().standIn) log('info', portAnsweredBy(port, service));
    if (owner.kind === 'unknown' && !this.portOwnerUnreadableSaid) {
      this.portOwnerUnreadableSaid = true;
      log('info', portOwnerUnreadable(port, service));
    }
    if (owner.kind === 'other' && outsideTree && !isPortForwarder(owner) && !this.portOwnerUnreadableSaid) {
      this.portOwnerUnreadableSaid = true;
      log('info', portHeldByContainerCli(port, owner.pid, owner.command, service));
    }
    if (isPortForwarder(owner) && owner.kind === 'other' && !this.portOwnerUnreadableSaid) {
      this.portOwnerUnreadableSaid = true;
      log('info', portHeldByForwarder(port, owner.pid, owner.command));
    }
    ctx.emit({ kind: 'listener', at, standIn: undefined });
  }

  /**
   * The sampler watches the port but has not said yet who listens there (its first round is still
   * to come, or the port was last seen closed): an answer now could be a stand-in's, taken for the
   * server's before it is named.
   */
  ownerPending(): boolean {
    if (!this.portTrusted || this.ownerRead || this.wanted()?.listenPort === undefined) return false;
    // A sampler silent for that long is not waited for: answers count as the server's again.
    const lastWord = this.port?.at ?? this.samplerSince;
    return this.ctx.now() - lastWord <= HEALTH_BACKSTOP_ROUNDS * this.hooks.roundMs();
  }

  /** The sampler saw, this round or the last, that nothing listens on the port: /health would be refused. */
  seenClosed(): boolean {
    const port = this.port;
    return (
      this.portTrusted && port !== undefined && !port.listening && this.ctx.now() - port.at <= 2 * this.hooks.roundMs()
    );
  }

  sampledAt(): number | undefined {
    return this.port?.at;
  }

  distrust(): void {
    this.portTrusted = false;
  }
}
