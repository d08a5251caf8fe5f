/**
 * The system OpenSSH client as a Transport: one ControlMaster per host (controlMaster.ts),
 * commands and streams as clients of it (muxProcess.ts), the configuration as `ssh -G` prints
 * it, host keys checked by OpenSSH itself against the same known_hosts file and policy.
 * Reconnected with the same backoff and words as the ssh2 transport after the master dies.
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { Duplex } from 'node:stream';
import { noop, realTimers, type Timers, type UnknownHostKeyInfo } from '../ssh/sshOptions';
import type { ConnectionState, ExecOptions, ExecResult, RemoteProcess, Transport, TransportError } from '../transport';
import { AuthError, ConfigError, ConnectionClosedError, HostKeyError } from '../errors';
import { ConnectionLife, endAfterStops } from '../connectionLife';
import type { ClientChoice } from './chooseClient';
import {
  isAlive,
  logSize,
  makeControlDir,
  masterArgs,
  masterPid,
  muxClientArgs,
  readLog,
  startMaster,
  stopMaster,
  type ControlDir,
} from './controlMaster';
import { diagnoseRefusal } from './diagnosis';
import { defaultAskpassHelper } from './askpass/helperFile';
import { openMasterPrompts } from './askpass/masterPrompts';
import type { SshPrompter } from './askpass/promptKind';
import { first, hostArgs, readEffectiveConfig, type EffectiveConfig, type HostArgs } from './effectiveConfig';
import { knownHostsFilesOf, markerLines } from './identities';
import { LocalForwards } from './localForwards';
import { execMux, streamMux, type MuxContext, type MuxRun } from './muxProcess';
import { changedHostKey, classifyOpenSshFailure, promptRefusal, unknownHostKeyRefusal } from './opensshErrors';
import { handleUnknownHostKey } from './unknownHostKey';
import { fingerprintSha256, parseKnownHosts, readKnownHostsFile } from '../ssh/knownHosts';
import { masterExited, masterSilent, OPENSSH_ON_WINDOWS } from '../../present/words/opensshWords';
import { hostKeyChanged } from '../../present/words/sshWords';
import { opensshConfig, opensshConnects } from '../../present/words/connectionWords';

export interface OpenSshTransportOptions {
  readonly host: HostArgs;
  /** kimiService.knownHostsFile (absolute): used when the config sets no UserKnownHostsFile. */
  readonly knownHostsFile: string;
  /** The host-key policy, as for ssh2: asked after OpenSSH refused an unknown key. */
  decideUnknownHostKey(info: UnknownHostKeyInfo): Promise<'trust' | 'reject'>;
  /**
   * Asks OpenSSH's questions (a key's passphrase, a token's PIN, a one-time code, a password)
   * through the front. Absent: nobody can answer, and OpenSSH runs with BatchMode yes.
   */
  readonly prompt?: SshPrompter;
  /** The askpass helper (dist/askpass.sh); default the one beside the running bundle. */
  readonly askpassHelper?: string;
  /** The `ssh` program; default `ssh` on PATH. */
  readonly sshPath?: string;
  /** Defaults to this process's platform (Windows' OpenSSH cannot multiplex: refused). */
  readonly platform?: NodeJS.Platform;
  /** Environment of the master (SSH_AUTH_SOCK, KRB5CCNAME...); default this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the transport's own folder is made; default the system's temporary folder. */
  readonly controlParent?: string;
  readonly keepaliveIntervalMs?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** How often the master's pid is checked for life. */
  readonly watchIntervalMs?: number;
  /** How long a forward (localForwards.ts) outlives its last stream before it is cancelled. */
  readonly forwardIdleMs?: number;
  readonly timers?: Timers;
  /** Which client was chosen and why (chooseClient.ts), said when connecting. */
  readonly choice?: ClientChoice;
  readonly log?: (message: string) => void;
}

export class OpenSshTransport implements Transport {
  readonly description: string;
  /** State, retries and fail-fast; its link is the ControlMaster's pid. */
  private readonly life: ConnectionLife<number>;
  private readonly timers: Timers;
  private readonly log: (message: string) => void;
  private readonly sshPath: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly control: ControlDir;
  private readonly children = new Set<ChildProcess>();
  private readonly runs = new Set<MuxRun>();
  private readonly mux: MuxContext;
  private readonly forwards: LocalForwards;
  private watchHandle: unknown;
  private readonly starting = new Set<() => void>();

