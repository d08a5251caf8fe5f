/**
 * A fleet that shares its watches with the other processes of this user on this machine
 * (docs/broker.md): the first comer owns the broker's socket and runs the real watches; the
 * others show its snapshots and events and have their verbs run by it. When the owner leaves,
 * one peer takes over (claim.ts) and watches what it watched. When anything of the broker fails,
 * this fleet watches on its own, said once in the log. Same verbs as a Fleet: the fronts do not
 * know which role they are in.
 */
import type * as net from 'node:net';
import type { ServerProfile } from '../config/config';
import { Fleet } from '../fleet/fleet';
import type {
  FleetDeps,
  FleetEvent,
  FleetSession,
  ParserVerification,
  RestartOptions,
  RestartAnswer,
  ServerSnapshot,
} from '../fleet/fleetTypes';
import type { RestartQuestions } from '../fleet/restart/restartVerb';
import type { LoadForecast } from '../monitor/loadInsights';
import type { WatchOutcome } from '../monitor/watchTypes';
import { Emitter } from '../util/emitter';
import { errorText } from '../util/errors';
import { claim, release, stillOwner, type Claim } from './claim';
import { BrokerClient, type Call } from './client';
import { BrokerOwner, type OwnerFleet } from './owner';
import { profileKey, type Question, type WireError, type WireEvent, type WireSnapshot } from './protocol';
import { brokerDir, ensureBrokerDir } from './socketDir';
import { fromWireError, fromWireEvent, fromWireSnapshot } from './wire';

export type BrokerRole = 'joining' | 'owner' | 'client' | 'solo';

export interface BrokerOptions {
  /** The broker's folder (default: brokerDir()). */
  readonly dir?: string;
  readonly log: (level: 'info' | 'warn', message: string) => void;
  /** Whether this process's window has the focus now (the one focused last tells its user). */
  readonly focused?: boolean;
}

/** How often an owner checks that the socket's name is still its own. */
const OWNER_CHECK_MS = 2000;

type Owned = Extract<Claim, { role: 'owner' }> & { readonly broker: BrokerOwner; readonly check: NodeJS.Timeout };

export class SharedFleet extends Fleet {
  private role: BrokerRole = 'solo';
  private joined: Promise<void> = Promise.resolve();
  /** The owner's last snapshot of each server (kept through a handover, until this side knows better). */
  private readonly mirror = new Map<string, WireSnapshot>();
  private readonly mirrored = new Emitter<FleetEvent>();
  private client: BrokerClient | undefined;
  private owned: Owned | undefined;
  /** The last watchAll's choice, replayed after a join or a takeover. */
  private wanted: ((server: ServerProfile) => boolean) | undefined;
  private focused: boolean;
  private saidFallback = false;
  private disposed = false;
  private readonly verifying = new Map<
    string,
    { readonly promise: Promise<ParserVerification>; readonly logs: Set<(line: string) => void> }
  >();

  /** This fleet's own verbs, for the peers the owner serves. */
  private readonly here: OwnerFleet = {
    server: (name) => this.server(name),
    snapshots: () => this.snapshots(),
    snapshot: (server) => this.snapshot(server),
    watchAll: (skip) => super.watchAll(skip),
    attach: (server, quiet) => super.attach(server, quiet),
    restartAsking: (server, options) => super.restartAsking(server, options),
    stop: (server, reason) => super.stop(server, reason),
    verifyParsers: (server, log) => this.verifyHere(server, log),
    connect: (server) => super.connect(server),
    forecast: (server) => super.forecast(server),
  };

  constructor(
    deps: FleetDeps,
    private readonly broker: BrokerOptions,
  ) {
    super(deps);
    this.focused = broker.focused ?? false;
    super.onEvent((event) => this.owned?.broker.broadcast(event));
  }

  get brokerRole(): BrokerRole {
    return this.role;
  }

  /** Joins this machine's broker (owner or client); resolves with the role once it is known. */
  share(): Promise<BrokerRole> {
    this.joined = this.join();
    return this.joined.then(() => this.role);
  }

  setFocused(focused: boolean): void {
    this.focused = focused;
    this.owned?.broker.ownFocus(focused);
    this.client?.focus(focused);
  }

  private async join(): Promise<void> {
    this.role = 'joining';
    try {
      const dir = this.broker.dir ?? brokerDir();
      ensureBrokerDir(dir);
      const claimed = await claim(dir, (socket) => this.accept(socket));
      if (this.disposed) {
        if (claimed.role === 'owner') release(claimed.socketPath, claimed.inode, claimed.server);
        else claimed.socket.destroy();
        return;
      }
      if (claimed.role === 'owner') this.becomeOwner(claimed);
      else await this.becomeClient(claimed.socket);
    } catch (error) {
      this.watchOnOwn('solo');
      if (!this.saidFallback) this.broker.log('warn', `Broker: not shared (${errorText(error)}); watching on its own.`);
      this.saidFallback = true;
    }
  }

  private accept(socket: net.Socket): void {
    if (this.owned) this.owned.broker.accept(socket);
    else socket.destroy();
  }

