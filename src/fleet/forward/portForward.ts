/**
 * A server on localhost: 127.0.0.1:PORT on this machine, each connection carried to the
 * server's url through the session's verified SSH connection (a direct-tcpip channel, ssh2's
 * forwardOut), so local tools can use the model. Knows nothing of VS Code: every front opens
 * and closes forwards through the fleet's verbs.
 *
 * Each new local connection asks for the connection anew (`connect`): after a drop it goes
 * through the reconnected SSH connection (or through the new session when the settings
 * changed). Connections in flight when SSH drops lose their channel and are closed.
 */
import { promises as dns } from 'node:dns';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import type { ServerProfile } from '../../config/config';
import { hasNodePlaceholder } from '../../config/nodeUrl';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { ChannelLimitedTransport } from '../../transport/channelLimit';
import type { StreamOpener, Transport } from '../../transport/transport';
import { isForwardingProhibited } from '../../transport/curlFetch';
import { Emitter } from '../../util/emitter';
import { errorText } from '../../util/errors';
import {
  bindFailure,
  ForwardError,
  forwardInfo,
  forwardTarget,
  gatewayErrorResponse,
  isLoopback,
  localPortCandidates,
  portNote,
  selfForwardError,
  localServerError,
  openedLine,
  prohibitedError,
  type ForwardInfo,
  type ForwardTarget,
} from './forwardPlan';
import { FleetError } from '../fleetError';
import { forwardClosed, forwardedConnectionFailed, forwardOpensAnyway } from '../../present/words/fleetWords';
import * as words from '../../present/words/forwardWords';

/** More local connections than this at once are refused (a runaway client must not open channels without end). */
export const MAX_FORWARDED_CONNECTIONS = 64;

/** How long a client that got the 502 answer may keep its side open. */
const GATEWAY_ERROR_LINGER_MS = 10_000;

/** A log line about `server` (the name is a field, not read back from the line). */
type Log = (level: LogLevel, message: string, server: string) => void;

/**
 * The opener of forwarded streams of a session. Outside the channel cap of the watch: sshd's
 * MaxSessions counts sessions (exec), not direct-tcpip channels, and a client's long streamed
 * completion must not starve the watch's own probes.
 */
export function forwardOpener(session: { readonly transport: Transport }): StreamOpener {
  const transport = session.transport;
  if (transport instanceof ChannelLimitedTransport) return transport.openUncappedStream;
  // A transport that wraps a capped one (the broker's, src/broker/brokeredTransport.ts) says so.
  return (transport as { readonly openUncappedStream?: StreamOpener }).openUncappedStream ?? transport.openStream;
}

export interface PortForwardOptions {
  readonly server: ServerProfile;
  /** A port asked for (that one or an error); else the server's port when free, else any free one. */
  readonly localPort?: number;
  /** The stream opener of the server's connection as it is now, connecting first when it is down. */
  readonly connect: () => Promise<StreamOpener>;
  readonly log: Log;
}

export class PortForward {
  private readonly sockets = new Set<net.Socket>();
  private readonly closedEvent = new Emitter<void>();
  private closing: Promise<void> | undefined;
  private prohibitedSaid = false;

  private constructor(
    private readonly listener: net.Server,
    private readonly target: ForwardTarget,
    readonly info: ForwardInfo,
    private readonly options: PortForwardOptions,
  ) {
    listener.on('connection', (socket) => this.carry(socket));
  }

