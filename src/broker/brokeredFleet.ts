/**
 * A fleet that shares its watches with the other processes of this user on this machine
 * (docs/broker.md): the first comer owns the broker's socket and runs the real watches; the
 * others show its snapshots and events and have their verbs (their commands and HTTP too,
 * brokeredTransport.ts) run by it. When the owner leaves, one peer takes over (claim.ts) and
 * watches what it watched. When anything of the broker fails, this fleet watches on its own,
 * said once in the log. Same verbs as a Fleet (FrontFleet): the fronts do not know their role.
 * It holds a Fleet of its own (what it watches itself: as the owner, alone, or for a server the
 * owner does not serve) and, as a client, the owner's connection; each verb goes to one of them.
 */
import {
  cannotWatchLine,
  notSharedLine,
  ownerLeftLine,
  ownerLine,
  peerLine,
  restartCancelled,
  socketTakenLine,
} from '../present/words/brokerWords';
import type * as net from 'node:net';
import type { ServerProfile, Settings } from '../config/config';
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
  WaitResult,
} from '../fleet/fleetTypes';
import type { FrontFleet } from '../fleet/fleetVerbs';
import type { ForwardInfo } from '../fleet/forward/forwardPlan';
import type { RestartQuestions } from '../fleet/restart/restartVerb';
import type { ServerLogs } from '../fleet/logs/serverLog';
import type { LoadForecast } from '../monitor/forecast/loadInsights';
import type { WatchOutcome } from '../monitor/watch/watchTypes';
import { Emitter } from '../util/emitter';
import { errorText } from '../util/errors';
import { BrokeredTransport, ownerRoute, type OwnerRoute } from './brokeredTransport';
import { abandon, claim, release, stillOwner, type Claim } from './claim';
import { BrokerClient, BrokerGone, CallFailed, type Call } from './client';
import { BrokerOwner, type OwnerFleet } from './owner';
import { profileKey, type ReceivedEvent, type WireSnapshot } from './protocol';
import { brokerDir, brokerEndpoint, ensureBrokerDir } from './socketDir';
import { OneVerification } from './oneVerification';
import { restartThroughOwner } from './remoteRestart';
import { TakeoverHold } from './takeover';
import type { ReplyOf, Verb } from './verbs';
import { fromWireError, fromWireEvent, fromWireSnapshot } from './wire';
import { stoppedByUser } from '../present/words/watchWords';

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

export class BrokeredFleet implements FrontFleet {
  /** This process's own fleet; its composite verbs (status, wait, logs, forward) see this one's face. */
  private readonly local: Fleet;
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
  /** kimiService.confirmRestart of this window (asked first until the settings are known). */
  private confirmsRestarts = true;
  private disposed = false;
  private readonly verifying = new OneVerification((server, log) => this.local.verifyParsers(server, log));

  /** This fleet's own verbs, for the peers the owner serves. */
  private readonly here: OwnerFleet = {
    server: (name) => this.server(name),
    snapshots: () => this.snapshots(),
    snapshot: (server) => this.snapshot(server),
    watchAll: (skip) => this.local.watchAll(skip),
    confirmsRestarts: () => this.confirmsRestarts,
    watch: (server, quiet) => {
      if (!quiet) this.takeover.release(server.name, true);
      return this.local.watch(server, quiet);
    },
    restartAsking: (server, options) => {
      this.takeover.release(server.name, true);
      return this.local.restartAsking(server, options);
    },
    stop: (server, reason) => {
      this.takeover.release(server.name, false);
      return this.local.stop(server, reason);
    },
    verifyParsers: (server, log) => this.verifying.run(server, log),
    connect: (server) => this.local.connect(server),
    forecast: (server) => this.local.forecast(server),
    exec: async (server, command, options) => (await this.local.connect(server)).transport.exec(command, options),
    openStream: async (server, host, port) => forwardOpener(await this.local.connect(server))(host, port),
  };

