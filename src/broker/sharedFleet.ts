/**
 * A fleet that shares its watches with the other processes of this user on this machine
 * (docs/broker.md): the first comer owns the broker's socket and runs the real watches; the
 * others show its snapshots and events and have their verbs (their commands and HTTP too,
 * brokeredTransport.ts) run by it. When the owner leaves, one peer takes over (claim.ts) and
 * watches what it watched. When anything of the broker fails, this fleet watches on its own,
 * said once in the log. Same verbs as a Fleet: the fronts do not know their role.
 */
import type * as net from 'node:net';
import type { ServerProfile } from '../config/config';
import { printable } from '../config/text';
import { Fleet } from '../fleet/fleet';
import { forwardOpener } from '../fleet/forward/portForward';
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
import { BrokeredTransport, ownerRoute, type OwnerRoute } from './brokeredTransport';
import { abandon, claim, release, stillOwner, type Claim } from './claim';
import { BrokerClient, BrokerGone, type Call } from './client';
import { BrokerOwner, type OwnerFleet } from './owner';
import { profileKey, type WireError, type WireEvent, type WireSnapshot } from './protocol';
import { brokerDir, brokerEndpoint, ensureBrokerDir } from './socketDir';
import { OneVerification } from './oneVerification';
import { restartThroughOwner } from './remoteRestart';
import { TakeoverHold } from './takeover';
import type { ReplyOf, Verb } from './verbs';
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
/** Joins tried when the owner goes away between the connect and its welcome (each claims again), and the wait. */
const [JOIN_ATTEMPTS, JOIN_RETRY_MS] = [5, 100];

type Owned = Extract<Claim, { role: 'owner' }> & { readonly broker: BrokerOwner; readonly check: NodeJS.Timeout };

export class SharedFleet extends Fleet {
  private role: BrokerRole = 'solo';
  private joined: Promise<void> = Promise.resolve();
  /** The owner's last snapshot of each server (kept through a handover, until this side knows better). */
  private readonly mirror = new Map<string, WireSnapshot>();
  private readonly mirrored = new Emitter<FleetEvent>();
  /** This fleet's own events as shown (a takeover's fresh watch held back while it catches up). */
  private readonly shown = new Emitter<FleetEvent>();
  private readonly takeover = new TakeoverHold();
  private client: BrokerClient | undefined;
  /** The broker's socket, for a client's tunnels (brokeredTransport.ts). */
  private socketPath: string | undefined;
  private owned: Owned | undefined;
  /** The last watchAll's choice, replayed after a join or a takeover. */
  private wanted: ((server: ServerProfile) => boolean) | undefined;
  private focused: boolean;
  private saidFallback = false;
  private disposed = false;
  private readonly verifying = new OneVerification((server, log) => super.verifyParsers(server, log));

  /** This fleet's own verbs, for the peers the owner serves. */
  private readonly here: OwnerFleet = {
    server: (name) => this.server(name),
    snapshots: () => this.snapshots(),
    snapshot: (server) => this.snapshot(server),
    watchAll: (skip) => super.watchAll(skip),
    attach: (server, quiet) => {
      if (!quiet) this.takeover.release(server.name, true);
      return super.attach(server, quiet);
    },
    restartAsking: (server, options) => {
      this.takeover.release(server.name, true);
      return super.restartAsking(server, options);
    },
    stop: (server, reason) => {
      this.takeover.release(server.name, false);
      return super.stop(server, reason);
    },
    verifyParsers: (server, log) => this.verifying.run(server, log),
    connect: (server) => super.connect(server),
    forecast: (server) => super.forecast(server),
    exec: async (server, command, options) => (await super.connect(server)).transport.exec(command, options),
    openStream: async (server, host, port) => forwardOpener(await super.connect(server))(host, port),
  };

