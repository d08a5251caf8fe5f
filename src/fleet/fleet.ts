/**
 * The fleet: every configured server, one session each (rebuilt when its settings change),
 * the watch of each (load, then steady state), and the verbs every front uses: restart,
 * watch, stop, verify, wait, status. Knows nothing of VS Code: the extension, the language
 * model tools, the MCP server and the CLI all drive it and listen to its events.
 */
import { serverHosts, type ServerProfile, type Settings } from '../config/config';
import { LoadInsights, type LoadForecast } from '../monitor/forecast/loadInsights';
import { AlreadyWatchingError } from '../monitor/watch/session';
import { forecastInWords } from '../present/forecast';
import type { LogLevel, WatchOutcome } from '../monitor/watch/watchTypes';
import { TransportError } from '../transport/transport';
import { targetFor, type ServiceStatus } from '../target/target';
import { Emitter } from '../util/emitter';
import type {
  FleetDeps,
  FleetEvent,
  FleetSession,
  ParserVerification,
  RestartOptions,
  RestartAnswer,
  ServerSnapshot,
  WaitResult,
} from './fleetTypes';
import { waitForServer, type WaitHost } from './restart/wait';
import { observe } from './restart/observe';
import { FleetError } from './fleetError';
import type { FleetFace, FrontFleet } from './fleetVerbs';
import { errorText } from '../util/errors';
import { PortForwards } from './forward/portForward';
import type { ForwardInfo } from './forward/forwardPlan';
import { MultiNodeSession } from './sessions/multiNodeSession';
import { restartThroughRule, type RestartHost, type RestartQuestions } from './restart/restartVerb';
import { ServerLog, type ServerLogs } from './logs/serverLog';
import { NextTick } from './sessions/nextTick';
import { buildSession } from './sessions/sessionBuild';
import { SessionRegistry, watchOptionsOf } from './sessions/sessionRegistry';
import { Refusals } from './sessions/refusedServers';
import { Verifications } from './checks/verifications';
import { stoppedByUser } from '../present/words/watchWords';
import { settingsNotValid } from '../present/words/fleetWords';
import { cannotWatch, watchEndLine } from '../present/words/fleetWords';

export class Fleet implements FrontFleet {
  private settings: Settings | undefined;
  private readonly sessions = new SessionRegistry((server) => this.createSession(server));
  private readonly refusals: Refusals;
  private readonly verifications = new Verifications();
  /** Servers whose background watch (watchAll) has not ended a first time yet: that end is nobody's news. */
  private readonly firstLook = new Set<string>();
  /** Watches that move to a new session on the next tick (configure). */
  private readonly nextTick = new NextTick();
  private readonly events = new Emitter<FleetEvent>();
  private readonly log: ServerLog;
  readonly insights: LoadInsights;
  private readonly forwards: PortForwards;
  /** What the composite verbs read and call: this fleet, or the one that shows it (fleetVerbs.ts). */
  private readonly face: FleetFace;