  constructor(private readonly options: OpenSshTransportOptions) {
    const h = options.host;
    this.description = `${h.username !== undefined ? `${h.username}@` : ''}${h.host}${h.port !== undefined ? `:${h.port}` : ''} (OpenSSH)`;
    this.timers = options.timers ?? realTimers;
    this.log = options.log ?? noop;
    this.sshPath = options.sshPath ?? 'ssh';
    this.env = options.env ?? process.env;
    this.control = makeControlDir(options.controlParent ?? os.tmpdir());
    this.life = new ConnectionLife<number>({
      description: this.description,
      timers: this.timers,
      log: this.log,
      ...(options.backoffInitialMs !== undefined ? { backoffInitialMs: options.backoffInitialMs } : {}),
      ...(options.backoffMaxMs !== undefined ? { backoffMaxMs: options.backoffMaxMs } : {}),
      dial: (attempt) => this.dial(attempt),
      beforeFirstAttempt: () => {
        if (options.choice) this.log(opensshConnects(this.description, options.choice.reason));
      },
      onConnected: () => this.watch(),
      connectedNote: (pid) => `(ControlMaster pid ${pid})`,
    });
    this.mux = {
      description: this.description,
      sshPath: this.sshPath,
      timers: this.timers,
      muxArgs: muxClientArgs(this.control),
      children: this.children,
      runs: this.runs,
      masterUnreachable: () => this.checkMaster(),
      logSince: (offset) => readLog(this.control, offset),
      logSize: () => logSize(this.control),
    };
    this.forwards = new LocalForwards({
      mux: this.mux,
      dir: this.control.dir,
      masterPid: () => this.life.current,
      ...(options.forwardIdleMs !== undefined ? { idleMs: options.forwardIdleMs } : {}),
      log: this.log,
    });
  }

  get client(): ClientChoice | undefined {
    return this.options.choice;
  }

  get state(): ConnectionState {
    return this.life.state;
  }

  get handshakes(): number {
    return this.life.handshakes;
  }

  /** The ControlMaster's pid while connected (benchmarks, tests). */
  get masterPid(): number | undefined {
    return this.life.current;
  }

  /** Channels open now: client processes (sessions, control requests) and forwarded streams. */
  get openChannels(): number {
    return this.children.size + this.forwards.streams;
  }

