import * as vscode from 'vscode';
import { offerAdviceAfterReady } from './adviceActions';
import { errorText } from '../../util/errors';
import { activeProfile, localHostRefusal, type ServerProfile, type Settings } from '../../config/config';
import { Fleet, type FleetEvent } from '../../fleet/fleet';
import type { LoadState } from '../../monitor/loadState';
import type { FleetSession, RestartResult } from '../../fleet/fleet';
import type { WatchOutcome } from '../../monitor/watcher';
import { TransportError } from '../../transport/transport';
import { NotReadyError } from '../../fleet/fleetError';
import { serverReport } from '../../fleet/report';
import { refusalMessage } from '../../present/refusals';
import type { SessionUi } from '../../fleet/sessionFactory';
import { describe, endMessage, failureMessage, readyMessage } from '../../present/messages';
import { stallNotice } from '../../present/stallNotice';
import type { LoadForecast } from '../../monitor/loadInsights';
import { dashboardModel, LoadSeries, type DashboardModel } from './dashboardModel';
import { confirmRestart, followOrRestart, warmThenReport } from './restartDialog';
import { StatusBar } from './statusBar';
import { otherServers } from './statusOthers';
import { rollingRestartCommand } from './rollingRestartCommand';
import { addServerCommand } from './addServer';
import type { ApiKeys } from './apiKeys';
import { maskSecrets } from '../../util/secrets';
import { readKimiSettings, reportNoServers, reportSettingsErrors } from './settingsSource';
import { NoticeGate } from '../../fleet/notices';
import { BackgroundWatches } from '../../fleet/backgroundWatches';
import { resolveServer } from '../../fleet/resolveServer';
import { serverChoiceText } from '../../present/serverChoice';

const SHOW_LOG = 'Show log';
const OPEN_KNOWN_HOSTS = 'Open known_hosts';
const RESUME = 'Resume watching';
const FORWARD_PORT = 'Forward port';

/**
 * The VS Code shell over the fleet: settings from the configuration, the commands' dialogs, and
 * what the user sees (status bar, log channel, notifications, dashboard). What the servers do
 * lives in the fleet (src/fleet), which the other fronts share.
 */
