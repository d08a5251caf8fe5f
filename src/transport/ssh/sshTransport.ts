/**
 * One verified ssh2 connection to the GPU host (through ProxyJump hops or a ProxyCommand when
 * configured), reused for every command and tunnel, reconnected with backoff after a drop.
 * The hops (hops.ts), each hop's handshake (handshake.ts: host key in hostKey.ts, authentication
 * in sshAuth.ts) and the remote commands (remoteProcess.ts) have their own files.
 */
import type { Duplex } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { Emitter } from '../../util/emitter';
import { endClient } from './handshake';
import { dial } from './hops';
import type { ProxyProcess } from './proxyCommand';
import { execRemote, streamRemote, type RemoteContext, type RemoteRun } from './remoteProcess';
import { backoffDelay, channelOpenError, isFatal } from './sshErrors';
import { noop, realTimers, type DialContext, type SshTransportOptions, type Timers } from './sshOptions';
import {
  TransportError,
  type ConnectionState,
  type ExecOptions,
  type ExecResult,
  type RemoteProcess,
  type Transport,
  type TransportErrorKind,
} from '../transport';
import { ConnectionClosedError } from '../errors';

export class SshTransport implements Transport {
  readonly description: string;
  private _state: ConnectionState = { kind: 'idle' };
  // A listener's bug must not break the transport.
  private readonly stateChanged = new Emitter<ConnectionState>(noop);
  private readonly timers: Timers;
  private readonly log: (message: string) => void;
  /** The established chain: jump clients first, the GPU host last. Empty when not connected. */
  private chain: Client[] = [];
  /** Clients of an attempt in progress (so dispose can end them). */
  private readonly dialing = new Set<Client>();
  private readonly channels = new Set<ClientChannel>();
  /** Killable commands still running (remoteProcess.ts). */
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
  /** What a connection attempt (hops.ts) and the remote commands (remoteProcess.ts) share with the transport. */
  private readonly dialContext: DialContext;
  private readonly remote: RemoteContext;

  constructor(private readonly options: SshTransportOptions) {
    const t = options.target;
    const first = t.jumps[0] ?? t;
    const via =
      (t.jumps.length > 0 ? ` via ${t.jumps.map((j) => j.hostName).join(',')}` : '') +
      (first.proxyCommand !== undefined ? ' (ProxyCommand)' : '');
    this.description = `${t.username}@${t.hostName}${t.port === 22 ? '' : `:${t.port}`}${via}`;
    this.timers = options.timers ?? realTimers;
    this.log = options.log ?? noop;
    this.dialContext = {
      options,
      timers: this.timers,
      log: this.log,
      dialing: this.dialing,
      proxies: this.proxies,
      passphrases: this.passphrases,
      isDisposed: () => this.disposed,
    };
    this.remote = {
      description: this.description,
      timers: this.timers,
      channels: this.channels,
      runs: this.runs,
      currentClient: () => this.chain[this.chain.length - 1],
    };
  }

  get state(): ConnectionState {
    return this._state;
  }

  get handshakes(): number {
    return this._handshakes;
  }

  get openChannels(): number {
    return this.channels.size;
  }

  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void } {
    return this.stateChanged.on(listener);
  }

  connect(): Promise<void> {
    if (this.disposed)
      return Promise.reject(new ConnectionClosedError(`Connection to ${this.description} was disposed`));
    if (this.chain.length > 0) return Promise.resolve();
    if (this.attempt) return this.attempt;
    this.cancelRetry();
    return this.startAttempt();
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const client = await this.readyClient();
    return execRemote(this.remote, client, command, options);
  }

  async stream(
    command: string,
    onLine: (line: string) => void,
    onStderr?: (line: string) => void,
  ): Promise<RemoteProcess> {
    const client = await this.readyClient();
    return streamRemote(this.remote, client, command, onLine, onStderr);
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
        reject(new ConnectionClosedError(`Connection to ${this.description} is down: ${(err as Error).message}`));
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
    this.stateChanged.dispose();
  }

  // ---- connection life ----

  private setState(state: ConnectionState): void {
    this._state = state;
    this.stateChanged.fire(state);
  }

  private cancelRetry(): void {
    if (this.retryHandle !== undefined) this.timers.clearTimeout(this.retryHandle);
    this.retryHandle = undefined;
  }

  /** The GPU host's client, connecting first if we never connected; fails fast while down. */
  private async readyClient(): Promise<Client> {
    if (this.disposed) throw new ConnectionClosedError(`Connection to ${this.description} was disposed`);
    if (this.chain.length === 0) {
      if (this.everConnected || this._state.kind === 'down') {
        const s = this._state;
        const detail =
          s.kind === 'down'
            ? `: ${s.error}${s.retryInMs !== undefined ? ` (retrying in ${Math.ceil(s.retryInMs / 1000)} s)` : ''}`
            : ' (reconnecting)';
        throw new ConnectionClosedError(`SSH connection to ${this.description} is down${detail}`);
      }
      await this.connect();
    }
    const client = this.chain[this.chain.length - 1];
    if (!client) throw new ConnectionClosedError(`SSH connection to ${this.description} is down`);
    return client;
  }

  private startAttempt(): Promise<void> {
    const n = ++this.attempts;
    this.setState({ kind: 'connecting', attempt: n });
    if (n === 1) this.logConfig();
    this.log(`Connecting to ${this.description} (attempt ${n})`);
    const p = dial(this.dialContext).then(
      (chain) => {
        if (this.disposed) {
          chain.forEach(endClient);
          throw new ConnectionClosedError(`Connection to ${this.description} was disposed`);
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
}
