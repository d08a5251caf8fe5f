/**
 * The fleet's events, routed to what shows them: the status bar, the dashboard's series, the
 * marks a closed window leaves, the notifications, and after a ready load the parser check and
 * the suggestions for a faster load.
 */
import type { ServerProfile, Settings } from '../../config/config';
import type { FleetEvent } from '../../fleet/fleetTypes';
import type { FleetVerbs } from '../../fleet/fleetVerbs';
import type { LoadState } from '../../monitor/state/loadStateTypes';
import type { WatchOutcome } from '../../monitor/watch/watchTypes';
import { endMessage } from '../../present/messages';
import type { BackgroundService } from './backgroundService';
import type { DashboardSeries } from './dashboard/dashboardSeries';
import { Disposable } from '../../util/disposable';
import type { FleetNotices } from './output/fleetNotices';
import type { ParserChecks } from './checks/parserChecks';
import type { StatusRenderer } from './status/statusRenderer';

export interface EventRouterDeps {
  readonly fleet: FleetVerbs;
  readonly status: StatusRenderer;
  readonly series: DashboardSeries;
  readonly background: BackgroundService;
  readonly notices: FleetNotices;
  readonly checks: ParserChecks;
  readonly settings: () => Settings | undefined;
  /** After the ready notification: "1 suggestion for a faster load: ..." when the load shows one. */
  readonly offerAdvice: (server: ServerProfile, state: LoadState) => void;
}

export class EventRouter extends Disposable {
  constructor(private readonly deps: EventRouterDeps) {
    super();
    this._register(deps.fleet.onEvent((event) => this.route(event)));
  }

  private route(event: FleetEvent): void {
    const { status, series, background, notices } = this.deps;
    const server = event.server;
    switch (event.type) {
      case 'state':
        series.observe(server.name, event.state);
        // The other servers' states count too (the status bar's "· 1 failed").
        status.render();
        notices.stall(server, event.previous, event.state);
        break;
      case 'end':
        // Only a load under way is offered back after a window reload, not a steady watch.
        background.remember(server.name, undefined);
        void this.ended(server, event.outcome, event.quiet);
        break;
      case 'alert':
        status.render();
        notices.alert(server, event.alert.kind, event.alert.level, event.alert.message);
        break;
      case 'refused':
        status.render();
        notices.refused(server, event);
        break;
      case 'verified':
        status.render();
        series.touch();
        break;
      case 'watching':
        // Whoever started the watch (a command, a language-model tool...), a window reload offers it back.
        if (event.watching) status.setEndNote(server.name, undefined);
        background.remember(server.name, event.watching ? Date.now() : undefined);
        status.render();
        break;
      case 'connected':
      case 'forward':
      case 'verifying':
        status.render();
        break;
    }
  }

  private async ended(server: ServerProfile, outcome: WatchOutcome, quiet: boolean): Promise<void> {
    const { status, notices, checks } = this.deps;
    const note = endMessage(server, outcome);
    if (note && outcome.end !== 'stopped') status.setEndNote(server.name, note);
    status.render();
    // What a quiet watch found at its first look (a background watch, a watch moved to new settings) is nobody's news.
    if (quiet) return;
    if (outcome.end !== 'ready') {
      notices.ended(server, outcome, note);
      return;
    }
    const settings = this.deps.settings();
    if (settings?.notifyWhenReady) {
      void notices.ready(server, outcome.state);
      this.deps.offerAdvice(server, outcome.state);
    }
    if (settings?.verifyParsersWhenReady) await checks.afterReady(server);
  }
}