  private becomeOwner(claimed: Extract<Claim, { role: 'owner' }>): void {
    const broker = new BrokerOwner(this.here, this.broker.log, this.focused);
    const check = setInterval(() => {
      if (!stillOwner(claimed.socketPath, claimed.inode)) this.stepDown();
    }, OWNER_CHECK_MS);
    check.unref();
    this.owned = { ...claimed, broker, check };
    this.broker.log('info', `Broker: this process watches for every window of this user (${claimed.socketPath}).`);
    this.watchOnOwn('owner');
  }

  /** Another process's socket replaced this one's (two took a stale socket at once): it serves alone. */
  private stepDown(): void {
    const owned = this.owned;
    if (!owned) return;
    this.owned = undefined;
    clearInterval(owned.check);
    owned.broker.close();
    owned.server.close();
    this.role = 'solo';
    this.broker.log('warn', 'Broker: another process owns the socket now; this one goes on watching on its own.');
  }

  /** Owner or solo: the watches the previous owner ran (a takeover), and what this front asked for. */
  private watchOnOwn(role: 'owner' | 'solo'): void {
    this.role = role;
    for (const [name, snapshot] of this.mirror) {
      const profile = this.coveredProfile(name);
      if (profile && snapshot.watching && !super.snapshot(profile).watching)
        super
          .attach(profile, true)
          .catch((error) => this.broker.log('warn', `[${name}] Cannot watch: ${errorText(error)}`));
    }
    if (this.wanted) super.watchAll(this.wanted);
  }

  private async becomeClient(socket: net.Socket): Promise<void> {
    const client = new BrokerClient(socket);
    const snapshots = await client.join(process.pid, this.focused, {
      onEvent: (event, snapshot, notify) => this.fromOwner(client, event, snapshot, notify),
      onClose: (why) => this.ownerLeft(client, why),
    });
    this.client = client;
    this.role = 'client';
    this.mirror.clear();
    for (const snapshot of snapshots) this.mirror.set(snapshot.server.name, snapshot);
    this.broker.log(
      'info',
      'Broker: this window shows the watches of the window that owns them (one connection per host).',
    );
    for (const server of this.servers) {
      const state = this.covers(server) ? this.snapshot(server).state : undefined;
      if (state) this.mirrored.fire({ type: 'state', server, state, previous: state });
    }
    if (this.wanted) this.watchAll(this.wanted);
  }

  private fromOwner(client: BrokerClient, event: WireEvent, snapshot: WireSnapshot, notify: boolean): void {
    if (this.client !== client) return;
    this.mirror.set(event.server, snapshot);
    const profile = this.coveredProfile(event.server);
    if (profile) this.mirrored.fire(fromWireEvent(event, profile, notify));
  }

  private ownerLeft(client: BrokerClient, why: string | undefined): void {
    if (this.client !== client || this.disposed) return;
    this.client = undefined;
    this.broker.log(
      'info',
      `Broker: the window that watched left${why ? ` (${why})` : ''}; taking over or following the next.`,
    );
    this.joined = this.join();
  }

  /** This front's profile of the server, when it is the same server as the owner's of that name. */
  private coveredProfile(name: string): ServerProfile | undefined {
    const profile = this.server(name);
    return profile && this.covers(profile) ? profile : undefined;
  }

  private covers(server: ServerProfile): boolean {
    const mirrored = this.mirror.get(server.name);
    return mirrored !== undefined && profileKey(mirrored.server) === profileKey(server);
  }

  /** The owner's connection when it runs this server's verbs. */
  private remote(server: ServerProfile): BrokerClient | undefined {
    return this.role === 'client' && this.covers(server) ? this.client : undefined;
  }

  private async replyOf(call: Call, server: ServerProfile): Promise<unknown> {
    try {
      return await call.reply;
    } catch (error) {
      throw fromWireError(error as WireError, () => this.snapshot(server));
    }
  }

  override snapshot(server: ServerProfile): ServerSnapshot {
    const own = super.snapshot(server);
    const mirrored = this.mirror.get(server.name);
    if (!mirrored || !this.covers(server)) return own;
    // A client shows the owner's; during a handover the last one known, until this side has its own.
    if (this.role === 'client' || this.role === 'joining' || own.state === undefined)
      return fromWireSnapshot(mirrored, server);
    return own;
  }

  override onEvent(listener: (event: FleetEvent) => void): { dispose(): void } {
    const own = super.onEvent((event) => listener(this.toldHere(event)));
    const mirrored = this.mirrored.on(listener);
    return {
      dispose: () => {
        own.dispose();
        mirrored.dispose();
      },
    };
  }

  /** An owner's end is news only in the window that tells (focused last): quiet elsewhere. */
  private toldHere(event: FleetEvent): FleetEvent {
    if (event.type !== 'end' || event.quiet || !this.owned || this.owned.broker.notifiesHere()) return event;
    return { ...event, quiet: true };
  }