  /**
   * Opens the forward: checks first that the SSH server lets a channel reach the target (a
   * clear refusal when it forbids forwarding), then listens on 127.0.0.1 only.
   */
  static async open(options: PortForwardOptions): Promise<PortForward> {
    const { server, log } = options;
    if (server.host === undefined) throw localServerError(server);
    // The forward is opened once; a url that moves with a job's node has no fixed place to open it to.
    if (hasNodePlaceholder(server.url)) throw new ForwardError('node', words.followsSlurmNode(server.name, server.url));
    const target = forwardTarget(server);
    const opener = await options.connect();
    try {
      const probe = (await opener(target.host, target.port)) as unknown as Duplex;
      probe.destroy();
    } catch (error) {
      if (isForwardingProhibited(error)) throw prohibitedError(server);
      if ((error as NodeJS.ErrnoException).code !== 'ECONNREFUSED') throw error;
      // Forwarding works; the server is just not listening (restarting, stopped): open anyway.
      log('warn', forwardOpensAnyway(server.name, target.host, target.port, errorText(error)), server.name);
    }
    const thisMachine = await isThisMachine(server.host);
    const selfForward = selfForwardError(target, options.localPort, thisMachine);
    if (selfForward) throw selfForward;
    const listener = await listen(localPortCandidates(target.port, options.localPort, thisMachine));
    const port = (listener.address() as net.AddressInfo).port;
    const note = options.localPort === undefined ? portNote(target, port, thisMachine) : undefined;
    const forward = new PortForward(listener, target, forwardInfo(server.name, target, port, note), options);
    log('info', `[${server.name}] ${openedLine(forward.info)}`, server.name);
    return forward;
  }

  get server(): ServerProfile {
    return this.options.server;
  }

  /** Local connections being carried now. */
  get connections(): number {
    return this.sockets.size;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  onClosed(listener: () => void): { dispose(): void } {
    return this.closedEvent.on(listener);
  }

  /** Stops listening and ends every carried connection; resolves once the port is free again. */
  close(reason = 'closed'): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.listener.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
      this.options.log(
        'info',
        forwardClosed(this.options.server.name, this.info.localPort, reason),
        this.options.server.name,
      );
      this.closedEvent.fire();
      this.closedEvent.dispose();
    });
    return this.closing;
  }

  private carry(socket: net.Socket): void {
    if (this.closing) return void socket.destroy();
    this.sockets.add(socket);
    let channel: Duplex | undefined;
    const end = () => {
      this.sockets.delete(socket);
      socket.destroy();
      channel?.destroy();
    };
    socket.once('close', end);
    socket.on('error', () => end());
    void this.openChannel().then(
      (opened) => {
        if (socket.destroyed || this.closing) return void opened.destroy();
        channel = opened;
        // Closed after its end (the server finished): pipe() has ended the socket, which closes
        // once its last bytes are written. Closed without an end (SSH dropped): cut it now.
        opened.once('close', () => {
          if (!opened.readableEnded) end();
        });
        opened.on('error', () => end());
        // pipe() ends the other side on end (a half-close each way) and keeps the flow bounded.
        socket.pipe(opened);
        opened.pipe(socket);
      },
      (error: unknown) => {
        if (socket.destroyed) return;
        socket.on('data', () => undefined);
        // Half-open sockets wait for the client's end: one that never sends it is let go.
        socket.setTimeout(GATEWAY_ERROR_LINGER_MS, () => socket.destroy());
        socket.end(gatewayErrorResponse(this.describeFailure(error)));
      },
    );
  }

  private async openChannel(): Promise<Duplex> {
    const opener = await this.options.connect();
    return (await opener(this.target.host, this.target.port)) as unknown as Duplex;
  }

  private describeFailure(error: unknown): string {
    const { server, log } = this.options;
    if (isForwardingProhibited(error)) {
      const message = prohibitedError(server).message;
      if (!this.prohibitedSaid) log('error', `[${server.name}] ${message}`, server.name);
      this.prohibitedSaid = true;
      return message;
    }
    const message = words.couldNotReach(this.info.remote, server.name, errorText(error));
    log('warn', forwardedConnectionFailed(server.name, message), server.name);
    return message;
  }
}

/** The SSH host is this machine (a loopback name or address, or a name that resolves to one). */
async function isThisMachine(host: string): Promise<boolean> {
  if (isLoopback(host)) return true;
  try {
    const addresses = await dns.lookup(host, { all: true });
    return addresses.length > 0 && addresses.every((a) => isLoopback(a.address));
  } catch {
    return false; // a ~/.ssh/config alias, or no DNS: not known to be this machine
  }
}

