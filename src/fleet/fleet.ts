/**
 * The fleet: every configured server, one session each (rebuilt when its settings change),
 * the watch of each (load, then steady state), and the verbs every front uses: restart,
 * attach, stop, verify, wait, status. Knows nothing of VS Code: the extension, the language
 * model tools, the MCP server and the CLI all drive it and listen to its events.
 */
import { serverHosts, type ServerProfile, type Settings } from '../config/config';
import type { MementoLike } from '../monitor/history';
import { LoadInsights, type LoadForecast } from '../monitor/loadInsights';
import type { LoadBreakdown } from '../monitor/loadBreakdown';
import { isAlive, isAttached, isFinished, type LoadState } from '../monitor/loadState';
import { AlreadyWatchingError, ServerSession } from '../monitor/session';
import type { LogLevel, WatchAlert, WatchOptions, WatchOutcome } from '../monitor/watcher';
import { TransportError } from '../transport/transport';
import { LOG_ACCESS_FIX, targetFor, targetIo } from '../target/target';
import type { UnitStatus } from '../engine/events';
import type { SessionUi } from './sessionFactory';
import type { Refusal } from '../present/refusals';
import { Emitter } from '../util/emitter';
import { RingBuffer } from '../monitor/ringBuffer';
import { maskSecrets } from '../util/secrets';
import type { CheckResult } from '../verify/verifier';

const RECENT_LOG_LINES = 500;
/** How long a restart waits for a watch that is still attaching to say what it follows. */
const ATTACH_WAIT_MS = 10_000;
import { errorText } from '../util/errors';
import { describe } from '../present/messages';
import { PortForwards } from './portForward';
import type { ForwardInfo } from './forwardPlan';
import { MultiNodeSession, nodeServerProfile } from './multiNodeSession';

/** One server's session: one connection, or one per node of a multi-node server. */
export type FleetSession = ServerSession | MultiNodeSession;

export type FleetEvent =
  | { readonly type: 'state'; readonly server: ServerProfile; readonly state: LoadState; readonly previous: LoadState }
  /** A load ended (`quiet`: a watch resumed on its own found what was known already). */
  | { readonly type: 'end'; readonly server: ServerProfile; readonly outcome: WatchOutcome; readonly quiet: boolean }
  | { readonly type: 'alert'; readonly server: ServerProfile; readonly alert: WatchAlert }
  | {
      readonly type: 'refused';
      readonly server: ServerProfile;
      readonly refusal: Refusal;
      readonly error: TransportError;
    }
  | { readonly type: 'connected'; readonly server: ServerProfile }
  | {
      readonly type: 'verified';
      readonly server: ServerProfile;
      readonly summary: string;
      readonly allPassed: boolean | undefined;
      /** Each check's outcome (none when the verification could not run). */
      readonly checks: readonly CheckResult[];
    }
  /** A watch began, or ended for good. */
  | { readonly type: 'watching'; readonly server: ServerProfile; readonly watching: boolean }
  /** A port forward opened (`forward`) or closed (undefined). */
  | { readonly type: 'forward'; readonly server: ServerProfile; readonly forward: ForwardInfo | undefined };

/** What a parser verification found, as every front shows it (src/verify/report.ts). */
export interface ParserVerification {
  readonly summary: string;
  readonly allPassed: boolean | undefined;
  readonly table: string;
  /** verified | failed | inconclusive (answers cut by max_tokens) | incomplete (requests unanswered). */
  readonly verdict: 'verified' | 'failed' | 'inconclusive' | 'incomplete';
}

export interface NodeSnapshot {
  readonly label: string;
  readonly host: string;
  readonly state: LoadState | undefined;
}

/** One server as every front shows it. */
export interface ServerSnapshot {
  readonly server: ServerProfile;
  readonly state: LoadState | undefined;
  /** Something watches it now (a load, or the steady state). */
  readonly watching: boolean;
  /** A load is followed: a second restart would wait. */
  readonly loading: boolean;
  readonly refusal: Refusal | undefined;
  /** The last parser verification, in one line. */
  readonly verification: string | undefined;
  /** Its table of checks (evidence, requests, what agents suffer), for the dashboard. */
  readonly verificationTable?: string;
  /** Per node, rank 0 first, for a multi-node server. */
  readonly nodes?: readonly NodeSnapshot[];
  /** The local port forwarded to the server's url, if any. */
  readonly forwardedPort?: number;
  /** The last load that reached ready, explained (phases, rates, against the loads before it). */
  readonly lastLoad?: LoadBreakdown;
}