export class Controller implements vscode.Disposable {
  readonly fleet: Fleet;
  private loadedSettings: Settings | undefined;
  private settingsLoaded = false;
  private settingsErrors: readonly string[] = [];
  private disposed = false;
  private readonly endNotes = new Map<string, string>();
  private readonly notices = new NoticeGate();
  private readonly background: BackgroundWatches;
  private readonly series = new Map<string, LoadSeries>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when anything the dashboard shows may have changed. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  /** Servers in a rolling restart: the roll checks their parsers itself. */
  private readonly rolling = new Set<string>();

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly statusBar: StatusBar,
    private readonly ui: SessionUi,
    private readonly state: vscode.Memento,
    /** Per window: which watches were under way when it closed. */
    windowState: vscode.Memento,
    private readonly apiKeys?: ApiKeys,
    /** The remote's name when this extension runs on the UI side of a remote window. */
    private readonly uiSideOfRemote?: string,
  ) {
    this.fleet = new Fleet({
      ui,
      log: (level, message) => this.log[level](message),
      history: state,
      ...(apiKeys ? { apiKey: (name: string) => apiKeys.get(name) } : {}),
    });
    this.background = new BackgroundWatches(
      this.fleet,
      windowState,
      (s) => localHostRefusal(s, this.uiSideOfRemote) !== undefined,
    );
    this.disposables.push(this.fleet.onEvent((event) => this.onFleetEvent(event)));
    // Settings are validated (and a watch cut short by a window reload is offered back) right
    // after activation rather than during it; a command that comes first validates on demand.
    const timer = setTimeout(() => void this.offerToResume(), 0);
    this.disposables.push({ dispose: () => clearTimeout(timer) });
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('kimiService')) this.loadSettings();
      }),
    );
  }

  /**
   * "Kimi Service: Restart": the fleet's restart verb, as every front. A load under way is followed, or
   * restarted anyway, as the user chooses; otherwise the confirmation (kimiService.confirmRestart).
   */
  async restart(target?: string): Promise<void> {
    const server = this.requireServer(target);
    if (!server) return;
    this.background.commanded(server.name);
    // A refused connection (host key, auth, DNS...) is said first: no dialog to answer for nothing.
    const session = await this.openSession(server);
    if (!session || !(await this.connect(server))) return;
    let result: RestartResult | undefined;
    try {
      result = await this.fleet.restartAsking(server, {
        choose: (reason) => followOrRestart(server, reason),
        ...(this.settings?.confirmRestart ? { confirm: () => this.confirmRestart(server, session) } : {}),
      });
    } catch (error) {
      // A refused connection has been said already (the fleet's `refused` event).
      if (!(error instanceof TransportError))
        void this.notify('error', `Kimi on ${server.name}: cannot restart: ${errorText(error)}`);
      return;
    } finally {
      this.render();
    }
    if (!result) return;
    if (result.kind === 'attached') this.log.info(`[${server.name}] Not restarted: ${result.reason}.`);
    try {
      await result.outcome;
    } finally {
      this.render();
    }
  }

  /** The confirmation with the forecast, and the page cache warmed first when asked; false: nothing is restarted. */
  private async confirmRestart(server: ServerProfile, session: FleetSession): Promise<boolean> {
    const forecast = await this.forecast(server);
    const choice = await confirmRestart(server, forecast);
    if (choice === 'cancel') return false;
    if (choice === 'warm' && forecast?.modelPath) {
      // The steady watch gives its channels to the warm-up (the restart's watch replaces it anyway).
      const wasWatching = this.fleet.stop(server, 'warming the page cache before a restart');
      const warmed = await warmThenReport(session, forecast.modelPath, this.log);
      if (!warmed) {
        if (wasWatching) void this.watch(server, 'attach', true);
        return false;
      }
    }
    return true;
  }

  /** Connects; a refusal is told loudly (the fleet's `refused` event) and false returned. */
  async connect(server: ServerProfile): Promise<boolean> {
    try {
      await this.fleet.connect(server);
      return true;
    } catch (error) {
      if (!(error instanceof TransportError))
        void this.notify('error', `Kimi on ${server.name}: cannot connect: ${errorText(error)}`);
      return false;
    }
  }

  /** The load forecast for the confirmation. */
  private async forecast(server: ServerProfile): Promise<LoadForecast | undefined> {
    try {
      const forecast = await this.fleet.forecast(server);
      if (forecast.text) this.log.info(`[${server.name}] Forecast: ${forecast.text}`);
      if (forecast.warning) this.log.warn(`[${server.name}] ${forecast.warning}`);
      return forecast;
    } catch (error) {
      this.log.warn(`[${server.name}] No load forecast: ${errorText(error)}`);
      return undefined;
    }
  }

  async poll(target?: string): Promise<void> {
    const server = this.idleServer(target);
    if (server) await this.watch(server, 'attach');
  }

  async verifyParsersCommand(target?: string): Promise<void> {
    const server = this.requireServer(target);
    const session = server && (await this.openSession(server));
    if (server && session) await this.verifyParsers(server);
  }

  /** Stops the watch of one server, or of every server without a target. */
  stopPolling(target?: string): void {
    if (target !== undefined) {
      const server = this.requireServer(target);
      if (!server) return;
      this.background.stoppedBy([server.name]);
      if (this.fleet.stop(server)) this.log.info(`Stopped watching ${server.name}.`);
      else void vscode.window.showInformationMessage(`Kimi: ${server.name} is not being watched.`);
      return;
    }
    const stopped = this.fleet.stopAll();
    this.background.stoppedBy(stopped);
    if (stopped.length === 0) void vscode.window.showInformationMessage('Kimi: nothing is being watched.');
    else this.log.info(`Stopped watching ${stopped.join(', ')}.`);
  }

  showLog(): void {
    this.log.show(true);
  }

  /** "Kimi Service: Restart servers one by one" (a row's server preselected when run from the view). */
  async rollingRestart(target?: string): Promise<void> {
    const settings = this.settings;
    if (!settings) return this.reportSettingsErrors();
    if (target !== undefined && !this.requireServer(target)) return;
    await rollingRestartCommand(
      {
        fleet: this.fleet,
        settings,
        activeName: activeProfile(settings)?.name,
        log: this.log,
        during: async (names, run) => {
          for (const name of names) this.rolling.add(name);
          try {
            return await run();
          } finally {
            for (const name of names) this.rolling.delete(name);
          }
        },
      },
      target,
    );
  }

  /** "Kimi Service: Add server": a host, one of its SGLang units, a name; written to the user's kimiService.servers. */
  addServer(): Promise<void> {
    return addServerCommand(this.ui, this.log);
  }

  /** The name of the active server, if the settings are valid and name one. */
  activeServerName(): string | undefined {
    return this.activeServer()?.name;
  }

  /** "Make active": the server the status bar, the dashboard and the commands without a target use. */
  async makeActive(target?: string): Promise<void> {
    if (target === undefined) return this.selectServer();
    const server = this.requireServer(target);
    if (!server) return;
    await vscode.workspace
      .getConfiguration('kimiService')
      .update('activeServer', server.name, vscode.ConfigurationTarget.Global);
  }

  /** Every configured server under steady watch (kimiService.watchAfterReady), as BackgroundWatches decides. */
  private watchInBackground(offeredBack: ReadonlySet<string> = new Set()): void {
    if (this.disposed) return;
    const started = this.background.start(this.loadedSettings, offeredBack);
    this.notices.watchedInBackground(started);
    if (started.length > 0) this.log.info(`Watching in the background: ${started.join(', ')}.`);
  }

  async selectServer(): Promise<void> {
    if (!this.settings) return this.reportSettingsErrors();
    if (this.settings.servers.length === 0) return reportNoServers();
    const active = activeProfile(this.settings);
    const picked = await vscode.window.showQuickPick(
      this.fleet.snapshots().map(({ server, state }) => ({
        label: server.name,
        description: `${server.host ?? 'local'} · ${server.unit}`,
        detail: state ? describe(state) : undefined,
        picked: server.name === active?.name,
      })),
      { title: 'Kimi: select the server to act on' },
    );
    if (!picked) return;
    await vscode.workspace
      .getConfiguration('kimiService')
      .update('activeServer', picked.label, vscode.ConfigurationTarget.Global);
  }

  /**
   * Restarts or attaches and watches in the background; resolves with how the load ended. With
   * kimiService.watchAfterReady the watch goes on after that, and what it sees is told as it comes.
   */
  async watch(server: ServerProfile, mode: 'restart' | 'attach', quiet = false): Promise<WatchOutcome | undefined> {
    this.background.commanded(server.name);
    if (!(await this.openSession(server))) return undefined;
    const snapshot = this.fleet.snapshot(server);
    if (snapshot.loading) {
      this.refuseBusy(server, snapshot.state);
      return undefined;
    }
    try {
      return await this.fleet.watch(server, mode, quiet);
    } finally {
      this.render();
    }
  }

  /**
   * A window closed (or reloaded) during a watch leaves its mark; the next activation offers to
   * attach to the load that is still under way, without restarting anything.
   */
  private async offerToResume(): Promise<void> {
    const servers = await this.background.takeOffers(this.settings);
    this.watchInBackground(new Set(servers.map((s) => s.name)));
    for (const server of servers) {
      const choice = await vscode.window.showInformationMessage(
        `Kimi on ${server.name} was being watched when the window closed. Resume watching (nothing is restarted)?`,
        RESUME,
      );
      if (choice === RESUME) void this.watch(server, 'attach');
    }
  }

  /** The session of a server, or undefined after telling the user why there is none. */
  async openSession(server: ServerProfile): Promise<FleetSession | undefined> {
    const refusal = localHostRefusal(server, this.uiSideOfRemote);
    if (refusal) {
      this.log.error(`[${server.name}] ${refusal}`);
      void this.notify('error', `Kimi: ${refusal}`);
      return undefined;
    }
    try {
      return await this.fleet.sessionFor(server);
    } catch (error) {
      const message = errorText(error);
      this.log.error(`[${server.name}] Cannot set up the connection: ${message}`);
      void this.notify('error', `Kimi on ${server.name}: cannot set up the connection: ${message}`);
      return undefined;
    }
  }

  /** Checks that reasoning and tool calling really work on the server, and reports it. */
  async verifyParsers(server: ServerProfile, afterReady = false): Promise<void> {
    const log = (line: string) => this.log.info(`[${server.name}] ${line}`);
    try {
      const result = await this.fleet.verifyParsers(server, log);
      for (const line of result.table.split('\n')) log(line);
      const { readySummary } = await import('../../verify/report');
      // "ready, parsers verified for agents (N checks)" only when every check passed.
      const message = `Kimi on ${server.name}: ${afterReady ? readySummary(result.summary) : result.summary}`;
      if (result.allPassed) void vscode.window.showInformationMessage(message);
      else void this.notify('warn', message);
    } catch (error) {
      if (error instanceof NotReadyError) {
        // Asked by the user (the palette, the dashboard): the refusal is said where they look.
        const state = serverReport(error.snapshot).summary;
        const next = error.why === 'loading' ? 'wait until it is ready' : 'its logs say why it is not serving';
        void this.notify(
          'warn',
          `Kimi: the parsers can be checked only on a ready server (${state}): ${next}. Nothing was run.`,
        );
        return;
      }
      this.log.warn(`[${server.name}] Parser verification could not run: ${errorText(error)}`);
    }
  }

  /** The active server (invalid settings or none configured are reported, and give undefined). */
  activeServerProfile(): ServerProfile | undefined {
    return this.requireServer();
  }

  /** The active server when it is configured and not loading. */
  idleServer(target?: string): ServerProfile | undefined {
    const server = this.requireServer(target);
    if (!server) return undefined;
    const snapshot = this.fleet.snapshot(server);
    if (snapshot.loading) {
      this.refuseBusy(server, snapshot.state);
      return undefined;
    }
    return server;
  }

  private onFleetEvent(event: FleetEvent): void {
    const server = event.server;
    switch (event.type) {
      case 'state':
        this.onState(server, event.state);
        this.onStall(server, event.previous, event.state);
        break;
      case 'end':
        // Only a load under way is offered back after a window reload, not a steady watch.
        void this.background.remember(server.name, undefined);
        void this.onEnd(server, event.outcome, event.quiet);
        break;
      case 'alert':
        this.render();
        this.onAlert(server, event.alert.kind, event.alert.level, event.alert.message);
        break;
      case 'refused':
        this.render();
        this.onRefused(server, event);
        break;
      case 'verified':
        this.render();
        this.changed.fire();
        break;
      case 'watching':
        // Whoever started the watch (a command, a language-model tool...), a window reload offers it back.
        if (event.watching) this.endNotes.delete(server.name);
        void this.background.remember(server.name, event.watching ? Date.now() : undefined);
        this.render();
        break;
      case 'connected':
      case 'forward':
        this.render();
        break;
    }
  }

  private onState(server: ServerProfile, state: LoadState): void {
    this.seriesFor(server.name).observe(state, Date.now());
    this.changed.fire();
    // The other servers' states count too (the status bar's "· 1 failed").
    this.render();
  }

  /** A load that became stalled is said once, as a warning: what was last seen and since when (single- and multi-node). */
  private onStall(server: ServerProfile, previous: LoadState, state: LoadState): void {
    if (state.verdict !== 'stalled' || previous.verdict === 'stalled') return;
    const notice = stallNotice(server.name, previous, state, Date.now(), this.fleet.snapshot(server).nodes);
    if (notice) void this.notify('warn', notice);
  }

  private async onEnd(server: ServerProfile, outcome: WatchOutcome, quiet: boolean): Promise<void> {
    const note = endMessage(server, outcome);
    if (note && outcome.end !== 'stopped') this.endNotes.set(server.name, note);
    this.render();
    // What a quiet watch found at its first look (a background watch, a watch moved to new settings) is nobody's news.
    if (quiet) return;
    switch (outcome.end) {
      case 'ready':
        if (this.settings?.notifyWhenReady) {
          void this.notifyReady(server, outcome.state);
          this.offerAdvice(server, outcome.state);
        }
        if (this.settings?.verifyParsersWhenReady && !this.rolling.has(server.name))
          await this.verifyParsers(server, true);
        break;
      case 'failed':
        this.notifyFailure(server, failureMessage(server, outcome));
        break;
      case 'cancelled':
        break;
      case 'unreachable':
        // A refusal (host key, auth...) has been said already, with its own buttons.
        if (!this.fleet.snapshot(server).refusal && note) void this.notify('warn', note);
        break;
      default:
        if (note) void this.notify(outcome.end === 'stopped' ? 'info' : 'warn', note);
    }
  }

  /** "Ready", with the offer to use the server from this machine (an SSH server not forwarded yet). */
  private async notifyReady(server: ServerProfile, state: LoadState): Promise<void> {
    const offerForward = server.host !== undefined && !this.fleet.forwardOf(server);
    const lastLoad = this.fleet.snapshot(server).lastLoad;
    const message = maskSecrets(readyMessage(server, state, lastLoad), [...(this.apiKeys?.known ?? [])]);
    const choice = await vscode.window.showInformationMessage(
      message,
      ...(offerForward ? [FORWARD_PORT, SHOW_LOG] : [SHOW_LOG]),
    );
    if (choice === SHOW_LOG) this.showLog();
    if (choice === FORWARD_PORT) void vscode.commands.executeCommand('kimiService.forwardPort', server.name);
  }

  /** After the ready notification: "1 suggestion for a faster load: ..." when the load shows one (adviceActions). */
  private offerAdvice(server: ServerProfile, state: LoadState): void {
    void offerAdviceAfterReady(this, server, state, this.state, this.log);
  }

  /** A failure is notified once; the same cause again soon after (a crash loop) goes to the log only. */
  private notifyFailure(server: ServerProfile, message: string): void {
    if (this.notices.failure(server.name, message, Date.now())) void this.notify('error', message);
  }

  private onAlert(server: ServerProfile, kind: string, level: 'info' | 'warn' | 'error', message: string): void {
    // An unreadable journal is said once per window, not at every restart.
    if (!this.notices.alert(server.name, kind)) return;
    if (kind === 'recovered') {
      void vscode.window.showInformationMessage(`Kimi on ${server.name}: ${message}`);
      return;
    }
    void this.notify(level, `Kimi on ${server.name}: ${message}`);
  }

  /** A refused connection: a notification with what to do (the status bar says it too). */
  private onRefused(server: ServerProfile, event: Extract<FleetEvent, { type: 'refused' }>): void {
    const { text, openKnownHosts } = refusalMessage(server.name, event.refusal);
    // A server only watched in the background shows its refusal in the servers view, not in a notification.
    if (!this.notices.refusal(server.name, this.activeServer()?.name)) return;
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

  /** "Kimi Service: Set server API key": stored in SecretStorage, used at once by the live session. */
  async setApiKey(): Promise<void> {
    const server = this.requireServer();
    if (!server || !this.apiKeys) return;
    const answer = await this.apiKeys.ask(server.name);
    if (!answer) return;
    const session = await this.openSession(server);
    session?.client.setApiKey(answer.key);
    this.log.info(`[${server.name}] API key ${answer.key ? 'set' : 'removed'} (kept in VS Code's secret storage).`);
  }

  async notify(kind: 'info' | 'warn' | 'error', message: string): Promise<void> {
    const show =
      kind === 'info'
        ? vscode.window.showInformationMessage
        : kind === 'warn'
          ? vscode.window.showWarningMessage
          : vscode.window.showErrorMessage;
    const choice = await show(maskSecrets(message, [...(this.apiKeys?.known ?? [])]), SHOW_LOG);
    if (choice === SHOW_LOG) this.showLog();
  }

  private refuseBusy(server: ServerProfile, state: LoadState | undefined): void {
    void vscode.window.showWarningMessage(
      `Kimi on ${server.name} is loading${state ? ` (${describe(state)})` : ''}. Nothing was restarted; wait for the load, or run "Kimi Service: Stop polling" first.`,
    );
  }

  /** The named server (a command's target) or the active one; unknown names and bad settings are reported. */
  private requireServer(target?: string): ServerProfile | undefined {
    if (!this.settings) {
      this.reportSettingsErrors();
      return undefined;
    }
    if (target !== undefined) {
      const choice = resolveServer(this.settings, target);
      if (!choice.ok && choice.reason === 'unknown')
        void vscode.window.showErrorMessage(
          `Kimi: ${serverChoiceText(choice, 'kimiService.servers')}. Nothing was done.`,
        );
      if (!choice.ok) return undefined;
      this.notices.touched(choice.server.name);
      return choice.server;
    }
    const server = activeProfile(this.settings);
    if (!server) reportNoServers();
    return server;
  }

  private reportSettingsErrors(): void {
    reportSettingsErrors(this.settingsErrors);
  }

  /** What the load dashboard shows: the active server's load. */
  dashboard(): DashboardModel {
    const server = this.activeServer();
    const snapshot = server ? this.fleet.snapshot(server) : undefined;
    return dashboardModel({
      server: server?.name,
      state: snapshot?.state,
      ...(snapshot?.lastLoad ? { lastLoad: snapshot.lastLoad } : {}),
      series: server ? this.seriesFor(server.name).points() : [],
      // The summary, then the same table the log shows.
      verification:
        snapshot?.verificationTable !== undefined
          ? `${snapshot.verification ?? ''}\n\n${snapshot.verificationTable}`
          : snapshot?.verification,
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
    const result = readKimiSettings();
    if (result.ok) {
      this.fleet.configure(result.settings);
      this.loadedSettings = result.settings;
      this.settingsErrors = [];
      this.watchInBackground();
    } else {
      this.loadedSettings = undefined;
      this.settingsErrors = result.errors;
      for (const error of result.errors) this.log.error(`Invalid setting: ${error}`);
    }
    this.render();
  }

  private render(): void {
    const server = this.activeServer();
    const snapshot = server ? this.fleet.snapshot(server) : undefined;
    this.statusBar.update({
      server,
      state: snapshot?.state,
      watching: snapshot?.watching ?? false,
      refusal: snapshot?.refusal,
      endNote: server ? this.endNotes.get(server.name) : undefined,
      verification: snapshot?.verification,
      forwardUrl: server ? this.fleet.forwardOf(server)?.baseUrl : undefined,
      configError: this.settings ? undefined : this.settingsErrors[0],
      others: otherServers(this.fleet.snapshots(), server?.name),
    });
  }

  dispose(): void {
    this.disposed = true;
    this.background.dispose();
    this.fleet.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.changed.dispose();
  }
}
