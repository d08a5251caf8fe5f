import * as vscode from 'vscode';
import { errorText } from './util/errors';
import { activeProfile, parseSettings, type ServerProfile, type Settings } from './config';
import type { LoadState } from './monitor/loadState';
import { AlreadyWatchingError, ServerSession } from './monitor/session';
import type { WatchOptions, WatchOutcome } from './monitor/watcher';
import type { SessionUi } from './sessionFactory';
import { describe, endMessage, failureMessage, readyMessage } from './ui/messages';
import { LoadInsights, type LoadForecast } from './monitor/loadInsights';
import { dashboardModel, LoadSeries, type DashboardModel } from './ui/dashboardModel';
import { confirmRestart, warmThenReport } from './ui/restartDialog';
import { StatusBar } from './ui/statusBar';

const SHOW_LOG = 'Show log';
const RESUME = 'Resume watching';
const WATCHES_KEY = 'kimi.watchesUnderWay';

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
    private readonly state: vscode.Memento,
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
      if (!session) return;
      const forecast = await this.forecast(server, session);
      const choice = await confirmRestart(server, forecast);
      if (choice === 'cancel') return;
      if (choice === 'warm' && forecast?.modelPath) {
        const warmed = await warmThenReport(session, forecast.modelPath, this.log);
        if (!warmed) return;
      }
    }
    await this.watch(server, 'restart');
  }

  /** The load forecast for the confirmation; undefined when the host cannot be asked. */
  private async forecast(server: ServerProfile, session: ServerSession): Promise<LoadForecast | undefined> {
    try {
      await session.transport.connect();
    } catch (error) {
      this.log.warn(`[${server.name}] No load forecast: ${errorText(error)}`);
      return undefined;
    }
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
      this.sessions.set(server.name, session);
      return session;
    } finally {
      this.pendingSessions.delete(server.name);
    }
  }

  /** Restarts or attaches, watches in the background, tells the user how it ended. */
  async watch(server: ServerProfile, mode: 'restart' | 'attach'): Promise<WatchOutcome | undefined> {
    const session = await this.openSession(server);
    if (!session) return undefined;
    const settings = this.settings!;
    const options: WatchOptions = {
      pollIntervalMs: settings.pollIntervalMs,
      stallMs: settings.stallMs,
      loadTimeoutMs: settings.loadTimeoutMs,
      unreachableTimeoutMs: settings.unreachableTimeoutMs,
    };
    this.endNotes.delete(server.name);
    this.verification.delete(server.name);
    await this.rememberWatch(server.name, Date.now());
    this.log.info(`[${server.name}] ${mode === 'restart' ? 'Restarting' : 'Watching'} ${server.unit} on ${server.host ?? 'this machine'}`);
    let outcome: WatchOutcome;
    try {
      outcome = await session.watch(
        mode,
        options,
        { onState: (state, previous) => this.onState(server, state, previous) },
        this.insights.prior(server.name, server.unit),
      );
    } catch (error) {
      if (error instanceof AlreadyWatchingError) {
        this.refuseBusy(server, error.state);
        return undefined;
      }
      throw error;
    } finally {
      await this.rememberWatch(server.name, undefined);
      this.render();
    }
    await this.onEnd(server, session, outcome);
    return outcome;
  }

  /**
   * A window closed (or reloaded) during a watch leaves its mark; the next activation offers to
   * attach to the load that is still under way, without restarting anything.
   */
  private async offerToResume(): Promise<void> {
    const marks = this.state.get<Record<string, number>>(WATCHES_KEY, {});
    const servers = this.settings?.servers.filter((s) => marks[s.name] !== undefined) ?? [];
    await this.state.update(WATCHES_KEY, undefined);
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
    const marks = { ...this.state.get<Record<string, number>>(WATCHES_KEY, {}) };
    if (startedAt === undefined) delete marks[name];
    else marks[name] = startedAt;
    await this.state.update(WATCHES_KEY, Object.keys(marks).length > 0 ? marks : undefined);
  }

  /** The session of a server, or undefined after telling the user why there is none. */
  async openSession(server: ServerProfile): Promise<ServerSession | undefined> {
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

  /** The active server when it is configured and not being watched. */
  idleServer(): ServerProfile | undefined {
    const server = this.requireServer();
    if (!server) return undefined;
    const busy = this.sessions.get(server.name);
    if (busy?.watching) {
      this.refuseBusy(server, busy.state);
      return undefined;
    }
    return server;
  }

  private onState(server: ServerProfile, state: LoadState, previous: LoadState): void {
    this.seriesFor(server.name).observe(state, Date.now());
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

  private async onEnd(server: ServerProfile, session: ServerSession, outcome: WatchOutcome): Promise<void> {
    await this.insights.record(server.name, server.unit, outcome);
    this.log.info(`[${server.name}] Watch ended: ${outcome.end}${outcome.message ? ` (${outcome.message})` : ''}`);
    const note = endMessage(server, outcome);
    if (note && outcome.end !== 'stopped') this.endNotes.set(server.name, note);
    this.render();
    switch (outcome.end) {
      case 'ready':
        if (this.settings?.notifyWhenReady) void this.notify('info', readyMessage(server, outcome.state));
        if (this.settings?.verifyParsersWhenReady) await this.verifyParsers(server, session);
        break;
      case 'failed':
        void this.notify('error', failureMessage(server, outcome));
        break;
      case 'cancelled':
        break;
      default:
        if (note) void this.notify(outcome.end === 'stopped' ? 'info' : 'warn', note);
    }
  }

  async notify(kind: 'info' | 'warn' | 'error', message: string): Promise<void> {
    const show =
      kind === 'info' ? vscode.window.showInformationMessage : kind === 'warn' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
    const choice = await show(message, SHOW_LOG);
    if (choice === SHOW_LOG) this.showLog();
  }

  private refuseBusy(server: ServerProfile, state: LoadState | undefined): void {
    void vscode.window.showWarningMessage(
      `Kimi on ${server.name} is already being watched${state ? ` (${describe(state)})` : ''}. Nothing was restarted; run "Kimi: Stop polling" first.`,
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

  /** A session whose profile or connection settings changed is closed (unless it is watching). */
  private closeSessionsChangedBy(next: Settings): void {
    const previous = this.loadedSettings;
    for (const [name, session] of this.sessions) {
      const profile = next.servers.find((s) => s.name === name);
      const same =
        profile !== undefined &&
        JSON.stringify(profile) === JSON.stringify(session.profile) &&
        previous?.knownHostsFile === next.knownHostsFile &&
        previous?.hostKeyPolicy === next.hostKeyPolicy;
      if (!same && !session.watching) {
        session.dispose();
        this.sessions.delete(name);
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
      endNote: server ? this.endNotes.get(server.name) : undefined,
      verification: server ? this.verification.get(server.name) : undefined,
      configError: this.settings ? undefined : this.settingsErrors[0],
    });
  }

  dispose(): void {
    this.disposed = true;
    for (const session of this.sessions.values()) session.dispose();
    this.sessions.clear();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.changed.dispose();
  }
}
