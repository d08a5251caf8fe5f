/**
 * One verified ssh2 connection to the GPU host (through ProxyJump hops or a ProxyCommand when
 * configured), reused for every command and tunnel, reconnected with backoff after a drop.
 * Authentication follows OpenSSH: the agent first (sshAgent.ts), then the identity files, whose
 * passphrases are asked only for keys the agent could not sign with.
 */
import * as fs from 'node:fs';
import type { Duplex } from 'node:stream';
import {
  Client,
  utils as ssh2Utils,
  type AnyAuthMethod,
  type AuthHandlerMiddleware,
  type AuthenticationType,
  type ClientChannel,
  type ConnectConfig,
  type ParsedKey,
} from 'ssh2';
import { readIdentityPublicKey } from './identityFiles';
import {
  appendKnownHostsLine,
  checkHostKeyInFiles,
  fingerprintSha256,
  formatKnownHostsLine,
  hostLookupName,
  keyTypeOfBlob,
  knownKeyTypes,
  readKnownHostsFile,
  type KnownHostsText,
} from './knownHosts';
import { CappedBuffer, DEFAULT_MAX_OUTPUT_BYTES, finishOutput, FirstLineTap, LineSplitter } from '../lines';
import { proxyExitError, spawnProxyCommand, type ProxyProcess } from './proxyCommand';
import { agentCandidates, SelectedAgent, type AgentCandidate } from './sshAgent';
import { announcePid, announcePidEndingWithStdin, killGroupCommand } from '../shell';
import { backoffDelay, channelOpenError, classifySshError, isFatal } from './sshErrors';
import type { SshEndpoint, SshTarget } from './sshConfig';
import {
  TransportError,
  type ConnectionState,
  type ExecOptions,
  type ExecResult,
  type RemoteProcess,
  type Transport,
  type TransportErrorKind,
} from '../transport';

export interface UnknownHostKeyInfo {
  /** The name checked in known_hosts (the resolved HostName). */
  readonly host: string;
  readonly port: number;
  /** What the user wrote when it differs from `host` (a ~/.ssh/config alias). */
  readonly alias: string;
  readonly keyType: string;
  /** `SHA256:...` as `ssh-keygen -lf` prints it. */
  readonly fingerprint: string;
  /** Keys of these other types are already known for the host (worth a warning). */
  readonly otherKeyTypes: readonly string[];
  /** The file a trusted key is written to (UserKnownHostsFile of ~/.ssh/config, else kimi.knownHostsFile). */
  readonly knownHostsFile: string;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface SshTransportOptions {
  readonly target: SshTarget;
  /**
   * Absolute path (already ~-expanded): the known-hosts file of every host whose ~/.ssh/config
   * entry sets no UserKnownHostsFile.
   */
  readonly knownHostsFile: string;
  /** The host-key policy: `ask` shows a modal, `strict` rejects, `accept-new` trusts. */
  decideUnknownHostKey(info: UnknownHostKeyInfo): Promise<'trust' | 'reject'>;
  /** Asked for an encrypted key; undefined = the user cancelled (the key is skipped). */
  requestPassphrase(keyPath: string, retry: boolean): Promise<string | undefined>;
  /**
   * ssh-agent socket or pipe for every hop, instead of OpenSSH's choice (IdentityAgent, then
   * $SSH_AUTH_SOCK, on Windows then the OpenSSH pipe and Pageant). Empty string = no agent.
   */
  readonly agentSocket?: string;
  /** For the agent choice: defaults to this process's platform and environment. */
  readonly platform?: NodeJS.Platform;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly readyTimeoutMs?: number;
  readonly keepaliveIntervalMs?: number;
  readonly keepaliveCountMax?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  readonly timers?: Timers;
  /** Log sink: connection events and commands. Never passed a secret. */
  readonly log?: (message: string) => void;
}

/** How long a stream stopped by EOF may take to end before its process group is killed. */
const STDIN_STOP_GRACE_MS = 3000;

/** Host key algorithms ssh2 supports, in its default preference. */
const HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/** Like OpenSSH, prefer the algorithms of keys we already know, so the server shows us one of those. */
export function orderHostKeyAlgorithms(knownTypes: readonly string[]): string[] {
  const preferred = knownTypes.flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t]));
  const first = HOST_KEY_ALGORITHMS.filter((a) => preferred.includes(a));
  return [...first, ...HOST_KEY_ALGORITHMS.filter((a) => !first.includes(a))];
}

/** A handshake deadline that stops while we wait for the user (host key modal, passphrase). */
class HandshakeDeadline {
  private handle: unknown;
  private remaining: number;
  private startedAt = 0;
  private done = false;

  constructor(
    ms: number,
    private readonly onExpire: () => void,
    private readonly timers: Timers,
  ) {
    this.remaining = ms;
    this.resume();
  }

  pause(): void {
    if (this.done || this.handle === undefined) return;
    this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.remaining -= Date.now() - this.startedAt;
  }

