/**
 * The fleet: every configured server, one session each (rebuilt when its settings change),
 * the watch of each (load, then steady state), and the verbs every front uses: restart,
 * attach, stop, verify, wait, status. Knows nothing of VS Code: the extension, the language
 * model tools, the MCP server and the CLI all drive it and listen to its events.
 */
import { serverHosts, type ServerProfile, type Settings } from '../config/config';
import { LoadInsights, type LoadForecast } from '../monitor/loadInsights';
import type { LoadState } from '../monitor/loadState';
import { AlreadyWatchingError } from '../monitor/session';
import type { LogLevel, WatchOptions, WatchOutcome } from '../monitor/watcher';
import { TransportError } from '../transport/transport';
import { targetFor } from '../target/target';
import type { UnitStatus } from '../engine/events';
import type { Refusal } from '../present/refusals';
import { Emitter } from '../util/emitter';
import type {
  FleetDeps,
  FleetEvent,
  FleetSession,
  ParserVerification,
  RestartOptions,
  RestartResult,
  ServerSnapshot,
  WaitResult,
} from './fleetTypes';
import { waitForServer, type WaitHost } from './wait';
import { stateChangeLine } from './stateLog';
import { hostLogs } from './hostLogs';
import { notReadyForChecks, verifyParsersOn } from './verification';
import { observe } from './observe';
import { FleetError, NotReadyError } from './fleetError';
import { errorText } from '../util/errors';
import { PortForwards } from './portForward';
import type { ForwardInfo } from './forwardPlan';
import { MultiNodeSession } from './multiNodeSession';
import { restartThroughRule, type RestartHost, type RestartQuestions } from './restartVerb';
import { ServerLog } from './serverLog';
import { buildSession } from './sessionBuild';