  constructor(
    private readonly deps: FleetDeps,
    face?: FleetFace,
  ) {
    this.face = face ?? this;
    this.insights = new LoadInsights(deps.history);
    this.log = new ServerLog(deps.log);
    this.refusals = new Refusals(
      (name, text) => this.say(name, 'error', text),
      (event) => this.events.fire(event),
    );
    this.forwards = new PortForwards({
      // The server as configured now: a changed login or key gets the new session.
      connect: (server) => this.face.connect(this.server(server.name) ?? server),
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
    for (const profile of this.sessions.reconfigure(previous, next)) {
      if (!next.watchAfterReady) continue;
      // watchAll, called right after with the same settings, leaves this one to the timer.
      this.nextTick.later(() => void this.face.watch(profile, true), profile.name);
    }
  }

  snapshot(server: ServerProfile): ServerSnapshot {
    const session = this.sessions.get(server.name);
    const forwardedPort = this.forwards.info(server.name)?.localPort;
    const lastLoad = this.insights.breakdown(server.name, server.unit);
    const sshClient = session?.transport.client;
    return {
      server,
      state: session?.state,
      watching: session?.watching ?? false,
      loading: session?.busy ?? false,
      refusal: this.refusals.get(server.name),
      ...this.verifications.of(server.name),
      ...(forwardedPort !== undefined ? { forwardedPort } : {}),
      ...(lastLoad ? { lastLoad } : {}),
      ...(sshClient ? { sshClient } : {}),
      ...(session instanceof MultiNodeSession ? { nodes: session.nodeStates() } : {}),
    };
  }

  snapshots(): ServerSnapshot[] {
    return this.servers.map((s) => this.snapshot(s));
  }

  /** The session of a server, created on first use (ssh2 and node-fetch load with the first one). */
  sessionFor(server: ServerProfile): Promise<FleetSession> {
    return this.sessions.sessionFor(server);
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
      this.refusals.connected(server);
      return session;
    } catch (error) {
      if (error instanceof TransportError) this.refusals.refused(server, error);
      throw error;
    }
  }

  /**
   * The state of a server now, for a front that has just started: at once when it is watched
   * already, else after the watch's first full look (nothing is restarted), at most `timeoutMs`.
   * The caller connects first (a refusal is its own answer).
   */
  status(server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ServerSnapshot> {
    return observe(this.face, server, options);
  }

  /** What history and the page cache predict for the next load of a server. */
  async forecast(server: ServerProfile): Promise<LoadForecast> {
    const session = await this.face.connect(server);
    return forecastInWords(
      await this.insights.forecast(session.transport, server.name, server.unit, targetFor(server)),
    );
  }

  /**
   * The restart rule (restartRule.ts, docs/restart-rule.md), the one verb every front calls:
   * restarts the server unless a load is under way (one this fleet follows, or one someone else
   * started), which is then followed instead; `force` restarts anyway. So two clients asking at
   * once restart once. A restart resolves once the host has it (`issued`), or after
   * `issueTimeoutMs` (`issued` false: what the snapshot says is why). Refused connections throw
   * the TransportError (a `refused` event too).
   */
  async restart(server: ServerProfile, options: RestartOptions = {}): Promise<RestartAnswer> {
    return (await this.restartAsking(server, options)) as RestartAnswer;
  }

  /**
   * `restart` for a front that can ask its user: `choose` is asked when a load is under way
   * (follow it, restart anyway, or cancel), `confirm` before a restart the rule allows (false:
   * nothing is restarted). Undefined when the user cancelled.
   */
  async restartAsking(
    server: ServerProfile,
    options: RestartOptions & RestartQuestions,
  ): Promise<RestartAnswer | undefined> {
    return restartThroughRule(this.restartHost(), server, options);
  }

  /**
   * Watches in the background what the server is doing now (nothing is restarted: a restart goes
   * through `restart`, the rule's one door); resolves with how the load ended. With watchAfterReady the
   * watch goes on after that, and its events keep coming. `quiet`: a ready found at the first
   * look is nobody's news.
   */
  watch(server: ServerProfile, quiet = false): Promise<WatchOutcome | undefined> {
    return this.startWatch(server, 'watch', quiet);
  }

  /** The watch, after a restart the rule decided (`restart`) or of what is there (`watch`). */
  private async startWatch(
    server: ServerProfile,
    mode: 'restart' | 'watch',
    quiet = false,
    unitBefore?: ServiceStatus,
  ): Promise<WatchOutcome | undefined> {
    const settings = this.requireSettings();
    const session = await this.sessionFor(server);
    const options = watchOptionsOf(settings);
    if (!quiet) this.verifications.clear(server.name);
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
          this.refusals.observe(server, state, previous);
          this.insights.observe(server.name, state);
          this.log.stateChange(server.name, state, previous);
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
   * Watches every configured server that nothing watches yet (never restarting it): the
   * steady state of each, one connection and one watch per server. The first end of each such
   * watch (the state found at the first look) is quiet. `skip` leaves out servers a front
   * cannot reach (e.g. `local` on the UI side of a remote window). The names now watched.
   */
  watchAll(skip: (server: ServerProfile) => boolean = () => false): string[] {
    const started: string[] = [];
    for (const server of this.servers) {
      const session = this.sessions.get(server.name);
      if (
        session?.watching ||
        this.sessions.creating(server.name) ||
        this.nextTick.isMoving(server.name) ||
        skip(server)
      )
        continue;
      // A host key the user refused (or that changed) is not asked about again behind their back.
      if (this.refusals.get(server.name)?.kind.startsWith('host-key')) continue;
      this.firstLook.add(server.name);
      started.push(server.name);
      void this.face.watch(server, true).catch((error) => {
        this.firstLook.delete(server.name);
        this.say(server.name, 'warn', cannotWatch(errorText(error)));
      });
    }
    return started;
  }

  private async onEnd(
    server: ServerProfile,
    session: FleetSession,
    outcome: WatchOutcome,
    quiet: boolean,
  ): Promise<void> {
    if (outcome.end === 'ready' || outcome.end === 'failed')
      await this.insights.record(server.name, server.unit, outcome);
    this.say(server.name, 'info', watchEndLine(session.watching, outcome.end, outcome.message));
    this.events.fire({ type: 'end', server, outcome, quiet });
    // Its settings changed during the load: go on watching on a session with the new ones.
    if (this.sessions.retireIfStale(session)) {
      const profile = this.server(server.name);
      if (profile && this.settings?.watchAfterReady && outcome.end !== 'cancelled')
        this.nextTick.later(() => void this.face.watch(profile, true));
    }
  }

  private onClosed(server: ServerProfile, session: FleetSession): void {
    this.sessions.closedWatch(session);
    this.events.fire({ type: 'watching', server, watching: false });
  }

  /** Ends the watch of a server (nothing on the host is touched); false when none ran. */
  stop(server: ServerProfile, reason = stoppedByUser()): boolean {
    return this.sessions.get(server.name)?.stop(reason) ?? false;
  }

  /** Stops every watch; the names of the servers that were watched. */
  stopAll(reason = stoppedByUser()): string[] {
    return this.sessions
      .all()
      .filter((s) => s.stop(reason))
      .map((s) => s.profile.name);
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
      snapshot: (s) => this.face.snapshot(s),
      onEvent: (l) => this.face.onEvent(l),
      sessionFor: (s) => this.sessionFor(s),
      watch: (s) => this.face.watch(s),
      say: (name, level, text) => this.log.say(name, level, text),
    };
  }

  /** Checks that reasoning and tool calling really work on the server; the summary is kept. */
  verifyParsers(server: ServerProfile, log: (line: string) => void): Promise<ParserVerification> {
    return this.verifications.verify(
      {
        connect: (s) => this.face.connect(s),
        status: (s, options) => this.status(s, options),
        fire: (event) => this.events.fire(event),
      },
      server,
      log,
    );
  }

  /**
   * The last `lines` lines of the unit's journal (read on the host) and of this fleet's own log
   * about the server, secrets masked. The journal part says why when it cannot be read.
   */
  logs(server: ServerProfile, lines: number): Promise<ServerLogs> {
    return this.log.withJournal(server, lines, () => this.face.connect(server));
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

  private restartHost(): RestartHost {
    const settings = () => this.requireSettings();
    return {
      snapshot: (s) => this.face.snapshot(s),
      onEvent: (l) => this.face.onEvent(l),
      // Read at each look: the settings may change while the user answers a question.
      get loadTimeoutMs() {
        return settings().loadTimeoutMs;
      },
      connect: (s) => this.face.connect(s),
      startWatch: (s, mode, unitBefore) => this.startWatch(s, mode, false, unitBefore),
    };
  }

  /** A line about one server: every front's log, and the server's own recent lines (`logs`). */
  private say(name: string, level: LogLevel, text: string): void {
    this.log.say(name, level, text);
  }

  private requireSettings(): Settings {
    if (!this.settings) throw new FleetError('settings', settingsNotValid());
    return this.settings;
  }

  dispose(): void {
    // Watches cancelled by the disposal are nobody's news.
    this.events.dispose();
    void this.forwards.dispose();
    this.nextTick.dispose();
    this.sessions.dispose();
  }
}

export { AlreadyWatchingError };