  resume(): void {
    if (this.done || this.handle !== undefined) return;
    this.startedAt = Date.now();
    this.handle = this.timers.setTimeout(
      () => {
        this.done = true;
        this.onExpire();
      },
      Math.max(0, this.remaining),
    );
  }

  clear(): void {
    this.done = true;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
  }
}

function noop(): void {}

type AuthStep =
  | { readonly kind: 'key'; readonly path: string; readonly configured: boolean }
  | { readonly kind: 'agent' };

export class SshTransport implements Transport {
  readonly description: string;
  private _state: ConnectionState = { kind: 'idle' };
  private readonly listeners = new Set<(state: ConnectionState) => void>();
  private readonly timers: Timers;
  private readonly log: (message: string) => void;
  /** The established chain: jump clients first, the GPU host last. Empty when not connected. */
  private chain: Client[] = [];
  /** Clients of an attempt in progress (so dispose can end them). */
  private readonly dialing = new Set<Client>();
  private readonly channels = new Set<ClientChannel>();
  /** Killable commands still running (see startRemote). */
  private readonly runs = new Set<RemoteRun>();
  private attempt?: Promise<void>;
  private attempts = 0;
  private retryHandle: unknown;
  private failuresSinceConnected = 0;
  private everConnected = false;
  private disposed = false;
  private _handshakes = 0;
  /** Passphrases by key path, for this transport's life only. */
  private readonly passphrases = new Map<string, string>();
  /** ProxyCommand processes alive (killed with their connection, or on dispose). */
  private readonly proxies = new Set<ProxyProcess>();

  constructor(private readonly options: SshTransportOptions) {
    const t = options.target;
    const first = t.jumps[0] ?? t;
    const via =
      (t.jumps.length > 0 ? ` via ${t.jumps.map((j) => j.hostName).join(',')}` : '') +
      (first.proxyCommand !== undefined ? ' (ProxyCommand)' : '');
    this.description = `${t.username}@${t.hostName}${t.port === 22 ? '' : `:${t.port}`}${via}`;
    this.timers = options.timers ?? realTimers;
    this.log = options.log ?? noop;
  }

  get state(): ConnectionState {
    return this._state;
  }

  get handshakes(): number {
    return this._handshakes;
  }

  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  connect(): Promise<void> {
    if (this.disposed)
      return Promise.reject(new TransportError('closed', `Connection to ${this.description} was disposed`));
    if (this.chain.length > 0) return Promise.resolve();
    if (this.attempt) return this.attempt;
    this.cancelRetry();
    return this.startAttempt();
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const client = await this.readyClient();
    const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const killable = options.timeoutMs !== undefined || options.signal !== undefined;
    const run = await this.startRemote(client, command, killable ? 'killable' : 'plain');
    return new Promise<ExecResult>((resolve, reject) => {
      const stdout = new CappedBuffer(maxBytes);
      const stderr = new CappedBuffer(maxBytes);
      let exit: { code: number | null; signal?: string } | undefined;
      let settled = false;
      let timer: unknown;
      const cleanup = () => {
        if (timer !== undefined) this.timers.clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      };
      // Reject at once: a wedged channel must not hold the caller past its deadline.
      const stop = (err: Error) => {
        if (settled) return;
        settled = true;
        cleanup();
        void run.stop('KILL');
        reject(err);
      };
      const onAbort = () => stop(Object.assign(new Error('Remote command aborted'), { name: 'AbortError' }));
      if (options.timeoutMs !== undefined) {
        const ms = options.timeoutMs;
        timer = this.timers.setTimeout(
          () =>
            stop(
              new TransportError('command-timeout', `Remote command timed out after ${Math.round(ms / 100) / 10} s`),
            ),
          ms,
        );
      }
      if (options.signal) {
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }
      run.onStdout((d) => stdout.push(d));
      run.channel.stderr.on('data', (d: Buffer) => stderr.push(d));
      run.channel.on('exit', (code: number | null, signal?: string) => {
        exit = { code: typeof code === 'number' ? code : null, signal: signal ?? undefined };
      });
      // The text, then EOF on the command's stdin; without the option the channel's stdin stays
      // open as before (a command that reads it waits, as under `ssh host cmd`).
      if (options.stdin !== undefined && !settled) run.channel.end(options.stdin);
      // ssh2 also hands the exit status to 'close': a status read with the channel's opening
      // (before the 'exit' listener above existed) is not lost.
      run.channel.on('close', (code?: number | null, signal?: string) => {
        if (!exit && code !== undefined)
          exit = { code: typeof code === 'number' ? code : null, signal: signal ?? undefined };
        if (settled) return;
        settled = true;
        cleanup();
        if (!exit && this.chain[this.chain.length - 1] !== client) {
          return reject(new TransportError('closed', `Connection to ${this.description} was lost while a command ran`));
        }
        resolve({
          ...finishOutput(stdout, stderr),
          code: exit?.code ?? null,
          ...(exit?.signal ? { signal: exit.signal } : {}),
        });
      });
    });
  }