  constructor(
    deps: FleetDeps,
    private readonly broker: BrokerOptions,
  ) {
    // The sessions' transports ask this fleet, at each use, whether the owner serves the server.
    this.local = new Fleet(
      {
        ...deps,
        wrapTransport: (server, transport) => new BrokeredTransport(transport, async () => this.routeFor(server.name)),
      },
      this,
    );
    this.focused = broker.focused ?? false;
    this.local.onEvent((event) => {
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
    return ownerRoute(client, server, this.socketPath, (call) => this.replyOf(call, server));
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
      if (!this.saidFallback) this.broker.log('warn', notSharedLine(printable(errorText(error), 300)));
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
    this.broker.log('info', ownerLine(claimed.socketPath));
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
    this.broker.log('warn', socketTakenLine());
  }

  /**
   * Owner or solo: the watches the previous owner ran (a takeover), and what this front asked
   * for. Each window keeps the old owner's last state until the fresh watch catches up (takeover.ts).
   */
  private watchOnOwn(role: 'owner' | 'solo'): void {
    this.role = role;
    for (const [name, snapshot] of this.mirror) {
      const profile = this.coveredProfile(name);
      if (!profile || !snapshot.watching || this.local.snapshot(profile).watching) continue;
      this.takeover.hold(name, fromWireSnapshot(snapshot, profile));
      this.local.watch(profile, true).catch((error) => {
        this.takeover.release(name, false);
        this.broker.log('warn', cannotWatchLine(name, errorText(error)));
      });
    }
    if (this.wanted) this.local.watchAll(this.wanted);
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
    this.broker.log('info', peerLine());
    for (const server of this.servers) {
      const state = this.covers(server) ? this.snapshot(server).state : undefined;
      if (state) this.mirrored.fire({ type: 'state', server, state, previous: state });
    }
    if (this.wanted) this.watchAll(this.wanted);
  }

  private fromOwner(client: BrokerClient, event: ReceivedEvent, snapshot: WireSnapshot, notify: boolean): void {
    if (this.client !== client) return;
    this.mirror.set(event.server, snapshot);
    const profile = this.coveredProfile(event.server);
    if (profile) this.mirrored.fire(fromWireEvent(event, profile, notify));
  }

  private ownerLeft(client: BrokerClient, why: string | undefined): void {
    if (this.client !== client || this.disposed) return;
    this.client = undefined;
    this.broker.log('info', ownerLeftLine(why ? printable(why, 300) : ''));
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
      throw error instanceof CallFailed ? fromWireError(error.wire, () => this.snapshot(server)) : error;
    }
  }

  /**
   * A verb of one server, after the join under way: run by the owner when it serves that server
   * (`there`, over its connection), else by this process's own fleet (`here`).
   */
  private async routed<T>(
    server: ServerProfile,
    here: () => Promise<T>,
    there: (client: BrokerClient) => Promise<T>,
  ): Promise<T> {
    await this.joined;
    const client = this.remote(server);
    return client ? there(client) : here();
  }

  get servers(): readonly ServerProfile[] {
    return this.local.servers;
  }

  server(name: string): ServerProfile | undefined {
    return this.local.server(name);
  }

  configure(next: Settings): void {
    this.confirmsRestarts = next.confirmRestart;
    this.local.configure(next);
  }

  snapshot(server: ServerProfile): ServerSnapshot {
    const own = this.local.snapshot(server);
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

  onEvent(listener: (event: FleetEvent) => void): { dispose(): void } {
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

  snapshots(): ServerSnapshot[] {
    return this.servers.map((s) => this.snapshot(s));
  }

  watchAll(skip: (server: ServerProfile) => boolean = () => false): string[] {
    this.wanted = skip;
    if (this.role === 'joining') return [];
    const client = this.role === 'client' ? this.client : undefined;
    if (!client) return this.local.watchAll(skip);
    const shared = this.servers.filter((s) => !skip(s) && this.covers(s)).map((s) => s.name);
    client.watchAll(shared);
    const started = shared.filter((name) => this.mirror.get(name)?.watching !== true);
    return [...started, ...this.local.watchAll((s) => skip(s) || this.covers(s))];
  }

  watch(server: ServerProfile, quiet = false): Promise<WatchOutcome | undefined> {
    return this.routed(
      server,
      () => this.here.watch(server, quiet),
      async (client) => {
        const call = client.call('watch', { server: server.name, quiet });
        await this.replyOf(call, server);
        return call.outcome;
      },
    );
  }

  async restart(server: ServerProfile, options: RestartOptions = {}): Promise<RestartAnswer> {
    // No question of its own: only the owner's answer (its confirmation answered no in a window) cancels it.
    const answer = await this.restartAsking(server, options);
    if (!answer) throw new Error(restartCancelled(server.name));
    return answer;
  }

  restartAsking(server: ServerProfile, options: RestartOptions & RestartQuestions): Promise<RestartAnswer | undefined> {
    return this.routed(
      server,
      () => this.here.restartAsking(server, options),
      (client) =>
        restartThroughOwner(
          client,
          server.name,
          options,
          (call) => this.replyOf(call, server),
          () => this.snapshot(server),
        ),
    );
  }

  stop(server: ServerProfile, reason = stoppedByUser()): boolean {
    const client = this.remote(server);
    if (!client) return this.here.stop(server, reason);
    client.call('stop', { server: server.name }).reply.catch(() => undefined);
    return this.mirror.get(server.name)?.watching === true;
  }

  stopAll(reason = stoppedByUser()): string[] {
    if (this.role !== 'client') return this.local.stopAll(reason);
    const shared = this.servers.filter((s) => this.covers(s) && this.stop(s, reason)).map((s) => s.name);
    return [...shared, ...this.local.stopAll(reason)];
  }

  verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    return this.routed(
      server,
      () => this.verifying.run(server, log),
      (client) => this.replyOf(client.call('verify', { server: server.name }, { log }), server),
    );
  }

  /** A client's connect is the owner's (its refusal comes as the owner's `refused` event); the session is this side's, unconnected. */
  connect(server: ServerProfile): Promise<FleetSession> {
    return this.routed(
      server,
      () => this.local.connect(server),
      async (client) => {
        await this.replyOf(client.call('connect', { server: server.name }), server);
        return this.local.sessionFor(server);
      },
    );
  }

  forecast(server: ServerProfile): Promise<LoadForecast> {
    return this.routed(
      server,
      () => this.local.forecast(server),
      (client) => this.replyOf(client.call('forecast', { server: server.name }), server),
    );
  }

  // This process's own fleet runs these; what they read and call goes through this one's verbs.
  sessionFor(server: ServerProfile): Promise<FleetSession> {
    return this.local.sessionFor(server);
  }

  status(server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ServerSnapshot> {
    return this.local.status(server, options);
  }

  waitFor(
    server: ServerProfile,
    options: { timeoutMs: number; signal?: AbortSignal; onChange?: (snapshot: ServerSnapshot) => void },
  ): Promise<WaitResult> {
    return this.local.waitFor(server, options);
  }

  logs(server: ServerProfile, lines: number): Promise<ServerLogs> {
    return this.local.logs(server, lines);
  }

  forward(server: ServerProfile, options?: { localPort?: number }): Promise<{ info: ForwardInfo; already: boolean }> {
    return this.local.forward(server, options);
  }

  closeForward(server: ServerProfile): Promise<boolean> {
    return this.local.closeForward(server);
  }

  forwardOf(server: ServerProfile): ForwardInfo | undefined {
    return this.local.forwardOf(server);
  }

  dispose(): void {
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
    this.local.dispose();
  }
}