  /** The sockets of the forwards the master holds now (tests). */
  get forwardSockets(): string[] {
    return this.forwards.sockets;
  }

  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void } {
    return this.life.onStateChange(listener);
  }

  connect(): Promise<void> {
    return this.life.connect();
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    await this.life.ready();
    return execMux(this.mux, command, options);
  }

  async stream(
    command: string,
    onLine: (line: string) => void,
    onStderr?: (line: string) => void,
  ): Promise<RemoteProcess> {
    await this.life.ready();
    return streamMux(this.mux, command, onLine, onStderr);
  }

  openStream = async (host: string, port: number): Promise<NodeJS.ReadWriteStream & Duplex> => {
    await this.life.ready();
    return this.forwards.openStream(host, port) as Promise<NodeJS.ReadWriteStream & Duplex>;
  };

  dispose(): void {
    this.life.dispose((pid) => {
      this.stopWatch();
      this.forwards.dispose();
      this.starting.forEach((kill) => kill());
      const runs = [...this.runs];
      this.runs.clear();
      const stops = pid !== undefined ? runs.map((r) => r.stop('TERM')) : [];
      const runChildren = new Set(runs.map((r) => r.child));
      for (const c of this.children) if (!runChildren.has(c)) c.kill('SIGTERM');
      const endAll = () => {
        for (const c of this.children) c.kill('SIGTERM');
        void stopMaster(this.sshPath, this.control).then(() =>
          fs.rmSync(this.control.dir, { recursive: true, force: true }),
        );
      };
      // The process groups started are ended over the master before it goes.
      endAfterStops(stops, endAll);
    });
  }

  /** Starts the master; an unknown host key is asked about once, then the master is started again. */
  private async dial(attempt: number): Promise<number> {
    if ((this.options.platform ?? process.platform) === 'win32') throw new ConfigError(OPENSSH_ON_WINDOWS);
    const config = await readEffectiveConfig(this.options.host, this.sshPath);
    const known = knownHostsFilesOf(config, this.options.knownHostsFile);
    if (attempt === 1) this.logConfig(config, known.user);
    for (let round = 0; ; round++) {
      fs.writeFileSync(this.control.log, '', { mode: 0o600 });
      // A socket left by a master that was killed would keep the new one from listening.
      fs.rmSync(this.control.socket, { force: true });
      const keepalive =
        Number(first(config, 'serveraliveinterval') ?? '0') > 0
          ? undefined
          : Math.round((this.options.keepaliveIntervalMs ?? 5000) / 1000);
      const connectTimeout = (first(config, 'connecttimeout') ?? 'none') === 'none' ? 15 : undefined;
      let endLogin: (() => void) | undefined;
      const prompts = await openMasterPrompts({
        ask: this.options.prompt,
        helper: this.options.askpassHelper ?? defaultAskpassHelper(),
        dir: this.control.dir,
        socketPath: this.control.askpassSocket,
        host: this.description,
        endLogin: () => endLogin?.(),
        log: this.log,
      });
      const args = [
        ...hostArgs(this.options.host),
        ...masterArgs(this.control, {
          ...(known.override !== undefined ? { knownHostsOverride: known.override } : {}),
          ...(keepalive !== undefined ? { keepaliveSeconds: keepalive } : {}),
          ...(connectTimeout !== undefined ? { connectTimeoutSeconds: connectTimeout } : {}),
          prompts: prompts !== undefined,
        }),
        '--',
        this.options.host.host,
      ];
      let ok: boolean;
      try {
        ({ ok } = await startMaster(this.sshPath, args, { ...this.env, ...prompts?.env }, (kill) => {
          endLogin = kill;
          this.starting.add(kill);
          return () => this.starting.delete(kill);
        }));
      } finally {
        // The socket and its token end with the login: a logged-in master asks nothing more.
        prompts?.session.close();
      }
      if (this.life.disposed) throw this.life.disposedError();
      const unanswered = prompts?.session.refused;
      if (unanswered) throw new AuthError(promptRefusal(this.description, unanswered));
      const log = readLog(this.control);
      if (ok) {
        const pid = await masterPid(this.sshPath, this.control);
        if (pid !== undefined) return pid;
        throw new ConnectionClosedError(masterSilent(this.description));
      }
      const unknown = unknownHostKeyRefusal(log);
      if (unknown && round === 0) {
        const caLines = (await markerLines(config, [...known.user, ...known.global])).filter((l) =>
          l.endsWith('(@cert-authority)'),
        );
        await handleUnknownHostKey(config, unknown.keyType, known.user[0]!, {
          decide: (info) => this.options.decideUnknownHostKey(info),
          log: this.log,
          caLines,
        });
        continue;
      }
      throw await this.refusal(config, log);
    }
  }

  private async refusal(config: EffectiveConfig, log: string): Promise<TransportError> {
    const who = `${first(config, 'user') ?? ''}@${first(config, 'hostname') ?? this.options.host.host}:${first(config, 'port') ?? '22'}`;
    const changed = changedHostKey(log);
    if (changed) {
      const known: string[] = [];
      let keyType: string | undefined;
      for (const o of changed.offending) {
        const e = parseKnownHosts(await readKnownHostsFile(o.file)).find((x) => x.line === o.line);
        if (e) known.push(fingerprintSha256(e.keyBlob));
        // OpenSSH only calls a line of the offered key's own type offending: its type names the offered key as ssh2 does.
        keyType ??= e?.keyType;
      }
      const at = changed.offending.map((o) => `${o.file} line ${o.line}`).join(', ');
      return new HostKeyError(
        'host-key-changed',
        hostKeyChanged(
          changed.name,
          `${keyType !== undefined ? `${keyType} ` : ''}${changed.offered}`,
          at,
          known,
          changed.offending[0]?.file ?? '',
        ),
        {
          host: changed.name,
          offered: changed.offered,
          known,
          file: changed.offending[0]?.file ?? '',
          lines: changed.offending.map((o) => o.line),
        },
      );
    }
    const denied = /Permission denied/.test(log);
    const diagnosis = denied ? await diagnoseRefusal(config, this.env, this.control.dir) : undefined;
    return classifyOpenSshFailure(log, {
      who,
      ...(diagnosis ? { diagnosis } : {}),
      ...(this.options.prompt ? { prompts: true } : {}),
    });
  }

  private logConfig(config: EffectiveConfig, knownHosts: readonly string[]): void {
    const name = `${this.options.host.host} (ssh -G: ${first(config, 'user')}@${first(config, 'hostname')}:${first(config, 'port')})`;
    this.log(opensshConfig(name, knownHosts, this.options.prompt !== undefined));
    for (const k of [
      'certificatefile',
      'proxyjump',
      'proxycommand',
      'gssapiauthentication',
      'pkcs11provider',
      'identityagent',
    ])
      for (const v of config.get(k) ?? []) if (v !== 'none' && v !== 'no') this.log(`${name}: ${k} ${v}`);
  }

  private watch(): void {
    this.stopWatch();
    const tick = () => {
      this.watchHandle = undefined;
      if (this.checkMaster()) this.watchHandle = this.timers.setTimeout(tick, this.options.watchIntervalMs ?? 1000);
    };
    this.watchHandle = this.timers.setTimeout(tick, this.options.watchIntervalMs ?? 1000);
  }

  private stopWatch(): void {
    if (this.watchHandle !== undefined) this.timers.clearTimeout(this.watchHandle);
    this.watchHandle = undefined;
  }

  /** True while the master lives; when it is gone, the connection is marked lost and retried. */
  private checkMaster(): boolean {
    const pid = this.life.current;
    if (pid === undefined || this.life.disposed) return false;
    if (isAlive(pid)) return true;
    this.stopWatch();
    const last = readLog(this.control).trim().split('\n').filter(Boolean).pop();
    this.life.lost(pid, last ?? masterExited());
    return false;
  }
}