export interface FleetDeps {
  readonly ui: SessionUi;
  readonly log: (level: LogLevel, message: string) => void;
  /** Where the load history lives (VS Code's globalState, a file for the CLI). */
  readonly history: MementoLike;
  /** The API key of a server, if one is stored for it. */
  readonly apiKey?: (serverName: string) => Promise<string | undefined>;
  /** Builds a session (default: SSH or local, see sessionFactory). */
  readonly createSession?: (server: ServerProfile, settings: Settings) => Promise<ServerSession>;
}

/** How a restart request was met. */
export type RestartResult =
  | { readonly kind: 'restarted'; readonly outcome: Promise<WatchOutcome | undefined> }
  /** A load was already under way (here, or started by someone else): followed, not restarted. */
  | { readonly kind: 'attached'; readonly reason: string; readonly outcome: Promise<WatchOutcome | undefined> };

export type WaitResult =
  /** stalled: the load became stalled during the wait (the process lives, no witness moves); the load goes on. */
  | { readonly kind: 'ready' | 'failed' | 'stopped' | 'stalled'; readonly snapshot: ServerSnapshot }
  | { readonly kind: 'timeout' | 'cancelled' | 'not watched'; readonly snapshot: ServerSnapshot };

export class Fleet {
  private settings: Settings | undefined;
  private readonly sessions = new Map<string, FleetSession>();
  private readonly pending = new Map<string, Promise<FleetSession>>();
  /** Sessions whose settings changed during a load: replaced once that load ends. */
  private readonly stale = new Set<FleetSession>();
  private readonly refusals = new Map<string, Refusal>();
  private readonly verification = new Map<string, string>();
  private readonly verificationTables = new Map<string, string>();
  /** Servers whose background watch (watchAll) has not ended a first time yet: that end is nobody's news. */
  private readonly firstLook = new Set<string>();
  /** Servers whose watch moves to a new session on the next tick (configure). */
  private readonly rewatching = new Set<string>();
  private readonly events = new Emitter<FleetEvent>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The fleet's own log lines per server, for `logs` (the fronts have their own log too). */
  private readonly recentLog = new Map<string, RingBuffer<string>>();
  private readonly log: (level: LogLevel, message: string) => void;
  readonly insights: LoadInsights;
  private readonly forwards: PortForwards;
  private disposed = false;

