/**
 * The VS Code shell over the fleet, as a composition of small services: settings from the
 * configuration, the server a command acts on, sessions (and the language-model tools' host),
 * watches, the restart, parser checks, status rendering, notifications, dashboard series, and
 * the routing of the fleet's events to them. What the servers do lives in the fleet
 * (src/fleet), which the other fronts share.
 */
import type * as vscode from 'vscode';
import { activeProfile, type ServerProfile } from '../../config/config';
import { BrokeredFleet } from '../../broker/brokeredFleet';
import type { FleetSession } from '../../fleet/fleetTypes';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import { NoticeGate } from '../../fleet/logs/notices';
import type { SessionUi } from '../../fleet/sessions/sessionFactory';
import type { ActionHost } from './checks/actionHost';
import { offerAdviceAfterReady } from './checks/adviceActions';
import { addServerCommand } from './commands/addServer';
import { setApiKeyCommand, type ApiKeys } from './secrets/apiKeys';
import { BackgroundService } from './backgroundService';
import type { DashboardModel } from './dashboard/dashboardModel';
import { DashboardSeries } from './dashboard/dashboardSeries';
import { Disposable } from '../../util/disposable';
import { EventRouter } from './eventRouter';
import { FleetNotices } from './output/fleetNotices';
import { Notifier, type NoticeKind } from './output/notifier';
import { ParserChecks } from './checks/parserChecks';
import { RestartCommand, type ChangeRestart } from './restart/restartCommand';
import { rollingRestartCommand } from './restart/rollingRestartCommand';
import { ServerPicker } from './commands/serverPicker';
import { Sessions } from './sessions';
import { SettingsState } from './settings/settingsState';
import { shareWatches } from './sharing';
import type { StatusBar } from './status/statusBar';
import { StatusRenderer } from './status/statusRenderer';
import { WatchCommands } from './commands/watchCommands';

export interface ControllerDeps {
  readonly log: vscode.LogOutputChannel;
  readonly statusBar: StatusBar;
  readonly ui: SessionUi;
  /** Global: the load history, the advice's records. */
  readonly state: vscode.Memento;
  /** Per window: which watches were under way when it closed. */
  readonly windowState: vscode.Memento;
  readonly apiKeys?: ApiKeys;
  /** The remote's name when this extension runs on the UI side of a remote window. */
  readonly uiSideOfRemote?: string;
}

export class Controller extends Disposable implements ActionHost {
  readonly fleet: FrontFleet;
  readonly sessions: Sessions;
  readonly choice: ServerPicker;
  readonly watches: WatchCommands;
  readonly restarts: RestartCommand;
  readonly checks: ParserChecks;
  readonly dashboard: DashboardSeries;
  private readonly settings: SettingsState;
  private readonly notifier: Notifier;

  constructor(private readonly deps: ControllerDeps) {
    super();
    const { log, apiKeys } = deps;
    // One watch per host for all of this user's windows (docs/broker.md); its own when the broker fails.
    const fleet = this._register(
      new BrokeredFleet(
        {
          ui: deps.ui,
          log: (level, message) => log[level](message),
          history: deps.state,
          ...(apiKeys ? { apiKey: (name: string) => apiKeys.get(name) } : {}),
        },
        { log: (level, message) => log[level](message) },
      ),
    );
    this.fleet = fleet;
    this._register(shareWatches(fleet));
    const gate = new NoticeGate();
    this.notifier = new Notifier(log, apiKeys?.known);
    this.settings = this._register(new SettingsState(fleet, log));
    const settings = () => this.settings.settings;
    this.choice = new ServerPicker(this.settings, fleet, gate);
    this.sessions = new Sessions(fleet, log, this.notifier, deps.uiSideOfRemote);
    const status = new StatusRenderer(deps.statusBar, fleet, this.settings);
    // Disposed before the fleet: a watch the window's closing cancels keeps its mark.
    const background = this._register(
      new BackgroundService({
        fleet,
        windowState: deps.windowState,
        log,
        notices: gate,
        unreachable: (server) => this.sessions.unreachable(server),
        settings,
        watch: (server) => void this.watches.watchServer(server),
      }),
    );
    this.watches = new WatchCommands(fleet, this.sessions, this.choice, background, status, log);
    this.restarts = new RestartCommand({
      fleet,
      sessions: this.sessions,
      choice: this.choice,
      background,
      status,
      notifier: this.notifier,
      watches: this.watches,
      log,
      settings,
    });
    this.checks = new ParserChecks(fleet, this.sessions, this.choice, this.notifier, log);
    this.dashboard = this._register(new DashboardSeries(fleet, this.settings));
    const notices = new FleetNotices(fleet, this.notifier, gate, () => this.settings.activeServer()?.name);
    this._register(
      new EventRouter({
        fleet,
        status,
        series: this.dashboard,
        background,
        notices,
        checks: this.checks,
        settings,
        offerAdvice: (server, state) => void offerAdviceAfterReady(this, server, state, deps.state, log),
      }),
    );
    this._register(
      this.settings.onDidLoad((loaded) => {
        background.start(loaded);
        status.render();
      }),
    );
  }

  showLog(): void {
    this.notifier.showLog();
  }

  notify(kind: NoticeKind, message: string): Promise<void> {
    return this.notifier.notify(kind, message);
  }

  openSession(server: ServerProfile): Promise<FleetSession | undefined> {
    return this.sessions.openSession(server);
  }

  requireServer(target?: string): ServerProfile | undefined {
    return this.choice.require(target);
  }

  restartAfterChange(server: ServerProfile): Promise<ChangeRestart | undefined> {
    return this.restarts.afterChange(server);
  }

  /** The name of the active server, if the settings are valid and name one. */
  activeServerName(): string | undefined {
    return this.settings.activeServer()?.name;
  }

  /** The active server (invalid settings or none configured are reported, and give undefined). */
  activeServerProfile(): ServerProfile | undefined {
    return this.choice.require();
  }

  /** What the load dashboard shows: the active server's load. */
  dashboardModel(): DashboardModel {
    return this.dashboard.model();
  }

  /** "Kimi Service: Restart servers one by one" (a row's server preselected when run from the view). */
  async rollingRestart(target?: string): Promise<void> {
    const settings = this.settings.settings;
    if (!settings) return this.settings.reportErrors();
    if (target !== undefined && !this.choice.require(target)) return;
    await rollingRestartCommand(
      {
        fleet: this.fleet,
        settings,
        activeName: activeProfile(settings)?.name,
        log: this.deps.log,
        during: (names, run) => this.checks.during(names, run),
      },
      target,
    );
  }

  /** "Kimi Service: Add server": a host, one of its SGLang units, a name; written to the user's kimiService.servers. */
  addServer(): Promise<void> {
    return addServerCommand(this.deps.ui, this.deps.log);
  }

  /** "Kimi Service: Set server API key". */
  setApiKey(): Promise<void> {
    return setApiKeyCommand(this.deps.apiKeys, this.choice.require(), (s) => this.openSession(s), this.deps.log);
  }
}
