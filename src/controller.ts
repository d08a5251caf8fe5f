import * as vscode from 'vscode';
import { errorText } from './util/errors';
import { activeProfile, localHostRefusal, parseSettings, type ServerProfile, type Settings } from './config';
import type { LoadState } from './monitor/loadState';
import { AlreadyWatchingError, ServerSession } from './monitor/session';
import type { WatchAlert, WatchOptions, WatchOutcome } from './monitor/watcher';
import { TransportError } from './remote/transport';
import { refusalMessage, type Refusal } from './ui/refusals';
import type { SessionUi } from './sessionFactory';
import { describe, endMessage, failureMessage, readyMessage } from './ui/messages';
import { LoadInsights, type LoadForecast } from './monitor/loadInsights';
import { dashboardModel, LoadSeries, type DashboardModel } from './ui/dashboardModel';
import { confirmRestart, warmThenReport } from './ui/restartDialog';
import { StatusBar } from './ui/statusBar';
import type { ApiKeys } from './ui/apiKeys';
import { maskSecrets } from './util/secrets';

const SHOW_LOG = 'Show log';
const OPEN_KNOWN_HOSTS = 'Open known_hosts';
const RESUME = 'Resume watching';
const WATCHES_KEY = 'kimi.watchesUnderWay';
/** The same failure is not notified again within this long (a crash loop followed by a steady watch). */
const REPEAT_FAILURE_QUIET_MS = 10 * 60_000;

/**
 * The commands' behaviour: settings, one session per server, and what the user sees.
 * Sessions (and their SSH connections) are rebuilt when the settings change.
 */