  constructor(private readonly deps: FleetDeps) {
    this.insights = new LoadInsights(deps.history);
    this.log = (level, message) => {
      const name = /^\[([^\]]+)\]/.exec(message)?.[1];
      if (name !== undefined && level !== 'trace') {
        let buffer = this.recentLog.get(name);
        if (!buffer) this.recentLog.set(name, (buffer = new RingBuffer<string>(RECENT_LOG_LINES)));
        buffer.push(`${new Date().toISOString()} ${level} ${message}`);
      }
      deps.log(level, message);
    };
    this.forwards = new PortForwards({
      // The server as configured now: a changed login or key gets the new session.
      connect: (server) => this.connect(this.server(server.name) ?? server),
      log: this.log,
      onChange: (server, forward) => this.events.fire({ type: 'forward', server, forward }),
    });
  }

  onEvent(listener: (event: FleetEvent) => void): { dispose(): void } {
    return this.events.on(listener);
  }

  get servers(): readonly ServerProfile[] {
    return this.settings?.servers ?? [];
  }

  server(name: string): ServerProfile | undefined {
    return this.servers.find((s) => s.name === name);
  }

  /**
   * New settings: a session whose server or connection settings changed is replaced, at once
   * when idle or under steady watch (the watch goes on, on a new session), after its load when
   * it loads (the running watch finishes on the old settings; the next command uses the new).
   */
  configure(next: Settings): void {
    const previous = this.settings;
    this.settings = next;
    this.forwards.reconfigure(next.servers);
    if (!previous) return;
    const watchSettings = (s: Settings) =>
      [
        s.pollIntervalMs,
        s.stallMs,
        s.loadTimeoutMs,
        s.unreachableTimeoutMs,
        s.watchAfterReady,
        s.healthIntervalMs,
      ].join();
    for (const [name, session] of this.sessions) {
      const profile = next.servers.find((s) => s.name === name);
      const same =
        profile !== undefined &&
        JSON.stringify(profile) === JSON.stringify(session.profile) &&
        previous.knownHostsFile === next.knownHostsFile &&
        previous.hostKeyPolicy === next.hostKeyPolicy &&
        (!session.watching || watchSettings(previous) === watchSettings(next));
      if (same) continue;
      if (session.busy) {
        this.stale.add(session);
        continue;
      }
      this.sessions.delete(name);
      const wasWatching = session.watching;
      session.dispose();
      if (wasWatching && profile && next.watchAfterReady) {
        // watchAll, called right after with the same settings, leaves this one to the timer.
        this.rewatching.add(name);
        this.later(() => {
          this.rewatching.delete(name);
          void this.watch(profile, 'attach', true);
        });
      }
    }
  }

  snapshot(server: ServerProfile): ServerSnapshot {
    const session = this.sessions.get(server.name);
    const forwardedPort = this.forwards.info(server.name)?.localPort;
    const lastLoad = this.insights.breakdown(server.name, server.unit);
    return {
      server,
      state: session?.state,
      watching: session?.watching ?? false,
      loading: session?.busy ?? false,
      refusal: this.refusals.get(server.name),
      verification: this.verification.get(server.name),
      ...(this.verificationTables.has(server.name)
        ? { verificationTable: this.verificationTables.get(server.name) }
        : {}),
      ...(forwardedPort !== undefined ? { forwardedPort } : {}),
      ...(lastLoad ? { lastLoad } : {}),
      ...(session instanceof MultiNodeSession ? { nodes: session.nodeStates() } : {}),
    };
  }

  snapshots(): ServerSnapshot[] {
    return this.servers.map((s) => this.snapshot(s));
  }

  /** The session of a server, created on first use (ssh2 and node-fetch load with the first one). */
  async sessionFor(server: ServerProfile): Promise<FleetSession> {
    const existing = this.sessions.get(server.name);
    if (existing) return existing;
    let pending = this.pending.get(server.name);
    if (!pending) {
      pending = this.createSession(server);
      this.pending.set(server.name, pending);
    }
    try {
      const session = await pending;
      if (this.disposed) {
        session.dispose();
        throw new Error('the fleet was closed');
      }
      this.sessions.set(server.name, session);
      return session;
    } finally {
      this.pending.delete(server.name);
    }
  }

  private async createSession(server: ServerProfile): Promise<FleetSession> {
    if (server.nodes) {
      const nodes = server.nodes;
      const sessions: ServerSession[] = [];
      try {
        for (const node of nodes)
          sessions.push(await this.createNodeSession(server, nodeServerProfile(server, node), node.label));
      } catch (error) {
        for (const session of sessions) session.dispose();
        throw error;
      }
      return new MultiNodeSession(
        server,
        nodes.map((node, i) => ({ node, session: sessions[i]! })),
      );
    }
    return this.createNodeSession(server, server);
  }

  /** One connection's session; a node's log lines go to its server's log, naming the node. */
  private async createNodeSession(
    server: ServerProfile,
    profile: ServerProfile,
    nodeLabel?: string,
  ): Promise<ServerSession> {
    const settings = this.requireSettings();
    const log: (level: LogLevel, message: string) => void =
      nodeLabel === undefined
        ? this.log
        : (level, message) => this.log(level, message.replace(`[${profile.name}]`, `[${server.name}] ${nodeLabel}:`));
    const session = this.deps.createSession
      ? await this.deps.createSession(profile, settings)
      : await import('./sessionFactory').then(({ createSession }) =>
          createSession(profile, settings, this.deps.ui, log),
        );
    const apiKey = await this.deps.apiKey?.(server.name);
    if (apiKey) session.client.setApiKey(apiKey);
    return session;
  }

  /** Connects; a refusal (host key, login, DNS...) becomes a `refused` event and is thrown. */
  async connect(server: ServerProfile): Promise<FleetSession> {
    const session = await this.sessionFor(server);
    try {
      if (session instanceof MultiNodeSession) await session.connectAll();
      else await session.transport.connect();
      this.clearRefusal(server);
      return session;
    } catch (error) {
      if (error instanceof TransportError) this.refused(server, error);
      throw error;
    }
  }

  /** What history and the page cache predict for the next load of a server. */
  async forecast(server: ServerProfile): Promise<LoadForecast> {
    const session = await this.connect(server);
    return this.insights.forecast(session.transport, server.name, server.unit, targetFor(server));
  }

  /**
   * Restarts a server, unless a load is already under way: one this fleet follows, or one
   * someone else started (the unit is activating since less than the load timeout), which is
   * then followed instead (`force` restarts anyway). So two clients asking at once restart once.
   */
  async restart(server: ServerProfile, options: { force?: boolean } = {}): Promise<RestartResult> {
    const session = await this.connect(server);
    // A watch that is still looking at the unit (attaching) is not a load under way yet: let it look.
    if (session.busy) await this.untilAttached(server, ATTACH_WAIT_MS);
    if (session.busy && !options.force) {
      return {
        kind: 'attached',
        reason: 'this server is already loading (a restart asked moments ago is followed, not repeated)',
        outcome: session.whenLoadEnds(),
      };
    }
    let unitBefore: UnitStatus | undefined;
    if (!options.force) {
      const look = await this.loadUnderWay(session);
      if (look.underWay) return { kind: 'attached', reason: look.underWay, outcome: this.watch(server, 'attach') };
      // One connection's look: only a single-node restart can skip its own.
      if (session instanceof ServerSession) unitBefore = look.unit;
    }
    if (session.busy) session.stop('restarted again (force)');
    return { kind: 'restarted', outcome: this.watch(server, 'restart', false, unitBefore) };
  }

  /** Resolves once the server's watch follows a load under way, or is no longer loading, or after `ms`. */
  private untilAttached(server: ServerProfile, ms: number): Promise<void> {
    // Known: not loading, or loading a process it follows. A watch whose state is already final
    // (stopped, failed) but whose round has not ended is not a load under way either: wait for it.
    const known = () => {
      const { loading, state } = this.snapshot(server);
      if (!loading) return true;
      return state !== undefined && !isFinished(state) && (isAttached(state) || state.restartRequestedAt !== undefined);
    };
    if (known()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        subscription.dispose();
        resolve();
      };
      const timer = setTimeout(done, ms);
      const subscription = this.onEvent((event) => {
        if (event.server.name === server.name && known()) done();
      });
    });
  }

  /** Why the unit is loading already (someone else restarted it), or undefined. */
  /** Whether a load is under way (why, if so), and the look at the unit it took: the restart uses it. */
  private async loadUnderWay(
    session: FleetSession,
  ): Promise<{ readonly underWay?: string; readonly unit?: UnitStatus }> {
    const settings = this.requireSettings();
    let unit: UnitStatus;
    try {
      unit = (await targetFor(session.profile).readState(targetIo(session.transport))).unit;
    } catch {
      return {};
    }
    const startedAt = unit.execMainStartedAt;
    if (unit.activeState === 'deactivating')
      return { underWay: `${unit.id ?? session.profile.unit} is being stopped or restarted right now` };
    if (!isAlive(unit) || startedAt === undefined) return { unit };
    const age = Date.now() - startedAt;
    if (age > settings.loadTimeoutMs) return { unit };
    const loading = `${unit.id ?? session.profile.unit} was started ${Math.round(age / 1000)} s ago and is still loading: following that load instead of restarting it`;
    if (unit.activeState === 'activating') return { underWay: loading };
    // A Type=simple unit is `active` for its whole load: the server itself says whether it serves.
    const health = await session.client.health();
    const serving = health.kind === 'http' && health.status === 200;
    return serving ? { unit } : { underWay: loading };
  }

  /**
   * Restarts or attaches and watches in the background; resolves with how the load ended. With
   * watchAfterReady the watch goes on after that, and its events keep coming.
   */
  async watch(
    server: ServerProfile,
    mode: 'restart' | 'attach',
    quiet = false,
    unitBefore?: UnitStatus,
  ): Promise<WatchOutcome | undefined> {
    const settings = this.requireSettings();
    const session = await this.sessionFor(server);
    const options: WatchOptions = {
      pollIntervalMs: settings.pollIntervalMs,
      stallMs: settings.stallMs,
      loadTimeoutMs: settings.loadTimeoutMs,
      unreachableTimeoutMs: settings.unreachableTimeoutMs,
      ...(settings.watchAfterReady ? { steadyIntervalMs: settings.healthIntervalMs } : {}),
    };
    if (!quiet) {
      this.verification.delete(server.name);
      this.verificationTables.delete(server.name);
    }
    this.log(
      'info',
      `[${server.name}] ${mode === 'restart' ? 'Restarting' : 'Watching'} ${server.unit} on ${serverHosts(server)}`,
    );
    let first = true;
    const watching = session.watch(
      mode,
      options,
      {
        onState: (state, previous) => {
          if (state.connected && !previous.connected) this.clearRefusal(server);
          else if (
            !state.connected &&
            state.connectionErrorKind &&
            state.connectionErrorKind !== previous.connectionErrorKind
          ) {
            this.refused(
              server,
              new TransportError(
                state.connectionErrorKind as TransportError['kind'],
                state.connectionError ?? 'connection lost',
              ),
            );
          }
          this.insights.observe(server.name, state);
          this.logStateChange(server, state, previous);
          this.events.fire({ type: 'state', server, state, previous });
        },
        onAlert: (alert) => this.events.fire({ type: 'alert', server, alert }),
        onEnd: (outcome) => {
          const firstLook = first && this.firstLook.delete(server.name);
          const quietEnd = (quiet && first && outcome.end === 'ready') || firstLook;
          first = false;
          void this.onEnd(server, session, outcome, quietEnd);
        },
        onClosed: () => this.onClosed(server, session),
      },
      this.insights.prior(server.name, server.unit),
      unitBefore,
    );
    this.events.fire({ type: 'watching', server, watching: true });
    return watching;
  }

  /**
   * Watches every configured server that nothing watches yet (attach, never restart): the
   * steady state of each, one connection and one watch per server. The first end of each such
   * watch (the state found at the first look) is quiet. `skip` leaves out servers a front
   * cannot reach (e.g. `local` on the UI side of a remote window). The names now watched.
   */
  watchAll(skip: (server: ServerProfile) => boolean = () => false): string[] {
    const started: string[] = [];
    for (const server of this.servers) {
      const session = this.sessions.get(server.name);
      if (session?.watching || this.pending.has(server.name) || this.rewatching.has(server.name) || skip(server))
        continue;
      // A host key the user refused (or that changed) is not asked about again behind their back.
      if (this.refusals.get(server.name)?.kind.startsWith('host-key')) continue;
      this.firstLook.add(server.name);
      started.push(server.name);
      void this.watch(server, 'attach', true).catch((error) => {
        this.firstLook.delete(server.name);
        this.log('warn', `[${server.name}] Cannot watch: ${errorText(error)}`);
      });
    }
    return started;
  }

  /** Each change of state word or phase is a log line (every front's log, and `logs`). */
  private logStateChange(server: ServerProfile, state: LoadState, previous: LoadState): void {
    if (state.verdict !== previous.verdict || state.phase !== previous.phase) {
      const why = state.lastSignal ? ` — ${state.lastSignal.text}` : '';
      const level: LogLevel =
        state.verdict === 'failed' || state.verdict === 'unreachable'
          ? 'error'
          : state.verdict === 'stalled' || state.verdict === 'unhealthy'
            ? 'warn'
            : 'info';
      this.log(level, `[${server.name}] ${describe(state)}${why}`);
    } else if (state.activity && state.activity.kind !== previous.activity?.kind) {
      // A named quiet step begins: said in the log, in the extension's words.
      this.log('info', `[${server.name}] ${describe(state)}`);
    } else if (state.lastSignal !== previous.lastSignal && state.lastSignal) {
      this.log('trace', `[${server.name}] ${state.lastSignal.text}`);
    }
  }

  private async onEnd(
    server: ServerProfile,
    session: FleetSession,
    outcome: WatchOutcome,
    quiet: boolean,
  ): Promise<void> {
    if (outcome.end === 'ready' || outcome.end === 'failed')
      await this.insights.record(server.name, server.unit, outcome);
    this.log(
      'info',
      `[${server.name}] ${session.watching ? 'Load ended' : 'Watch ended'}: ${outcome.end}${outcome.message ? ` (${outcome.message})` : ''}`,
    );
    this.events.fire({ type: 'end', server, outcome, quiet });
    if (this.stale.has(session) && session.watching) {
      // Its settings changed during the load: go on watching on a session with the new ones.
      if (this.sessions.get(server.name) === session) this.sessions.delete(server.name);
      session.stop('settings changed');
      const profile = this.server(server.name);
      if (profile && this.settings?.watchAfterReady && outcome.end !== 'cancelled')
        this.later(() => void this.watch(profile, 'attach', true));
    }
  }

  private onClosed(server: ServerProfile, session: FleetSession): void {
    if (this.stale.delete(session)) {
      session.dispose();
      if (this.sessions.get(server.name) === session) this.sessions.delete(server.name);
    }
    this.events.fire({ type: 'watching', server, watching: false });
  }

  /** Ends the watch of a server (nothing on the host is touched); false when none ran. */
  stop(server: ServerProfile, reason = 'stopped by the user'): boolean {
    return this.sessions.get(server.name)?.stop(reason) ?? false;
  }

  /** Stops every watch; the names of the servers that were watched. */
  stopAll(reason = 'stopped by the user'): string[] {
    return [...this.sessions.values()].filter((s) => s.stop(reason)).map((s) => s.profile.name);
  }

  /**
   * Waits until the server is ready, failed or stopped, at most `timeoutMs`: what agents and
   * scripts call instead of a polling loop. Attaches first when nothing watches it. A load that
   * becomes stalled during the wait ends it as `stalled` (the agent reads the logs); a load
   * already stalled when the wait begins is waited on (that wait is the agent's choice to go on).
   */
  async waitFor(
    server: ServerProfile,
    options: { timeoutMs: number; signal?: AbortSignal; onChange?: (snapshot: ServerSnapshot) => void },
  ): Promise<WaitResult> {
    const settled = (s: LoadState | undefined): 'ready' | 'failed' | 'stopped' | undefined =>
      s === undefined
        ? undefined
        : s.verdict === 'ready'
          ? 'ready'
          : s.verdict === 'failed'
            ? 'failed'
            : s.verdict === 'stopped'
              ? 'stopped'
              : undefined;
    const session = await this.sessionFor(server);
    if (!session.watching)
      void this.watch(server, 'attach').catch((error) => this.log('warn', `[${server.name}] ${errorText(error)}`));
    return new Promise<WaitResult>((resolve) => {
      // Whether the load was seen not stalled during this wait: a stall after that ends the wait.
      let movedSinceStart: boolean | undefined;
      const finish = (kind: WaitResult['kind']) => {
        clearTimeout(timer);
        subscription.dispose();
        options.signal?.removeEventListener('abort', onAbort);
        resolve({ kind, snapshot: this.snapshot(server) } as WaitResult);
      };
      const check = () => {
        const snapshot = this.snapshot(server);
        const state = snapshot.state;
        // Only a state of the load under way counts: a steady watch's ready, or a load's end.
        const verdict = snapshot.loading ? undefined : settled(state);
        const stalled = state?.verdict === 'stalled';
        if (verdict) finish(verdict);
        else if (stalled && movedSinceStart === true) finish('stalled');
        else if (snapshot.refusal && !snapshot.watching) finish('not watched');
        if (!stalled) movedSinceStart = true;
        else movedSinceStart ??= false;
      };
      const onAbort = () => finish('cancelled');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, options.timeoutMs));
      const subscription = this.onEvent((event) => {
        if (event.server.name !== server.name) return;
        if (event.type === 'state') options.onChange?.(this.snapshot(server));
        if (event.type === 'watching' && !event.watching) {
          const verdict = settled(this.snapshot(server).state);
          finish(verdict ?? 'not watched');
          return;
        }
        check();
      });
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      // A session under steady watch that is loading again must not count as ready: check() waits for the load.
      setImmediate(check);
    });
  }

  /** Checks that reasoning and tool calling really work on the server; the summary is kept. */
  async verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    const session = await this.connect(server);
    try {
      const { verifyServer } = await import('../verify/serverVerification');
      const { formatTable, summarize, verdictOf } = await import('../verify/verifier');
      const result = await verifyServer(
        session.transport,
        session.client,
        server.unit,
        log,
        server.docker ? targetFor(server) : undefined,
      );
      const summary = summarize(result);
      const table = formatTable(result);
      this.verification.set(server.name, summary);
      this.verificationTables.set(server.name, table);
      this.events.fire({ type: 'verified', server, summary, allPassed: result.allPassed, checks: result.checks });
      return { summary, allPassed: result.allPassed, table, verdict: verdictOf(result) };
    } catch (error) {
      const summary = `not verified (${errorText(error)})`;
      this.verification.set(server.name, summary);
      this.verificationTables.delete(server.name);
      this.events.fire({ type: 'verified', server, summary, allPassed: undefined, checks: [] });
      throw error;
    }
  }

  /**
   * The last `lines` lines of the unit's journal (read on the host) and of this fleet's own log
   * about the server, secrets masked. The journal part says why when it cannot be read.
   */
  async logs(
    server: ServerProfile,
    lines: number,
  ): Promise<{ journal: string[]; journalError?: string; log: string[] }> {
    const n = Math.max(1, Math.min(1000, Math.floor(lines)));
    const log = (this.recentLog.get(server.name)?.toArray() ?? []).slice(-n).map((l) => maskSecrets(l));
    try {
      const session = await this.connect(server);
      // A multi-node server: every node's journal, merged by time, each line naming its node.
      // A single server: its target's log (the unit's journal, or the container's `docker logs`).
      const sources =
        session instanceof MultiNodeSession
          ? session.nodes.map(({ node, session: s }) => ({ session: s, prefix: `${node.label}: ` }))
          : [{ session, prefix: '' }];
      const results = await Promise.all(
        sources.map((source) => targetFor(source.session.profile).tailLog(targetIo(source.session.transport), n)),
      );
      const entries = results.flatMap((result, i) =>
        result.entries.map((e) => ({
          at: e.at,
          text: maskSecrets(
            `${new Date(e.at).toISOString()} ${sources[i]!.prefix}${e.message.replace(/\r/g, ' ').trimEnd()}`,
          ),
        })),
      );
      const journal = (sources.length > 1 ? entries.sort((a, b) => a.at - b.at).slice(-n) : entries).map((e) => e.text);
      const problem = results
        .map((result, i) => result.problem && `${sources[i]!.prefix}${result.problem}`)
        .find(Boolean);
      return {
        journal,
        log,
        ...(problem && journal.length === 0 ? { journalError: `${problem}. Fix: ${LOG_ACCESS_FIX}` } : {}),
      };
    } catch (error) {
      return { journal: [], journalError: errorText(error), log };
    }
  }

  /**
   * Opens 127.0.0.1:PORT on this machine, tunnelled to the server's url through its SSH
   * connection (see portForward.ts); the open forward when there is one (`already`). Throws a
   * ForwardError (host "local", forwarding forbidden by sshd, port taken) or a TransportError.
   */
  forward(
    server: ServerProfile,
    options: { localPort?: number } = {},
  ): Promise<{ info: ForwardInfo; already: boolean }> {
    return this.forwards.open(server, options.localPort);
  }

  /** Closes the server's forward; false when none was open. */
  closeForward(server: ServerProfile): Promise<boolean> {
    return this.forwards.close(server.name);
  }

  /** The server's open forward, if any. */
  forwardOf(server: ServerProfile): ForwardInfo | undefined {
    return this.forwards.info(server.name);
  }

  private refused(server: ServerProfile, error: TransportError): void {
    const refusal: Refusal = {
      kind: error.kind,
      message: error.message,
      ...(error.hostKeyChange ? { hostKeyChange: error.hostKeyChange } : {}),
    };
    const previous = this.refusals.get(server.name);
    this.refusals.set(server.name, refusal);
    if (previous?.kind === refusal.kind && previous.message === refusal.message) return;
    this.log('error', `[${server.name}] ${error.message}`);
    this.events.fire({ type: 'refused', server, refusal, error });
  }

  private clearRefusal(server: ServerProfile): void {
    if (this.refusals.delete(server.name)) this.events.fire({ type: 'connected', server });
  }

  private requireSettings(): Settings {
    if (!this.settings) throw new Error('the Kimi settings are not valid');
    return this.settings;
  }

  private later(run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.disposed) run();
    }, 0);
    this.timers.add(timer);
  }

  dispose(): void {
    this.disposed = true;
    // Watches cancelled by the disposal are nobody's news.
    this.events.dispose();
    void this.forwards.dispose();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const session of [...this.sessions.values(), ...this.stale]) session.dispose();
    this.sessions.clear();
    this.stale.clear();
  }
}

export { AlreadyWatchingError };
