/**
 * One verified ssh2 connection to the GPU host (through ProxyJump hops or a ProxyCommand when
 * configured), reused for every command and tunnel, reconnected with backoff after a drop.
 * The hops (hops.ts), each hop's handshake (handshake.ts: host key in hostKey.ts, authentication
 * in sshAuth.ts) and the remote commands (remoteProcess.ts) have their own files.
 */
import type { Duplex } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { endClient } from './handshake';
import { dial } from './hops';
import type { ProxyProcess } from './proxyCommand';
import { execRemote, streamRemote, type RemoteContext, type RemoteRun } from './remoteProcess';
import { channelOpenError } from './sshErrors';
import { noop, realTimers, type DialContext, type SshTransportOptions, type Timers } from './sshOptions';
import type { ConnectionState, ExecOptions, ExecResult, RemoteProcess, Transport } from '../transport';
import { ConnectionClosedError } from '../errors';
import { ConnectionLife, endAfterStops } from '../connectionLife';
import type { ClientChoice } from '../openssh/chooseClient';
import { connectionDown, linkDown, serverClosedConnection } from '../../present/words/sshWords';
import { hopIdentitiesOnly, hopKnownHosts, hopNotApplied, hopProxyCommand } from '../../present/words/connectionWords';

export class SshTransport implements Transport {
  readonly description: string;
  private readonly timers: Timers;
  private readonly log: (message: string) => void;
  /** State, retries and fail-fast; its link is the established chain: jump clients first, the GPU host last. */
  private readonly life: ConnectionLife<Client[]>;
  /** Clients of an attempt in progress (so dispose can end them). */
  private readonly dialing = new Set<Client>();
  private readonly channels = new Set<ClientChannel>();
  /** Killable commands still running (remoteProcess.ts). */
  private readonly runs = new Set<RemoteRun>();
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
    this.life = new ConnectionLife<Client[]>({
      description: this.description,
      timers: this.timers,
      log: this.log,
      ...(options.backoffInitialMs !== undefined ? { backoffInitialMs: options.backoffInitialMs } : {}),
      ...(options.backoffMaxMs !== undefined ? { backoffMaxMs: options.backoffMaxMs } : {}),
      dial: () => dial(this.dialContext),
      beforeFirstAttempt: () => this.logConfig(),
      onConnected: (chain) => {
        for (const c of chain) this.watchForDrop(c, chain);
      },
      discard: (chain) => chain.forEach(endClient),
    });
    this.dialContext = {
      options,
      timers: this.timers,
      log: this.log,
      dialing: this.dialing,
      proxies: this.proxies,
      passphrases: this.passphrases,
      isDisposed: () => this.life.disposed,
    };
    this.remote = {
      description: this.description,
      timers: this.timers,
      channels: this.channels,
      runs: this.runs,
      currentClient: () => this.life.current?.at(-1),
    };
  }

  /** Which client was chosen and why (chooseClient.ts), for the tooltip. */
  get client(): ClientChoice | undefined {
    return this.options.choice;
  }

  get state(): ConnectionState {
    return this.life.state;
  }

  get handshakes(): number {
    return this.life.handshakes;
  }

  get openChannels(): number {
    return this.channels.size;
  }

  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void } {
    return this.life.onStateChange(listener);
  }

  connect(): Promise<void> {
    return this.life.connect();
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
        reject(new ConnectionClosedError(linkDown(this.description, (err as Error).message)));
      }
    });
  };

  dispose(): void {
    this.life.dispose((chain = []) => {
      const target = chain[chain.length - 1];
      const runs = [...this.runs];
      this.runs.clear();
      // Before the chain is forgotten: stop() sends its kill over the live connection.
      const stops = target ? runs.map((r) => r.stop('TERM')) : [];
      const runChannels = new Set(runs.map((r) => r.channel));
      for (const ch of this.channels) if (!runChannels.has(ch)) ch.close();
      this.channels.clear();
      const clients = [...chain, ...this.dialing].reverse();
      this.dialing.clear();
      const proxies = [...this.proxies];
      this.proxies.clear();
      const endAll = () => {
        clients.forEach(endClient);
        proxies.forEach((p) => p.kill());
      };
      // Closing a channel does not stop a command that never writes (sshd has no pty to hang
      // up), so end the process groups we started before hanging up.
      endAfterStops(stops, endAll);
      this.passphrases.clear();
    });
  }

  /** The GPU host's client, connecting first if we never connected; fails fast while down. */
  private async readyClient(): Promise<Client> {
    const chain = await this.life.ready();
    const client = chain[chain.length - 1];
    if (!client) throw new ConnectionClosedError(connectionDown(this.description));
    return client;
  }

  /** What ~/.ssh/config decided for each hop, and what it asked that is not applied: said once. */
  private logConfig(): void {
    const t = this.options.target;
    for (const ep of [...t.jumps, t]) {
      const name = ep.alias === ep.hostName ? ep.alias : `${ep.alias} (${ep.hostName})`;
      if (ep.proxyCommand !== undefined) this.log(hopProxyCommand(name, ep.proxyCommand));
      if (ep.knownHostsFiles) this.log(hopKnownHosts(name, ep.knownHostsFiles));
      if (ep.identitiesOnly) this.log(hopIdentitiesOnly(name, ep.identityFiles));
      if (ep.configNotes && ep.configNotes.length > 0) {
        this.log(hopNotApplied(name, ep.configNotes));
      }
    }
  }

  private watchForDrop(client: Client, chain: Client[]): void {
    let reason: string | undefined;
    const onDrop = () => {
      // False when already handled, or disposed.
      if (this.life.lost(chain, reason ?? serverClosedConnection())) chain.forEach(endClient);
    };
    client.on('error', (err: Error & { level?: string }) => {
      reason = err.level === 'client-timeout' ? 'keepalive timeout' : err.message;
      onDrop();
    });
    client.on('end', onDrop);
    client.on('close', onDrop);
  }
}