export class Controller implements vscode.Disposable {
  private loadedSettings: Settings | undefined;
  private settingsLoaded = false;
  private settingsErrors: readonly string[] = [];
  private readonly sessions = new Map<string, ServerSession>();
  private disposed = false;
  private readonly pendingSessions = new Map<string, Promise<ServerSession>>();
  private readonly endNotes = new Map<string, string>();
  /** Why the last connection to a server was refused (host key, auth, DNS...), until one succeeds. */
  private readonly refusals = new Map<string, Refusal>();
  private readonly lastFailureNotice = new Map<string, { text: string; at: number }>();
  private readonly journalWarned = new Set<string>();
  /** Sessions whose settings changed during a load: replaced once that load ends. */
  private readonly staleSessions = new Set<ServerSession>();
  private readonly verification = new Map<string, string>();
  private readonly series = new Map<string, LoadSeries>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when anything the dashboard shows may have changed. */
  readonly onDidChange = this.changed.event;
  private readonly insights: LoadInsights;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly statusBar: StatusBar,
    private readonly ui: SessionUi,
    state: vscode.Memento,
    /** Per window: which watches were under way when it closed. */
    private readonly windowState: vscode.Memento,
    private readonly apiKeys?: ApiKeys,
    /** The remote's name when this extension runs on the UI side of a remote window. */
    private readonly uiSideOfRemote?: string,
  ) {
    this.insights = new LoadInsights(state);
    // Settings are validated (and a watch cut short by a window reload is offered back) right
    // after activation rather than during it; a command that comes first validates on demand.
    const timer = setTimeout(() => void this.offerToResume(), 0);
    this.disposables.push({ dispose: () => clearTimeout(timer) });
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('kimi')) this.loadSettings();
      }),
    );
  }

  async restart(): Promise<void> {
    const server = this.idleServer();
    if (!server) return;
    if (this.settings?.confirmRestart) {
      const session = await this.openSession(server);
      // A refused connection (host key, auth, DNS...) is said first: no confirmation to answer for nothing.
      if (!session || !(await this.connect(server, session))) return;
      const forecast = await this.forecast(server, session);
      const choice = await confirmRestart(server, forecast);
      if (choice === 'cancel') return;
      if (choice === 'warm' && forecast?.modelPath) {
        // The steady watch gives its channels to the warm-up (the restart's watch replaces it anyway).
        const wasWatching = session.stop('warming the page cache before a restart');
        const warmed = await warmThenReport(session, forecast.modelPath, this.log);
        if (!warmed) {
          if (wasWatching) void this.watch(server, 'attach', true);
          return;
        }
      }
    }
    await this.watch(server, 'restart');
  }

  /** Connects; a refusal is told loudly (notification, status bar) and false returned. */
  async connect(server: ServerProfile, session: ServerSession): Promise<boolean> {
    try {
      await session.transport.connect();
      this.clearRefusal(server);
      return true;
    } catch (error) {
      if (error instanceof TransportError) this.onRefused(server, error);
      else void this.notify('error', `Kimi on ${server.name}: cannot connect: ${errorText(error)}`);
      return false;
    }
  }

  /** The load forecast for the confirmation. */
  private async forecast(server: ServerProfile, session: ServerSession): Promise<LoadForecast | undefined> {
    const forecast = await this.insights.forecast(session.transport, server.name, server.unit);
    if (forecast.text) this.log.info(`[${server.name}] Forecast: ${forecast.text}`);
    if (forecast.warning) this.log.warn(`[${server.name}] ${forecast.warning}`);
    return forecast;
  }

  async poll(): Promise<void> {
    const server = this.idleServer();
    if (server) await this.watch(server, 'attach');
  }

  async verifyParsersCommand(): Promise<void> {
    const server = this.requireServer();
    const session = server && (await this.openSession(server));
    if (server && session) await this.verifyParsers(server, session);
  }

  stopPolling(): void {
    const stopped = [...this.sessions.values()].filter((s) => s.stop('stopped by the user'));
    if (stopped.length === 0) void vscode.window.showInformationMessage('Kimi: nothing is being watched.');
    else this.log.info(`Stopped watching ${stopped.map((s) => s.profile.name).join(', ')}.`);
  }

  showLog(): void {
    this.log.show(true);
  }

  async selectServer(): Promise<void> {
    if (!this.settings) return this.reportSettingsErrors();
    if (this.settings.servers.length === 0) return this.reportNoServers();
    const active = activeProfile(this.settings);
    const picked = await vscode.window.showQuickPick(
      this.settings.servers.map((s) => ({
        label: s.name,
        description: `${s.host ?? 'local'} · ${s.unit}`,
        detail: this.sessions.get(s.name)?.state ? describe(this.sessions.get(s.name)!.state!) : undefined,
        picked: s.name === active?.name,
      })),
      { title: 'Kimi: select the server to act on' },
    );
    if (!picked) return;
    await vscode.workspace.getConfiguration('kimi').update('activeServer', picked.label, vscode.ConfigurationTarget.Global);
  }

  /** The session of a server, created on first use. */
  async sessionFor(server: ServerProfile): Promise<ServerSession> {
    const existing = this.sessions.get(server.name);
    if (existing) return existing;
    let pending = this.pendingSessions.get(server.name);
    if (!pending) {
      // ssh2 and node-fetch load with the first session, not with the extension.
      pending = import('./sessionFactory').then(({ createSession }) =>
        createSession(server, this.settings!, this.ui, (level, message) => this.log[level](message)),
      );
      this.pendingSessions.set(server.name, pending);
    }
    try {
      const session = await pending;
      const apiKey = await this.apiKeys?.get(server.name);
      if (apiKey) session.client.setApiKey(apiKey);
      this.sessions.set(server.name, session);
      return session;
    } finally {
      this.pendingSessions.delete(server.name);
    }
  }

  /**
   * Restarts or attaches and watches in the background; resolves with how the load ended. With
   * kimi.watchAfterReady the watch goes on after that, and what it sees is told as it comes.
   */
  async watch(server: ServerProfile, mode: 'restart' | 'attach', quiet = false): Promise<WatchOutcome | undefined> {
    const session = await this.openSession(server);
    if (!session) return undefined;
    const settings = this.settings!;
    const options: WatchOptions = {
      pollIntervalMs: settings.pollIntervalMs,
      stallMs: settings.stallMs,
      loadTimeoutMs: settings.loadTimeoutMs,
      unreachableTimeoutMs: settings.unreachableTimeoutMs,
      ...(settings.watchAfterReady ? { steadyIntervalMs: settings.healthIntervalMs } : {}),
    };
    this.endNotes.delete(server.name);
    if (!quiet) this.verification.delete(server.name);
    await this.rememberWatch(server.name, Date.now());
    this.log.info(`[${server.name}] ${mode === 'restart' ? 'Restarting' : 'Watching'} ${server.unit} on ${server.host ?? 'this machine'}`);
    let first = true;
    try {
      return await session.watch(
        mode,
        options,
        {
          onState: (state, previous) => this.onState(server, state, previous),
          onAlert: (alert) => this.onAlert(server, alert),
          onEnd: (outcome) => {
            const quietEnd = quiet && first && outcome.end === 'ready';
            // Only a load under way is offered back after a window reload, not a steady watch.
            if (first) void this.rememberWatch(server.name, undefined);
            first = false;
            void this.onEnd(server, session, outcome, quietEnd);
          },
          onClosed: () => void this.onClosed(server, session),
        },
        this.insights.prior(server.name, server.unit),
      );
    } catch (error) {
      if (error instanceof AlreadyWatchingError) {
        this.refuseBusy(server, error.state);
        return undefined;
      }
      throw error;
    } finally {
      this.render();
    }
  }

  /** The load that kept an outdated session ended: go on watching on a session with the new settings. */
  private replaceStaleSession(server: ServerProfile, session: ServerSession, outcome: WatchOutcome): void {
    if (this.sessions.get(server.name) === session) this.sessions.delete(server.name);
    session.stop('settings changed');
    const profile = this.settings?.servers.find((s) => s.name === server.name);
    if (!profile || !this.settings?.watchAfterReady || outcome.end === 'cancelled') return;
    const timer = setTimeout(() => void this.watch(profile, 'attach', true), 0);
    this.disposables.push({ dispose: () => clearTimeout(timer) });
  }

  /** The watch of a server is over for good. */
  private async onClosed(server: ServerProfile, session: ServerSession): Promise<void> {
    await this.rememberWatch(server.name, undefined);
    if (this.staleSessions.delete(session)) {
      // Its settings changed during the load: the next watch uses the new ones.
      session.dispose();
      if (this.sessions.get(server.name) === session) this.sessions.delete(server.name);
    }
    this.render();
  }

  /**
   * A window closed (or reloaded) during a watch leaves its mark; the next activation offers to
   * attach to the load that is still under way, without restarting anything.
   */
  private async offerToResume(): Promise<void> {
    const marks = this.windowState.get<Record<string, number>>(WATCHES_KEY, {});
    const servers = this.settings?.servers.filter((s) => marks[s.name] !== undefined) ?? [];
    await this.windowState.update(WATCHES_KEY, undefined);
    for (const server of servers) {
      const choice = await vscode.window.showInformationMessage(
        `Kimi on ${server.name} was being watched when the window closed. Resume watching (nothing is restarted)?`,
        RESUME,
      );
      if (choice === RESUME) void this.watch(server, 'attach');
    }
  }

  private async rememberWatch(name: string, startedAt: number | undefined): Promise<void> {
    // A watch cancelled because the window closes is still under way on the host: keep its mark.
    if (this.disposed) return;
    const marks = { ...this.windowState.get<Record<string, number>>(WATCHES_KEY, {}) };
    if (startedAt === undefined) delete marks[name];
    else marks[name] = startedAt;
    await this.windowState.update(WATCHES_KEY, Object.keys(marks).length > 0 ? marks : undefined);
  }

  /** The session of a server, or undefined after telling the user why there is none. */
  async openSession(server: ServerProfile): Promise<ServerSession | undefined> {
    const refusal = localHostRefusal(server, this.uiSideOfRemote);
    if (refusal) {
      this.log.error(`[${server.name}] ${refusal}`);
      void this.notify('error', `Kimi: ${refusal}`);
      return undefined;
    }
    try {
      return await this.sessionFor(server);
    } catch (error) {
      const message = errorText(error);
      this.log.error(`[${server.name}] Cannot set up the connection: ${message}`);
      void this.notify('error', `Kimi on ${server.name}: cannot set up the connection: ${message}`);
      return undefined;
    }
  }

  /** Checks that reasoning and tool calling really work on the server, and reports it. */
  async verifyParsers(server: ServerProfile, session: ServerSession): Promise<void> {
    const log = (line: string) => this.log.info(`[${server.name}] ${line}`);
    try {
      const { verifyServer } = await import('./verify/serverVerification');
      const { formatTable, summarize } = await import('./verify/verifier');
      const result = await verifyServer(session.transport, session.client, server.unit, log);
      for (const line of formatTable(result).split('\n')) log(line);
      const summary = summarize(result);
      this.verification.set(server.name, summary);
      this.render();
      this.changed.fire();
      if (result.allPassed) void vscode.window.showInformationMessage(`Kimi on ${server.name}: ${summary}`);
      else void this.notify('warn', `Kimi on ${server.name}: ${summary}`);
    } catch (error) {
      const message = errorText(error);
      this.log.warn(`[${server.name}] Parser verification could not run: ${message}`);
      this.verification.set(server.name, `not verified (${message})`);
      this.render();
    }
  }

  /** The active server (invalid settings or none configured are reported, and give undefined). */
  activeServerProfile(): ServerProfile | undefined {
    return this.requireServer();
  }

  /** The active server when it is configured and not being watched. */
  idleServer(): ServerProfile | undefined {
    const server = this.requireServer();
    if (!server) return undefined;
    const busy = this.sessions.get(server.name);
    if (busy?.busy) {
      this.refuseBusy(server, busy.state);
      return undefined;
    }
    return server;
  }

  private onState(server: ServerProfile, state: LoadState, previous: LoadState): void {
    this.seriesFor(server.name).observe(state, Date.now());
    if (state.connected && !previous.connected) this.clearRefusal(server);
    else if (!state.connected && state.connectionErrorKind !== previous.connectionErrorKind && state.connectionErrorKind) {
      this.onRefused(server, new TransportError(state.connectionErrorKind as TransportError['kind'], state.connectionError ?? 'connection lost'));
    }
    this.changed.fire();
    if (state.verdict !== previous.verdict || state.phase !== previous.phase) {
      const why = state.lastSignal ? ` — ${state.lastSignal.text}` : '';
      const line = `[${server.name}] ${describe(state)}${why}`;
      if (state.verdict === 'failed' || state.verdict === 'unreachable') this.log.error(line);
      else if (state.verdict === 'stalled') this.log.warn(line);
      else this.log.info(line);
    } else if (state.lastSignal !== previous.lastSignal && state.lastSignal) {
      this.log.debug(`[${server.name}] ${state.lastSignal.text}`);
    }
    if (server.name === this.activeServer()?.name) this.render();
  }

  private async onEnd(server: ServerProfile, session: ServerSession, outcome: WatchOutcome, quiet: boolean): Promise<void> {
    await this.reportEnd(server, session, outcome, quiet);
    if (this.staleSessions.has(session) && session.watching) this.replaceStaleSession(server, session, outcome);
  }

  private async reportEnd(server: ServerProfile, session: ServerSession, outcome: WatchOutcome, quiet: boolean): Promise<void> {
    if (outcome.end === 'ready' || outcome.end === 'failed') await this.insights.record(server.name, server.unit, outcome);
    this.log.info(`[${server.name}] ${session.watching ? 'Load ended' : 'Watch ended'}: ${outcome.end}${outcome.message ? ` (${outcome.message})` : ''}`);
    const note = endMessage(server, outcome);
    if (note && outcome.end !== 'stopped') this.endNotes.set(server.name, note);
    this.render();
    switch (outcome.end) {
      case 'ready':
        if (quiet) break;
        if (this.settings?.notifyWhenReady) void this.notify('info', readyMessage(server, outcome.state));
        if (this.settings?.verifyParsersWhenReady) await this.verifyParsers(server, session);
        break;
      case 'failed':
        this.notifyFailure(server, failureMessage(server, outcome));
        break;
      case 'cancelled':
        break;
      case 'unreachable':
        // A refusal (host key, auth...) has been said already, with its own buttons.
        if (!this.refusals.has(server.name) && note) void this.notify('warn', note);
        break;
      default:
        if (note) void this.notify(outcome.end === 'stopped' ? 'info' : 'warn', note);
    }
  }

  /** A failure is notified once; the same cause again soon after (a crash loop) goes to the log only. */
  private notifyFailure(server: ServerProfile, message: string): void {
    const last = this.lastFailureNotice.get(server.name);
    const now = Date.now();
    if (last && last.text === message && now - last.at < REPEAT_FAILURE_QUIET_MS) return;
    this.lastFailureNotice.set(server.name, { text: message, at: now });
    void this.notify('error', message);
  }

  private onAlert(server: ServerProfile, alert: WatchAlert): void {
    this.render();
    // An unreadable journal is said once per window, not at every restart.
    if (alert.kind === 'journal') {
      if (this.journalWarned.has(server.name)) return;
      this.journalWarned.add(server.name);
    }
    if (alert.kind === 'recovered') {
      void vscode.window.showInformationMessage(`Kimi on ${server.name}: ${alert.message}`);
      return;
    }
    void this.notify(alert.level === 'info' ? 'info' : alert.level, `Kimi on ${server.name}: ${alert.message}`);
  }

  /** A refused connection: a notification with what to do, and the status bar says it. */
  private onRefused(server: ServerProfile, error: TransportError): void {
    const refusal: Refusal = { kind: error.kind, message: error.message, ...(error.hostKeyChange ? { hostKeyChange: error.hostKeyChange } : {}) };
    const previous = this.refusals.get(server.name);
    this.refusals.set(server.name, refusal);
    this.log.error(`[${server.name}] ${error.message}`);
    this.render();
    if (previous?.kind === refusal.kind && previous.message === refusal.message) return;
    const { text, openKnownHosts } = refusalMessage(server.name, refusal);
    const buttons = openKnownHosts ? [SHOW_LOG, OPEN_KNOWN_HOSTS] : [SHOW_LOG];
    void vscode.window.showErrorMessage(text, ...buttons).then(async (choice) => {
      if (choice === SHOW_LOG) this.showLog();
      if (choice === OPEN_KNOWN_HOSTS && openKnownHosts) {
        const document = await vscode.workspace.openTextDocument(vscode.Uri.file(openKnownHosts.file));
        const line = Math.max(0, (openKnownHosts.line ?? 1) - 1);
        await vscode.window.showTextDocument(document, { selection: new vscode.Range(line, 0, line, 0) });
      }
    });
  }

  private clearRefusal(server: ServerProfile): void {
    if (this.refusals.delete(server.name)) this.render();
  }

  /** "Kimi: Set server API key": stored in SecretStorage, used at once by the live session. */
  async setApiKey(): Promise<void> {
    const server = this.requireServer();
    if (!server || !this.apiKeys) return;
    const answer = await this.apiKeys.ask(server.name);
    if (!answer) return;
    this.sessions.get(server.name)?.client.setApiKey(answer.key);
    this.log.info(`[${server.name}] API key ${answer.key ? 'set' : 'removed'} (kept in VS Code's secret storage).`);
  }

  async notify(kind: 'info' | 'warn' | 'error', message: string): Promise<void> {
    const show =
      kind === 'info' ? vscode.window.showInformationMessage : kind === 'warn' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
    const choice = await show(maskSecrets(message, [...(this.apiKeys?.known ?? [])]), SHOW_LOG);
    if (choice === SHOW_LOG) this.showLog();
  }

  private refuseBusy(server: ServerProfile, state: LoadState | undefined): void {
    void vscode.window.showWarningMessage(
      `Kimi on ${server.name} is loading${state ? ` (${describe(state)})` : ''}. Nothing was restarted; wait for the load, or run "Kimi: Stop polling" first.`,
    );
  }

  private requireServer(): ServerProfile | undefined {
    if (!this.settings) {
      this.reportSettingsErrors();
      return undefined;
    }
    const server = activeProfile(this.settings);
    if (!server) this.reportNoServers();
    return server;
  }

  private reportSettingsErrors(): void {
    const first = this.settingsErrors[0] ?? 'unknown error';
    const more = this.settingsErrors.length > 1 ? ` (and ${this.settingsErrors.length - 1} more: see the log)` : '';
    void vscode.window.showErrorMessage(`Kimi: invalid settings: ${first}${more}`, 'Open Settings').then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'kimi.');
    });
  }

  private reportNoServers(): void {
    void vscode.window.showErrorMessage('Kimi: no server is configured. Add one to the setting kimi.servers.', 'Open Settings').then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'kimi.servers');
    });
  }

  /** What the load dashboard shows: the active server's load. */
  dashboard(): DashboardModel {
    const server = this.activeServer();
    return dashboardModel({
      server: server?.name,
      state: server ? this.sessions.get(server.name)?.state : undefined,
      series: server ? this.seriesFor(server.name).points() : [],
      verification: server ? this.verification.get(server.name) : undefined,
      now: Date.now(),
    });
  }

  private seriesFor(name: string): LoadSeries {
    let series = this.series.get(name);
    if (!series) {
      series = new LoadSeries();
      this.series.set(name, series);
    }
    return series;
  }

  private activeServer(): ServerProfile | undefined {
    return this.settings ? activeProfile(this.settings) : undefined;
  }

  private get settings(): Settings | undefined {
    if (!this.settingsLoaded) this.loadSettings();
    return this.loadedSettings;
  }

  private loadSettings(): void {
    this.settingsLoaded = true;
    const config = vscode.workspace.getConfiguration('kimi');
    const keys = [
      'servers', 'activeServer', 'knownHostsFile', 'hostKeyPolicy', 'confirmRestart', 'pollIntervalSeconds',
      'loadTimeoutMinutes', 'stallSeconds', 'unreachableTimeoutMinutes', 'notifyWhenReady', 'verifyParsersWhenReady',
      'watchAfterReady', 'healthIntervalSeconds',
    ];
    const raw: Record<string, unknown> = {};
    for (const key of keys) {
      const value = config.get(key);
      if (value !== undefined) raw[key] = value;
    }
    const result = parseSettings(raw);
    if (result.ok) {
      this.closeSessionsChangedBy(result.settings);
      this.loadedSettings = result.settings;
      this.settingsErrors = [];
    } else {
      this.loadedSettings = undefined;
      this.settingsErrors = result.errors;
      for (const error of result.errors) this.log.error(`Invalid setting: ${error}`);
    }
    this.render();
  }

  /**
   * A session whose profile or connection settings changed is replaced: at once when it is idle
   * or under steady watch (the watch goes on, on a new session), after its load when it loads
   * (the running watch finishes on the old settings; the next command uses the new ones).
   */
  private closeSessionsChangedBy(next: Settings): void {
    const previous = this.loadedSettings;
    if (!previous) return;
    const watchSettings = (s: Settings) => [s.pollIntervalMs, s.stallMs, s.loadTimeoutMs, s.unreachableTimeoutMs, s.watchAfterReady, s.healthIntervalMs].join();
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
        this.staleSessions.add(session);
        continue;
      }
      this.sessions.delete(name);
      const wasWatching = session.watching;
      session.dispose();
      if (wasWatching && profile && next.watchAfterReady) {
        const timer = setTimeout(() => void this.watch(profile, 'attach', true), 0);
        this.disposables.push({ dispose: () => clearTimeout(timer) });
      }
    }
  }

  private render(): void {
    const server = this.activeServer();
    const session = server ? this.sessions.get(server.name) : undefined;
    this.statusBar.update({
      server,
      state: session?.state,
      watching: session?.watching ?? false,
      refusal: server ? this.refusals.get(server.name) : undefined,
      endNote: server ? this.endNotes.get(server.name) : undefined,
      verification: server ? this.verification.get(server.name) : undefined,
      configError: this.settings ? undefined : this.settingsErrors[0],
    });
  }

  dispose(): void {
    this.disposed = true;
    for (const session of [...this.sessions.values(), ...this.staleSessions]) session.dispose();
    this.sessions.clear();
    this.staleSessions.clear();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.changed.dispose();
  }
}
