/**
 * The transport of a server's session in a process that shares the broker (docs/broker.md):
 * while this process is a client for the server, what its fronts run on the host (a command:
 * the suggestions after a load, the token counter's look at the model folder, Show logs'
 * journal) and the HTTP to the server (the chat model's looks and requests) go through the
 * owner's connection; as owner or alone, through its own. A command goes to the owner as one of
 * its named operations (hostOps.ts: the owner builds the line itself from its own entry); one
 * that is none of them, or too large to pass, runs on this process's own transport, as do the
 * long-lived ones (`stream`: a watch's journal and sampler, the page-cache warm-up and its cancel).
 */
import { forwardOpener } from '../fleet/forward/portForward';
import type { ExecOptions, ExecResult, RemoteProcess, StreamOpener, Transport } from '../transport/transport';
import type { BrokerClient, Call } from './client';
import type { ServerProfile } from '../config/config';
import { hostOpOf } from './hostOps';
import { MAX_COMMAND_CHARS, type ReplyOf, type Verb } from './verbs';
import { openTunnel } from './tunnel';

/** How the owner serves this server now. */
export interface OwnerRoute {
  connect(): Promise<void>;
  /** Undefined: not an operation the owner serves, or too large to pass (its input or output): run it here. */
  exec(command: string, options: Omit<ExecOptions, 'signal'>): Promise<ExecResult | undefined>;
  openStream: StreamOpener;
}

export class BrokeredTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    /** The owner's route while this process is its client for the server; undefined: its own transport. */
    private readonly route: () => Promise<OwnerRoute | undefined>,
  ) {}

  get description(): string {
    return this.inner.description;
  }

  get state(): Transport['state'] {
    return this.inner.state;
  }

  get handshakes(): number {
    return this.inner.handshakes;
  }

  get openChannels(): number | undefined {
    return this.inner.openChannels;
  }

  onStateChange(listener: Parameters<Transport['onStateChange']>[0]): { dispose(): void } {
    return this.inner.onStateChange(listener);
  }

  async connect(): Promise<void> {
    const route = await this.route();
    return route ? route.connect() : this.inner.connect();
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const route = await this.route();
    if (!route) return this.inner.exec(command, options);
    const { signal, ...rest } = options;
    if (signal?.aborted) throw new Error('aborted');
    // The owner runs it to its end (or its time limit); an abort here only stops waiting for it.
    const run = route.exec(command, rest).then((result) => result ?? this.inner.exec(command, options));
    if (!signal) return run;
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  stream(command: string, onLine: (line: string) => void, onStderr?: (line: string) => void): Promise<RemoteProcess> {
    return this.inner.stream(command, onLine, onStderr);
  }

  /** A property, not a method: the HTTP agent takes it on its own (`new TunnelAgent(transport.openStream)`). */
  readonly openStream: StreamOpener = async (host, port) => {
    const route = await this.route();
    return route ? route.openStream(host, port) : this.inner.openStream(host, port);
  };

  /**
   * Outside the watch's channel cap (port forwards, a client's HTTP served by the owner): a
   * client's stream is the owner's tunnel, which the owner opens outside its own cap.
   */
  readonly openUncappedStream: StreamOpener = async (host, port) => {
    const route = await this.route();
    return route ? route.openStream(host, port) : forwardOpener({ transport: this.inner })(host, port);
  };

  dispose(): void {
    this.inner.dispose();
  }
}

/** The route through the owner's connection (`client`) for one server, its tunnels through `socketPath`. */
export function ownerRoute(
  client: BrokerClient,
  server: ServerProfile,
  socketPath: string,
  replyOf: <V extends Verb>(call: Call<V>) => Promise<ReplyOf<V>>,
): OwnerRoute {
  return {
    connect: async () => {
      await replyOf(client.call('connect', { server: server.name }));
    },
    exec: async (command, options) => {
      const op = hostOpOf(server, command);
      if (!op || (options.stdin?.length ?? 0) > MAX_COMMAND_CHARS) return undefined;
      const result = await replyOf(client.call('host', { server: server.name, ...op, ...options }));
      return 'tooLarge' in result ? undefined : result;
    },
    openStream: (host, port) => openTunnel(socketPath, server.name, host, port),
  };
}