  override watchAll(skip: (server: ServerProfile) => boolean = () => false): string[] {
    this.wanted = skip;
    if (this.role === 'joining') return [];
    const client = this.role === 'client' ? this.client : undefined;
    if (!client) return super.watchAll(skip);
    const shared = this.servers.filter((s) => !skip(s) && this.covers(s)).map((s) => s.name);
    client.watchAll(shared);
    const started = shared.filter((name) => this.mirror.get(name)?.watching !== true);
    return [...started, ...super.watchAll((s) => skip(s) || this.covers(s))];
  }

  override async attach(server: ServerProfile, quiet = false): Promise<WatchOutcome | undefined> {
    await this.joined;
    const client = this.remote(server);
    if (!client) return super.attach(server, quiet);
    const call = client.call('attach', { server: server.name, quiet });
    await this.replyOf(call, server);
    return (await call.outcome) as WatchOutcome | undefined;
  }

  override async restartAsking(
    server: ServerProfile,
    options: RestartOptions & RestartQuestions,
  ): Promise<RestartAnswer | undefined> {
    await this.joined;
    const client = this.remote(server);
    if (!client) return super.restartAsking(server, options);
    const asks: Question[] = [
      ...(options.confirm ? ['confirm' as const] : []),
      ...(options.choose ? ['choose' as const] : []),
    ];
    const call = client.call(
      'restart',
      {
        server: server.name,
        asks,
        ...(options.force !== undefined ? { force: options.force } : {}),
        ...(options.issueTimeoutMs !== undefined ? { issueTimeoutMs: options.issueTimeoutMs } : {}),
      },
      {
        ask: async (question, reason) =>
          question === 'confirm'
            ? ((await options.confirm?.()) ?? false)
            : ((await options.choose?.(reason ?? '')) ?? 'cancel'),
      },
    );
    const value = (await this.replyOf(call, server)) as { kind?: unknown; issued?: unknown; reason?: unknown } | null;
    if (value === null) return undefined;
    const outcome = call.outcome.then((o) => o as WatchOutcome | undefined);
    if (value?.kind === 'restarted' && typeof value.issued === 'boolean')
      return { kind: 'restarted', outcome, issued: value.issued, snapshot: this.snapshot(server) };
    if (value?.kind === 'attached' && typeof value.reason === 'string')
      return { kind: 'attached', reason: value.reason, outcome };
    throw new Error('the window that watches answered the restart with something else than a restart');
  }

  override stop(server: ServerProfile, reason = 'stopped by the user'): boolean {
    const client = this.remote(server);
    if (!client) return super.stop(server, reason);
    client.call('stop', { server: server.name }).reply.catch(() => undefined);
    return this.mirror.get(server.name)?.watching === true;
  }

  override stopAll(reason = 'stopped by the user'): string[] {
    if (this.role !== 'client') return super.stopAll(reason);
    const shared = this.servers.filter((s) => this.covers(s) && this.stop(s, reason)).map((s) => s.name);
    return [...shared, ...super.stopAll(reason)];
  }

  override async verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    await this.joined;
    const client = this.remote(server);
    if (!client) return this.verifyHere(server, log);
    const value = (await this.replyOf(client.call('verify', { server: server.name }, { log }), server)) as
      | Partial<ParserVerification>
      | undefined;
    if (typeof value?.summary !== 'string' || typeof value.table !== 'string' || typeof value.verdict !== 'string')
      throw new Error('the window that watches answered the verification with something else than one');
    return value as ParserVerification;
  }

  /** One verification at a time per server: a second ask (another window) shares the one under way. */
  private async verifyHere(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    const running = this.verifying.get(server.name);
    if (running) {
      running.logs.add(log);
      try {
        return await running.promise;
      } finally {
        running.logs.delete(log);
      }
    }
    const logs = new Set([log]);
    const promise = super.verifyParsers(server, (line) => {
      for (const each of logs) each(line);
    });
    this.verifying.set(server.name, { promise, logs });
    try {
      return await promise;
    } finally {
      this.verifying.delete(server.name);
    }
  }

  /** A client's connect is the owner's (its refusal comes as the owner's `refused` event); the session is this side's, unconnected. */
  override async connect(server: ServerProfile): Promise<FleetSession> {
    await this.joined;
    const client = this.remote(server);
    if (!client) return super.connect(server);
    await this.replyOf(client.call('connect', { server: server.name }), server);
    return this.sessionFor(server);
  }

  override async forecast(server: ServerProfile): Promise<LoadForecast> {
    await this.joined;
    const client = this.remote(server);
    if (!client) return super.forecast(server);
    return (await this.replyOf(client.call('forecast', { server: server.name }), server)) as LoadForecast;
  }

  override dispose(): void {
    this.disposed = true;
    const owned = this.owned;
    this.owned = undefined;
    if (owned) {
      clearInterval(owned.check);
      // The name goes first: a peer that sees its connection close claims at once.
      release(owned.socketPath, owned.inode, owned.server);
      owned.broker.close();
    }
    this.client?.close();
    this.client = undefined;
    this.mirrored.dispose();
    super.dispose();
  }
}