/** Listens on 127.0.0.1 on the first candidate that binds; the last failure is thrown. */
async function listen(candidates: readonly number[]): Promise<net.Server> {
  let failure: ForwardError | undefined;
  for (const port of candidates) {
    // Half-open: a client that ends its side after the request must still receive the answer.
    const server = net.createServer({ allowHalfOpen: true });
    server.maxConnections = MAX_FORWARDED_CONNECTIONS;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return server;
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      failure = bindFailure(port, e.code, e.message);
    }
  }
  throw failure ?? new ForwardError('bind', words.noLocalPort());
}

/** The forwards of a fleet: at most one per server. */
export class PortForwards {
  private readonly forwards = new Map<string, PortForward>();
  private readonly opening = new Map<string, Promise<PortForward>>();
  private disposed = false;

  constructor(
    private readonly deps: {
      /** The server's session (a multi-node server's is rank 0's connection, which serves its url). */
      readonly connect: (server: ServerProfile) => Promise<{ readonly transport: Transport }>;
      readonly log: Log;
      /** The forward of a server opened (info) or closed (undefined). */
      readonly onChange: (server: ServerProfile, info: ForwardInfo | undefined) => void;
    },
  ) {}

  /** The server's forward, opened now or already open (`already`). A port asked for must match an open one. */
  async open(server: ServerProfile, localPort?: number): Promise<{ info: ForwardInfo; already: boolean }> {
    const existing = this.forwards.get(server.name) ?? (await this.opening.get(server.name)?.catch(() => undefined));
    if (existing && !existing.closed) {
      if (localPort !== undefined && localPort !== existing.info.localPort) {
        throw new ForwardError('port-in-use', words.alreadyForwarded(server.name, existing.info.localPort));
      }
      return { info: existing.info, already: true };
    }
    const opening = PortForward.open({
      server,
      ...(localPort !== undefined ? { localPort } : {}),
      connect: async () => forwardOpener(await this.deps.connect(server)),
      log: this.deps.log,
    });
    this.opening.set(server.name, opening);
    let forward: PortForward;
    try {
      forward = await opening;
    } finally {
      this.opening.delete(server.name);
    }
    if (this.disposed) {
      await forward.close(words.fleetClosed());
      throw new FleetError('closed', words.fleetClosed());
    }
    this.forwards.set(server.name, forward);
    forward.onClosed(() => {
      if (this.forwards.get(server.name) !== forward) return;
      this.forwards.delete(server.name);
      this.deps.onChange(server, undefined);
    });
    this.deps.onChange(server, forward.info);
    return { info: forward.info, already: false };
  }

  /**
   * New settings: a forward whose server is gone, or now names another host or url, is closed
   * (it would lead somewhere the user no longer configured); the others go on, and their next
   * connections use the new session.
   */
  reconfigure(servers: readonly ServerProfile[]): void {
    for (const [name, forward] of this.forwards) {
      const now = servers.find((s) => s.name === name);
      const was = forward.server;
      if (now && now.host === was.host && now.url === was.url) continue;
      void forward.close(now ? words.hostOrUrlChanged() : words.serverRemoved());
    }
  }

  /** Closes the server's forward; false when there was none. */
  async close(serverName: string, reason = words.closedOnRequest()): Promise<boolean> {
    const forward = this.forwards.get(serverName);
    if (!forward) return false;
    await forward.close(reason);
    return true;
  }

  info(serverName: string): ForwardInfo | undefined {
    return this.forwards.get(serverName)?.info;
  }

  connections(serverName: string): number {
    return this.forwards.get(serverName)?.connections ?? 0;
  }

  /** Closes every forward (the window closes, the CLI ends); resolves once the ports are free. */
  dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.forwards.values()];
    return Promise.all(all.map((f) => f.close('closing'))).then(() => undefined);
  }
}