  async stream(
    command: string,
    onLine: (line: string) => void,
    onStderr?: (line: string) => void,
  ): Promise<RemoteProcess> {
    const client = await this.readyClient();
    const run = await this.startRemote(client, command, 'ends with stdin');
    const out = new LineSplitter(onLine);
    const err = new LineSplitter(onStderr ?? noop);
    let code: number | null = null;
    let killed = false;
    run.onStdout((d) => out.push(d));
    run.channel.stderr.on('data', (d: Buffer) => err.push(d));
    run.channel.on('exit', (c: number | null) => {
      code = typeof c === 'number' && !killed ? c : null;
    });
    const exited = new Promise<number | null>((resolve) => {
      run.channel.on('close', (c?: number | null) => {
        if (code === null && typeof c === 'number' && !killed) code = c;
        out.end();
        err.end();
        resolve(killed ? null : code);
      });
    });
    return {
      exited,
      kill: () => {
        if (killed) return;
        killed = true;
        void run.stop('TERM');
      },
    };
  }

  openStream = async (host: string, port: number): Promise<NodeJS.ReadWriteStream & Duplex> => {
    const client = await this.readyClient();
    return new Promise((resolve, reject) => {
      try {
        client.forwardOut('127.0.0.1', 0, host, port, (err, channel) => {
          if (err) return reject(channelOpenError(err, host, port));
          this.channels.add(channel);
          channel.once('close', () => this.channels.delete(channel));
          resolve(channel);
        });
      } catch (err) {
        reject(new TransportError('closed', `Connection to ${this.description} is down: ${(err as Error).message}`));
      }
    });
  };

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.cancelRetry();
    const target = this.chain[this.chain.length - 1];
    const runs = [...this.runs];
    this.runs.clear();
    // Before the chain is forgotten: stop() sends its kill over the live connection.
    const stops = target ? runs.map((r) => r.stop('TERM')) : [];
    const runChannels = new Set(runs.map((r) => r.channel));
    for (const ch of this.channels) if (!runChannels.has(ch)) ch.close();
    this.channels.clear();
    const clients = [...this.chain, ...this.dialing].reverse();
    this.chain = [];
    this.dialing.clear();
    const proxies = [...this.proxies];
    this.proxies.clear();
    const endAll = () => {
      clients.forEach(endClient);
      proxies.forEach((p) => p.kill());
    };
    if (stops.length > 0) {
      // Closing a channel does not stop a command that never writes (sshd has no pty to hang
      // up), so end the process groups we started before hanging up; at most a second.
      const grace = setTimeout(endAll, 1000);
      grace.unref();
      void Promise.all(stops).then(() => {
        clearTimeout(grace);
        endAll();
      });
    } else {
      endAll();
    }
    this.passphrases.clear();
    this.setState({ kind: 'closed' });
    this.listeners.clear();
  }

  // ---- connection life ----

  private setState(state: ConnectionState): void {
    this._state = state;
    for (const l of [...this.listeners]) {
      try {
        l(state);
      } catch {
        // a listener's bug must not break the transport
      }
    }
  }

  private cancelRetry(): void {
    if (this.retryHandle !== undefined) this.timers.clearTimeout(this.retryHandle);
    this.retryHandle = undefined;
  }

  /** The GPU host's client, connecting first if we never connected; fails fast while down. */
  private async readyClient(): Promise<Client> {
    if (this.disposed) throw new TransportError('closed', `Connection to ${this.description} was disposed`);
    if (this.chain.length === 0) {
      if (this.everConnected || this._state.kind === 'down') {
        const s = this._state;
        const detail =
          s.kind === 'down'
            ? `: ${s.error}${s.retryInMs !== undefined ? ` (retrying in ${Math.ceil(s.retryInMs / 1000)} s)` : ''}`
            : ' (reconnecting)';
        throw new TransportError('closed', `SSH connection to ${this.description} is down${detail}`);
      }
      await this.connect();
    }
    const client = this.chain[this.chain.length - 1];
    if (!client) throw new TransportError('closed', `SSH connection to ${this.description} is down`);
    return client;
  }

  private startAttempt(): Promise<void> {
    const n = ++this.attempts;
    this.setState({ kind: 'connecting', attempt: n });
    if (n === 1) this.logConfig();
    this.log(`Connecting to ${this.description} (attempt ${n})`);
    const p = this.dial().then(
      (chain) => {
        if (this.disposed) {
          chain.forEach(endClient);
          throw new TransportError('closed', `Connection to ${this.description} was disposed`);
        }
        this.chain = chain;
        this._handshakes++;
        this.everConnected = true;
        this.failuresSinceConnected = 0;
        for (const c of chain) this.watchForDrop(c, chain);
        this.log(`Connected to ${this.description}`);
        this.setState({ kind: 'connected' });
      },
      (err: unknown) => {
        const te = err instanceof TransportError ? err : new TransportError('other', String(err));
        this.log(`Connection to ${this.description} failed: ${te.message}`);
        if (!this.disposed) {
          if (this.everConnected && !isFatal(te)) this.scheduleRetry(te.message, te.kind);
          else this.setState({ kind: 'down', error: te.message, errorKind: te.kind });
        }
        throw te;
      },
    );
    this.attempt = p.finally(() => {
      if (this.attempt === tracked) this.attempt = undefined;
    });
    const tracked = this.attempt;
    return tracked;
  }

  /** What ~/.ssh/config decided for each hop, and what it asked that is not applied: said once. */
  private logConfig(): void {
    const t = this.options.target;
    for (const ep of [...t.jumps, t]) {
      const name = ep.alias === ep.hostName ? ep.alias : `${ep.alias} (${ep.hostName})`;
      if (ep.proxyCommand !== undefined) this.log(`${name}: ProxyCommand ${ep.proxyCommand}`);
      if (ep.knownHostsFiles) this.log(`${name}: known hosts from UserKnownHostsFile ${ep.knownHostsFiles.join(' ')}`);
      if (ep.identitiesOnly) this.log(`${name}: IdentitiesOnly yes (only ${ep.identityFiles.join(', ')})`);
      if (ep.configNotes && ep.configNotes.length > 0) {
        this.log(`${name}: ~/.ssh/config directives not applied: ${ep.configNotes.join('; ')}`);
      }
    }
  }

  private scheduleRetry(reason: string, errorKind?: TransportErrorKind): void {
    const delay = backoffDelay(
      this.failuresSinceConnected++,
      this.options.backoffInitialMs ?? 1000,
      this.options.backoffMaxMs ?? 30_000,
    );
    this.setState({ kind: 'down', error: reason, retryInMs: delay, ...(errorKind ? { errorKind } : {}) });
    this.cancelRetry();
    this.retryHandle = this.timers.setTimeout(() => {
      this.retryHandle = undefined;
      if (this.disposed || this.attempt || this.chain.length > 0) return;
      this.startAttempt().catch(noop);
    }, delay);
  }

  private watchForDrop(client: Client, chain: Client[]): void {
    let reason: string | undefined;
    const onDrop = () => {
      if (this.chain !== chain) return; // already handled, or disposed
      this.chain = [];
      chain.forEach(endClient);
      const why = reason ?? 'the server closed the connection';
      this.log(`Connection to ${this.description} lost: ${why}`);
      if (!this.disposed) this.scheduleRetry(`Connection lost: ${why}`);
    };
    client.on('error', (err: Error & { level?: string }) => {
      reason = err.level === 'client-timeout' ? 'keepalive timeout' : err.message;
      onDrop();
    });
    client.on('end', onDrop);
    client.on('close', onDrop);
  }

  private async dial(): Promise<Client[]> {
    const { target } = this.options;
    const hops: SshEndpoint[] = [...target.jumps, target];
    const clients: Client[] = [];
    let proxy: ProxyProcess | undefined;
    try {
      let sock: Duplex | undefined;
      for (let i = 0; i < hops.length; i++) {
        let via = i > 0 ? `via ${hops[i - 1].hostName}` : undefined;
        if (i === 0 && hops[0].proxyCommand !== undefined) {
          proxy = this.startProxy(hops[0], hops[0].proxyCommand);
          sock = proxy.sock;
          via = 'via ProxyCommand';
        }
        const client = await this.handshake(hops[i], sock, via, i === 0 ? proxy : undefined);
        clients.push(client);
        if (i === 0 && proxy) {
          const p = proxy;
          client.once('close', () => {
            p.kill();
            this.proxies.delete(p);
          });
        }
        if (i + 1 < hops.length) sock = await this.forwardToHop(client, hops[i], hops[i + 1]);
      }
      return clients;
    } catch (err) {
      clients.reverse().forEach(endClient);
      if (proxy) {
        proxy.kill();
        this.proxies.delete(proxy);
      }
      throw err;
    } finally {
      for (const c of clients) this.dialing.delete(c);
    }
  }

  private startProxy(ep: SshEndpoint, command: string): ProxyProcess {
    const proxy = spawnProxyCommand(command, {
      ...(this.options.platform ? { platform: this.options.platform } : {}),
      log: (line) => this.log(`ProxyCommand (${ep.alias}): ${line}`),
    });
    this.proxies.add(proxy);
    void proxy.exited.then(() => this.proxies.delete(proxy));
    return proxy;
  }

  private forwardToHop(client: Client, from: SshEndpoint, to: SshEndpoint): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      client.forwardOut('127.0.0.1', 0, to.hostName, to.port, (err, channel) => {
        if (!err) return resolve(channel);
        const e = channelOpenError(err, to.hostName, to.port);
        const kind = e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ENOTFOUND' ? 'dns' : 'other';
        reject(
          new TransportError(
            kind,
            `Jump host ${from.hostName} could not reach ${to.hostName}:${to.port}: ${(err as Error).message}`,
          ),
        );
      });
    });
  }

  /** The known-hosts files of a hop: its UserKnownHostsFile, else kimi.knownHostsFile. The first is written. */
  private knownHostsFiles(ep: SshEndpoint): readonly string[] {
    return ep.knownHostsFiles && ep.knownHostsFiles.length > 0 ? ep.knownHostsFiles : [this.options.knownHostsFile];
  }

  private readKnownHosts(ep: SshEndpoint): Promise<KnownHostsText[]> {
    return Promise.all(this.knownHostsFiles(ep).map(async (file) => ({ file, text: await readKnownHostsFile(file) })));
  }

  private handshake(
    ep: SshEndpoint,
    sock: Duplex | undefined,
    via: string | undefined,
    proxy?: ProxyProcess,
  ): Promise<Client> {
    return new Promise<Client>((resolve, reject) => {
      const client = new Client();
      this.dialing.add(client);
      // ssh2 may emit errors after we stop caring (end/destroy); never let them go unhandled.
      client.on('error', noop);
      const authTried: string[] = [];
      let hostKeyError: TransportError | undefined;
      let settled = false;
      const failNow = (err: unknown) => {
        if (settled) return;
        settled = true;
        deadline.clear();
        endClient(client);
        auth.finish();
        const message = (err as { message?: unknown } | undefined)?.message;
        if (!hostKeyError && typeof message === 'string' && /too many authentication failures/i.test(message)) {
          // sshd's MaxAuthTries: usually an agent offering many keys before the right one.
          return reject(
            new TransportError(
              'auth',
              `Authentication failed for ${ep.username}@${ep.hostName}:${ep.port}${via ? ` (${via})` : ''}: the server closed the ` +
                `connection after too many keys (Too many authentication failures); tried: ${authTried.join(', ')}. ` +
                'With an agent that holds many keys, set "IdentitiesOnly yes" and this host\'s IdentityFile in ~/.ssh/config.',
            ),
          );
        }
        reject(
          hostKeyError ??
            classifySshError(err, { host: ep.hostName, port: ep.port, username: ep.username, authTried, via }),
        );
      };
      let waitedForProxy = false;
      const fail = (err: unknown) => {
        if (settled) return;
        // A connection that broke because the ProxyCommand died: say why it died (its exit
        // may be reported a moment after the broken pipe).
        const level = (err as { level?: unknown } | undefined)?.level;
        if (
          proxy &&
          !hostKeyError &&
          level !== 'client-authentication' &&
          !(err instanceof TransportError && err.kind !== 'closed')
        ) {
          if (!proxy.exit && !waitedForProxy) {
            waitedForProxy = true;
            const t = setTimeout(() => fail(err), 1000);
            t.unref();
            void proxy.exited.then(() => {
              clearTimeout(t);
              fail(err);
            });
            return;
          }
          if (proxy.exit) {
            const e = proxyExitError(ep.proxyCommand ?? '', proxy.exit);
            return failNow(new TransportError(e.kind, e.message));
          }
        }
        failNow(err);
      };
      const timeoutMs = ep.connectTimeoutMs ?? this.options.readyTimeoutMs ?? 15_000;
      const deadline = new HandshakeDeadline(
        timeoutMs,
        () =>
          failNow(
            new TransportError(
              'timeout',
              `Timed out after ${Math.round(timeoutMs / 1000)} s connecting to ${ep.hostName}:${ep.port}${via ? ` (${via})` : ''}` +
                (ep.connectTimeoutMs !== undefined ? ' (ConnectTimeout in ~/.ssh/config)' : ''),
            ),
          ),
        this.timers,
      );
      const auth = this.authHandler(ep, deadline, authTried);
      // The agent's own failures (not running, refused to sign) are not the connection's: the
      // next key is tried, and the error is listed with what was tried.
      const onError = (err: Error & { level?: string }) => {
        if (err.level === 'agent') {
          authTried.push(`ssh-agent: ${err.message}`);
          return;
        }
        fail(err);
      };
      client.on('ready', () => {
        if (settled) return;
        settled = true;
        deadline.clear();
        auth.finish();
        client.removeListener('error', onError);
        client.removeListener('close', onCloseEarly);
        resolve(client);
      });
      client.on('error', onError);
      const onCloseEarly = () =>
        fail(new TransportError('closed', `Connection to ${ep.hostName}:${ep.port} closed during the handshake`));
      client.on('close', onCloseEarly);
      if (proxy) void proxy.exited.then(() => fail(new TransportError('closed', 'ProxyCommand exited')));

      const verifyHostKey = (key: Buffer, verify: (ok: boolean) => void): void => {
        this.checkHostKey(ep, key, deadline).then(
          () => verify(!this.disposed && !settled),
          (err: unknown) => {
            hostKeyError = err instanceof TransportError ? err : new TransportError('host-key-rejected', String(err));
            verify(false);
          },
        );
      };

      const config: ConnectConfig = {
        host: ep.hostName,
        port: ep.port,
        username: ep.username,
        sock,
        readyTimeout: 0, // HandshakeDeadline replaces it: it pauses while the user decides
        keepaliveInterval: ep.serverAliveIntervalMs ?? this.options.keepaliveIntervalMs ?? 5000,
        keepaliveCountMax: ep.serverAliveCountMax ?? this.options.keepaliveCountMax ?? 3,
        hostVerifier: verifyHostKey,
        authHandler: auth.handler,
      };
      this.readKnownHosts(ep)
        .then((files) => {
          if (settled) return;
          const text = files.map((f) => f.text).join('\n');
          config.algorithms = {
            serverHostKey: orderHostKeyAlgorithms(knownKeyTypes(text, ep.hostName, ep.port)) as never,
          };
          client.connect(config);
        })
        .catch(fail);
    });
  }

  /** Checks the key against known_hosts and the policy; throws a TransportError to refuse. */
  private async checkHostKey(ep: SshEndpoint, key: Buffer, deadline: HandshakeDeadline): Promise<void> {
    const files = await this.readKnownHosts(ep);
    const file = files[0].file; // where a trusted key is written
    const name = hostLookupName(ep.hostName, ep.port);
    const keyType = keyTypeOfBlob(key);
    if (!keyType) throw new TransportError('host-key-rejected', `The host key offered by ${name} could not be parsed`);
    const fingerprint = fingerprintSha256(key);
    const result = checkHostKeyInFiles(files, ep.hostName, ep.port, keyType, key);
    switch (result.status) {
      case 'known':
        return;
      case 'revoked':
        throw new TransportError(
          'host-key-rejected',
          `The host key of ${name} (${keyType} ${fingerprint}) is marked @revoked in ${result.file} line ${result.line}; refusing to connect.`,
        );
      case 'changed':
        throw new TransportError(
          'host-key-changed',
          `HOST KEY CHANGED for ${name}: the server offered ${keyType} ${fingerprint}, but ${result.file} ` +
            `line ${result.lines.join(', ')} records ${result.knownFingerprints.join(', ')}. ` +
            'Someone could be intercepting the connection, or the host was reinstalled. If the change is expected, ' +
            `remove the old entry (ssh-keygen -R '${name}' -f '${result.file}') and connect again.`,
          { host: name, offered: fingerprint, known: result.knownFingerprints, file: result.file, lines: result.lines },
        );
      case 'unknown': {
        if (result.certAuthorities.length > 0) {
          // ssh2 negotiates no certificate host key algorithm and hands us the plain key only:
          // the CA cannot vouch for it here, and trusting it on first use would silently
          // replace the CA check the config asks for. Refuse, and say how to proceed.
          const where = result.certAuthorities.map((c) => `${c.file} line ${c.line}`).join(', ');
          throw new TransportError(
            'host-key-rejected',
            `${where} trusts a certificate authority (@cert-authority) for ${name}, but host certificates cannot be ` +
              `checked here (ssh2 only receives the plain host key), and the key the server offered (${keyType} ${fingerprint}) ` +
              `is not in the known-hosts file as a plain key; refusing to connect. If that fingerprint is right (on the host: ` +
              `ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), add the host's plain public key to ${file} as "${name} <key type> <base64>".`,
          );
        }
        deadline.pause();
        let decision: 'trust' | 'reject';
        try {
          decision = await this.options.decideUnknownHostKey({
            host: ep.hostName,
            port: ep.port,
            alias: ep.alias,
            keyType,
            fingerprint,
            otherKeyTypes: result.otherKeyTypes,
            knownHostsFile: file,
          });
        } finally {
          deadline.resume();
        }
        if (this.disposed) throw new TransportError('closed', `Connection to ${name} was disposed`);
        if (decision !== 'trust') {
          throw new TransportError(
            'host-key-unknown',
            `The host key of ${name} (${keyType} ${fingerprint}) is not in ${file} and was not trusted (kimi.hostKeyPolicy).`,
          );
        }
        const hash = ep.hashKnownHosts === true;
        await appendKnownHostsLine(file, formatKnownHostsLine(ep.hostName, ep.port, keyType, key, { hash }));
        this.log(
          `Added the ${keyType} host key of ${name} (${fingerprint}) to ${file}${hash ? ' (hashed: HashKnownHosts yes)' : ''}`,
        );
        return;
      }
    }
  }

  /** The agents to ask for this hop, in order. */
  private agentsFor(ep: SshEndpoint): AgentCandidate[] {
    const forced = this.options.agentSocket;
    if (forced !== undefined) return forced ? [{ kind: 'socket', path: forced, source: 'agentSocket option' }] : [];
    return agentCandidates({
      platform: this.options.platform ?? process.platform,
      env: this.options.env ?? process.env,
      identityAgent: ep.identityAgent,
    });
  }

  /**
   * OpenSSH's order: the agent's keys first (under IdentitiesOnly only those of the identity
   * files), then the identity files the agent did not already offer; a passphrase is asked only
   * when a file's key must be unlocked because the agent could not sign with it.
   */
  private authHandler(
    ep: SshEndpoint,
    deadline: HandshakeDeadline,
    tried: string[],
  ): { handler: AuthHandlerMiddleware; finish(): void } {
    const agents = this.agentsFor(ep);
    const steps: AuthStep[] = [
      ...(agents.length > 0 ? [{ kind: 'agent' as const }] : []),
      ...ep.identityFiles.map((p) => ({ kind: 'key' as const, path: p, configured: ep.identityFilesConfigured })),
    ];
    let agent: SelectedAgent | undefined;
    let lastOffered: { index: number; agent?: SelectedAgent } | undefined;
    /** The last method offered got no answer but a failure (or, at the end, none at all). */
    const settleLast = (rejected: boolean) => {
      if (lastOffered === undefined) return;
      const a = lastOffered.agent;
      const mark = rejected ? ' (rejected)' : '';
      tried[lastOffered.index] = a ? `${a.summary}${a.offered > 0 ? mark : ''}` : `${tried[lastOffered.index]}${mark}`;
      if (a) this.log(`${ep.alias}: agent: ${tried[lastOffered.index]}`);
      lastOffered = undefined;
    };

    // ssh2 passes null methods on the first call; `false` ends authentication (not in the typings).
    const handler = (
      methodsLeft: AuthenticationType[] | null,
      _partial: boolean | null,
      next: (m: AnyAuthMethod) => void,
    ): void => {
      settleLast(true);
      const allows = (m: AuthenticationType) => methodsLeft === null || methodsLeft.includes(m);
      const advance = async (): Promise<AnyAuthMethod | false> => {
        while (steps.length > 0) {
          const step = steps.shift()!;
          if (!allows('publickey')) continue;
          if (step.kind === 'agent') {
            const allowed = ep.identitiesOnly ? await configuredPublicKeys(ep.identityFiles) : undefined;
            agent = new SelectedAgent(agents, allowed ? { allowed } : {});
            tried.push(agent.summary);
            lastOffered = { index: tried.length - 1, agent };
            return { type: 'agent', username: ep.username, agent };
          }
          if (agent) {
            const pub = await readIdentityPublicKey(step.path);
            if (pub && agent.offeredKey(pub)) continue; // the agent offered this very key already
          }
          const key = await this.loadKey(step, deadline, tried);
          if (key === undefined) continue;
          tried.push(step.path);
          lastOffered = { index: tried.length - 1 };
          return { type: 'publickey', username: ep.username, key };
        }
        if (methodsLeft && !methodsLeft.includes('publickey'))
          tried.push(`(the server only allows: ${methodsLeft.join(', ')})`);
        return false;
      };
      const end = () => next(false as unknown as AnyAuthMethod);
      advance().then((m) => (m === false ? end() : next(m)), end);
    };
    return { handler, finish: () => settleLast(false) };
  }

  /** The parsed private key, or undefined to skip it (missing, cancelled, unreadable, public only). */
  private async loadKey(
    step: { path: string; configured: boolean },
    deadline: HandshakeDeadline,
    tried: string[],
  ): Promise<ParsedKey | undefined> {
    let data: Buffer;
    try {
      data = await fs.promises.readFile(step.path);
    } catch (err) {
      if (step.configured)
        tried.push(`${step.path} (${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : 'unreadable'})`);
      return undefined;
    }
    let parsed = ssh2Utils.parseKey(data, this.passphrases.get(step.path));
    if (!(parsed instanceof Error)) return privateOnly(parsed, step.path, tried);
    if (!/passphrase|encrypted/i.test(parsed.message)) {
      tried.push(`${step.path} (cannot parse: ${parsed.message})`);
      return undefined;
    }
    for (let i = 0; i < 3; i++) {
      deadline.pause();
      let passphrase: string | undefined;
      try {
        passphrase = await this.options.requestPassphrase(step.path, i > 0 || this.passphrases.has(step.path));
      } finally {
        deadline.resume();
      }
      if (passphrase === undefined) {
        tried.push(`${step.path} (no passphrase given)`);
        return undefined;
      }
      parsed = ssh2Utils.parseKey(data, passphrase);
      if (!(parsed instanceof Error)) {
        this.passphrases.set(step.path, passphrase);
        return privateOnly(parsed, step.path, tried);
      }
    }
    this.passphrases.delete(step.path);
    tried.push(`${step.path} (wrong passphrase)`);
    return undefined;
  }

  /**
   * Starts a command. When `killable`, it announces its process group first (see announcePid)
   * so `stop` can end it even where sshd ignores signal requests (root sessions). A command that
   * `ends with stdin` is stopped by EOF on its stdin, with no second command; the group kill is
   * only the fallback when it has not ended after STDIN_STOP_GRACE_MS.
   */
  private async startRemote(
    client: Client,
    command: string,
    kind: 'plain' | 'killable' | 'ends with stdin',
  ): Promise<RemoteRun> {
    const killable = kind !== 'plain';
    const wrapped =
      kind === 'plain' ? command : kind === 'killable' ? announcePid(command) : announcePidEndingWithStdin(command);
    const channel = await this.openExec(client, wrapped);
    let pgid: number | undefined;
    let onPgid: ((pgid: number) => void) | undefined;
    let closed = false;
    let stopping: Promise<void> | undefined;
    const early: Buffer[] = [];
    let sink: (d: Buffer) => void = (d) => early.push(d);
    const tap = new FirstLineTap(
      (line) => {
        const n = Number(line.trim());
        if (!Number.isInteger(n) || n <= 1) return;
        pgid = n;
        onPgid?.(n);
      },
      (d) => sink(d),
    );
    channel.on('data', (d: Buffer) => (killable ? tap.push(d) : sink(d)));

    const run: RemoteRun = {
      channel,
      onStdout: (fn) => {
        sink = fn;
        early.splice(0).forEach(fn);
      },
      stop: (signal) => {
        if (closed) return Promise.resolve();
        try {
          channel.signal(signal);
        } catch {
          // not open any more
        }
        if (!killable || this.chain[this.chain.length - 1] !== client) {
          channel.close();
          return Promise.resolve();
        }
        if (kind === 'ends with stdin') {
          stopping ??= new Promise<void>((resolve) => {
            let fallback: unknown;
            channel.once('close', () => {
              if (fallback !== undefined) this.timers.clearTimeout(fallback);
              resolve();
            });
            try {
              channel.end();
            } catch {
              // not open any more
            }
            fallback = this.timers.setTimeout(() => {
              if (pgid === undefined) channel.close();
              else void this.execQuietly(client, killGroupCommand(pgid, signal)).then(() => channel.close());
            }, STDIN_STOP_GRACE_MS);
          });
          return stopping;
        }
        stopping ??= new Promise<void>((resolve) => {
          const killAndClose = (group: number) => {
            onPgid = undefined;
            void this.execQuietly(client, killGroupCommand(group, signal)).then(() => {
              channel.close();
              resolve();
            });
          };
          // Stopped before the command announced itself: kill as soon as it does, or give up
          // waiting and just close the channel.
          let fallback: unknown;
          channel.once('close', () => {
            if (fallback !== undefined) this.timers.clearTimeout(fallback);
            resolve();
          });
          if (pgid !== undefined) killAndClose(pgid);
          else {
            onPgid = killAndClose;
            fallback = this.timers.setTimeout(() => channel.close(), 5000);
          }
        });
        return stopping;
      },
    };
    if (killable) this.runs.add(run);
    channel.on('close', () => {
      closed = true;
      this.runs.delete(run);
    });
    return run;
  }

  /** Runs a fire-and-forget helper command; resolves when it is over, never rejects. */
  private execQuietly(client: Client, command: string): Promise<void> {
    return new Promise((resolve) => {
      try {
        client.exec(command, (err, ch) => {
          if (err) return resolve();
          ch.on('data', noop).on('close', () => resolve());
          ch.stderr.on('data', noop);
        });
      } catch {
        resolve();
      }
    });
  }

  private openExec(client: Client, command: string): Promise<ClientChannel> {
    return new Promise((resolve, reject) => {
      try {
        client.exec(command, (err, channel) => {
          if (err)
            return reject(new TransportError('closed', `Cannot run a command on ${this.description}: ${err.message}`));
          this.channels.add(channel);
          channel.once('close', () => this.channels.delete(channel));
          resolve(channel);
        });
      } catch (err) {
        reject(
          new TransportError('closed', `SSH connection to ${this.description} is down: ${(err as Error).message}`),
        );
      }
    });
  }
}

interface RemoteRun {
  readonly channel: ClientChannel;
  /** Receives stdout (without the pid announcement); set once, before data flows. */
  onStdout(fn: (d: Buffer) => void): void;
  /** Ends the command (process group kill, then channel close); resolves once that is done. */
  stop(signal: 'TERM' | 'KILL'): Promise<void>;
}

/** A public key file (IdentityFile ~/.ssh/key.pub, as agent users write) selects agent keys but cannot sign. */
function privateOnly(key: ParsedKey, file: string, tried: string[]): ParsedKey | undefined {
  if (key.isPrivateKey()) return key;
  tried.push(`${file} (a public key: it only selects agent keys)`);
  return undefined;
}

async function configuredPublicKeys(files: readonly string[]): Promise<Buffer[]> {
  const keys = await Promise.all(files.map((f) => readIdentityPublicKey(f)));
  return keys.filter((k): k is Buffer => k !== undefined);
}

function endClient(client: Client): void {
  try {
    client.end();
  } catch {
    // already gone
  }
  try {
    client.destroy();
  } catch {
    // already gone
  }
}