  constructor(
    deps: FleetDeps,
    private readonly broker: BrokerOptions,
  ) {
    // The sessions' transports ask this fleet, at each use, whether the owner serves the server.
    const self: { fleet?: SharedFleet } = {};
    super({
      ...deps,
      wrapTransport: (server, transport) =>
        new BrokeredTransport(transport, async () => self.fleet?.routeFor(server.name)),
    });
    self.fleet = this;
    this.focused = broker.focused ?? false;
    super.onEvent((event) => {
      for (const shown of this.takeover.filter(event)) {
        this.owned?.broker.broadcast(shown);
        this.shown.fire(shown);
      }
    });
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

  /** The owner's route for a server this process is a client for (after the join under way, if any). */
  private async routeFor(name: string): Promise<OwnerRoute | undefined> {
    await this.joined;
    const server = this.server(name);
    const client = server && this.remote(server);
    if (!server || !client || !this.socketPath) return undefined;
    return ownerRoute(client, name, this.socketPath, (call) => this.replyOf(call, server));
  }

  private async join(): Promise<void> {
    this.role = 'joining';
    try {
      const dir = this.broker.dir ?? brokerDir();
      ensureBrokerDir(dir);
      this.socketPath = brokerEndpoint(dir);
      for (let attempt = 1; ; attempt++) {
        const claimed = await claim(dir, (socket) => this.accept(socket));
        if (this.disposed) return abandon(claimed);
        if (claimed.role === 'owner') return this.becomeOwner(claimed);
        try {
          return await this.becomeClient(claimed.socket);
        } catch (error) {
          // The owner left between the connect and its welcome (closing, or killed): claim again.
          if (!(error instanceof BrokerGone) || attempt >= JOIN_ATTEMPTS || this.disposed) throw error;
          await new Promise((resolve) => setTimeout(resolve, JOIN_RETRY_MS * attempt));
        }
      }
    } catch (error) {
      if (this.disposed) return;
      this.watchOnOwn('solo');
      // The owner's refusal is its own words: cut and on one line.
      if (!this.saidFallback)
        this.broker.log('warn', `Broker: not shared (${printable(errorText(error), 300)}); watching on its own.`);
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

  /**
   * Owner or solo: the watches the previous owner ran (a takeover), and what this front asked
   * for. Each window keeps the old owner's last state until the fresh watch catches up (takeover.ts).
   */
  private watchOnOwn(role: 'owner' | 'solo'): void {
    this.role = role;
    for (const [name, snapshot] of this.mirror) {
      const profile = this.coveredProfile(name);
      if (!profile || !snapshot.watching || super.snapshot(profile).watching) continue;
      this.takeover.hold(name, fromWireSnapshot(snapshot, profile));
      super.attach(profile, true).catch((error) => {
        this.takeover.release(name, false);
        this.broker.log('warn', `[${name}] Cannot watch: ${errorText(error)}`);
      });
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
    this.takeover.clear();
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
      `Broker: the window that watched left${why ? ` (${printable(why, 300)})` : ''}; taking over or following the next.`,
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

  private async replyOf<V extends Verb>(call: Call<V>, server: ServerProfile): Promise<ReplyOf<V>> {
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
    // A client shows the owner's; during a handover the last one known, until this side's own
    // watch has caught up with it (takeover.ts); then its own, with the old owner's verification
    // of the same run until it has one of its own.
    const theirs = this.role === 'client' || this.role === 'joining' || own.state === undefined;
    if (theirs || this.takeover.isHeld(server.name)) return fromWireSnapshot(mirrored, server);
    const checks = own.verification === undefined ? this.takeover.checksOf(server.name, own.state) : undefined;
    return checks ? { ...own, ...checks } : own;
  }

  override onEvent(listener: (event: FleetEvent) => void): { dispose(): void } {
    const own = this.shown.on((event) => listener(this.toldHere(event)));
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
    if (!client) return this.here.attach(server, quiet);
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
    if (!client) return this.here.restartAsking(server, options);
    return restartThroughOwner(
      client,
      server.name,
      options,
      (call) => this.replyOf(call, server),
      () => this.snapshot(server),
    );
  }

  override stop(server: ServerProfile, reason = 'stopped by the user'): boolean {
    const client = this.remote(server);
    if (!client) return this.here.stop(server, reason);
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
    if (!client) return this.verifying.run(server, log);
    return this.replyOf(client.call('verify', { server: server.name }, { log }), server);
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
    return this.replyOf(client.call('forecast', { server: server.name }), server);
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
    this.shown.dispose();
    this.takeover.clear();
    super.dispose();
  }
}