/** How long a verification waits for a first look at a server nothing watched (its state decides whether to check). */
const VERIFY_LOOK_MS = 20_000;

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
  private readonly log: ServerLog;
  readonly insights: LoadInsights;
  private readonly forwards: PortForwards;
  private disposed = false;

  constructor(private readonly deps: FleetDeps) {
    this.insights = new LoadInsights(deps.history);
    this.log = new ServerLog(deps.log);
    this.forwards = new PortForwards({
      // The server as configured now: a changed login or key gets the new session.
      connect: (server) => this.connect(this.server(server.name) ?? server),
      log: (level, message, name) => this.log.record(name, level, message),
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
          void this.attach(profile, true);
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
        throw new FleetError('closed', 'the fleet was closed');
      }
      this.sessions.set(server.name, session);
      return session;
    } finally {
      this.pending.delete(server.name);
    }
  }

  private async createSession(server: ServerProfile): Promise<FleetSession> {
    const record = (name: string, level: LogLevel, line: string) => this.log.record(name, level, line);
    return buildSession({ deps: this.deps, settings: this.requireSettings(), record }, server);
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

  /**
   * The state of a server now, for a front that has just started: at once when it is watched
   * already, else after the attach's first full look (nothing is restarted), at most `timeoutMs`.
   * The caller connects first (a refusal is its own answer).
   */
  status(server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ServerSnapshot> {
    return observe(this, server, options);
  }

  /** What history and the page cache predict for the next load of a server. */
  async forecast(server: ServerProfile): Promise<LoadForecast> {
    const session = await this.connect(server);
    return this.insights.forecast(session.transport, server.name, server.unit, targetFor(server));
  }

  /**
   * The restart rule (restartRule.ts, docs/restart-rule.md), the one verb every front calls:
   * restarts the server unless a load is under way (one this fleet follows, or one someone else
   * started), which is then followed instead; `force` restarts anyway. So two clients asking at
   * once restart once. A restart resolves once the host has it (`issued`), or after
   * `issueTimeoutMs` (`issued` false: what the snapshot says is why). Refused connections throw
   * the TransportError (a `refused` event too).
   */
  async restart(server: ServerProfile, options: RestartOptions = {}): Promise<RestartResult> {
    return (await this.restartAsking(server, options)) as RestartResult;
  }

  /**
   * `restart` for a front that can ask its user: `choose` is asked when a load is under way
   * (follow it, restart anyway, or cancel), `confirm` before a restart the rule allows (false:
   * nothing is restarted). Undefined when the user cancelled.
   */
  async restartAsking(
    server: ServerProfile,
    options: RestartOptions & RestartQuestions,
  ): Promise<RestartResult | undefined> {
    return restartThroughRule(this.restartHost(), server, options);
  }

  /**
   * Attaches and watches in the background (nothing is restarted: a restart goes through
   * `restart`, the rule's one door); resolves with how the load ended. With watchAfterReady the
   * watch goes on after that, and its events keep coming. `quiet`: a ready found at the first
   * look is nobody's news.
   */
  attach(server: ServerProfile, quiet = false): Promise<WatchOutcome | undefined> {
    return this.startWatch(server, 'attach', quiet);
  }

  /** The watch, after a restart the rule decided (`restart`) or of what is there (`attach`). */
  private async startWatch(
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
    this.say(
      server.name,
      'info',
      `${mode === 'restart' ? 'Restarting' : 'Watching'} ${server.unit} on ${serverHosts(server)}`,
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
      void this.attach(server, true).catch((error) => {
        this.firstLook.delete(server.name);
        this.say(server.name, 'warn', `Cannot watch: ${errorText(error)}`);
      });
    }
    return started;
  }

  /** Each change of state word or phase is a log line (every front's log, and `logs`). */
  private logStateChange(server: ServerProfile, state: LoadState, previous: LoadState): void {
    const line = stateChangeLine(state, previous);
    if (line) this.say(server.name, line.level, line.text);
  }

  private async onEnd(
    server: ServerProfile,
    session: FleetSession,
    outcome: WatchOutcome,
    quiet: boolean,
  ): Promise<void> {
    if (outcome.end === 'ready' || outcome.end === 'failed')
      await this.insights.record(server.name, server.unit, outcome);
    this.say(
      server.name,
      'info',
      `${session.watching ? 'Load ended' : 'Watch ended'}: ${outcome.end}${outcome.message ? ` (${outcome.message})` : ''}`,
    );
    this.events.fire({ type: 'end', server, outcome, quiet });
    if (this.stale.has(session) && session.watching) {
      // Its settings changed during the load: go on watching on a session with the new ones.
      if (this.sessions.get(server.name) === session) this.sessions.delete(server.name);
      session.stop('settings changed');
      const profile = this.server(server.name);
      if (profile && this.settings?.watchAfterReady && outcome.end !== 'cancelled')
        this.later(() => void this.attach(profile, true));
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
   * Waits until the server is ready, failed or stopped, at most `timeoutMs` (see wait.ts).
   */
  waitFor(
    server: ServerProfile,
    options: { timeoutMs: number; signal?: AbortSignal; onChange?: (snapshot: ServerSnapshot) => void },
  ): Promise<WaitResult> {
    return waitForServer(this.waitHost(), server, options);
  }

  private waitHost(): WaitHost {
    return {
      snapshot: (s) => this.snapshot(s),
      onEvent: (l) => this.onEvent(l),
      sessionFor: (s) => this.sessionFor(s),
      attach: (s) => this.attach(s),
      say: (name, level, text) => this.log.say(name, level, text),
    };
  }

  /** Checks that reasoning and tool calling really work on the server; the summary is kept. */
  async verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    const session = await this.connect(server);
    // Every front alike: a server found not ready is refused, nothing is sent to it.
    const looked = await this.status(server, { timeoutMs: VERIFY_LOOK_MS });
    const notReady = notReadyForChecks(looked);
    if (notReady) throw new NotReadyError(notReady, looked);
    try {
      const { result, summary, table, verdict } = await verifyParsersOn(session, server, log);
      this.verification.set(server.name, summary);
      this.verificationTables.set(server.name, table);
      this.events.fire({ type: 'verified', server, summary, allPassed: result.allPassed, checks: result.checks });
      return { summary, allPassed: result.allPassed, table, verdict };
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
    const log = this.log.last(server.name, n);
    try {
      const session = await this.connect(server);
      return { ...(await hostLogs(session, server, n)), log };
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
    this.say(server.name, 'error', `${error.message}`);
    this.events.fire({ type: 'refused', server, refusal, error });
  }

  private clearRefusal(server: ServerProfile): void {
    if (this.refusals.delete(server.name)) this.events.fire({ type: 'connected', server });
  }

  private restartHost(): RestartHost {
    const settings = () => this.requireSettings();
    return {
      snapshot: (s) => this.snapshot(s),
      onEvent: (l) => this.onEvent(l),
      // Read at each look: the settings may change while the user answers a question.
      get loadTimeoutMs() {
        return settings().loadTimeoutMs;
      },
      connect: (s) => this.connect(s),
      startWatch: (s, mode, unitBefore) => this.startWatch(s, mode, false, unitBefore),
    };
  }

  /** A line about one server: every front's log, and the server's own recent lines (`logs`). */
  private say(name: string, level: LogLevel, text: string): void {
    this.log.say(name, level, text);
  }

  private requireSettings(): Settings {
    if (!this.settings) throw new FleetError('settings', 'the Kimi settings are not valid');
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
// The shapes every front reads, where they were before fleetTypes.ts.
export type * from './fleetTypes';
