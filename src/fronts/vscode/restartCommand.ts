/**
 * "Kimi Service: Restart": the fleet's restart verb (the restart rule, docs/restart-rule.md), as
 * every front. A load under way is followed, or restarted anyway, as the user chooses; otherwise
 * the confirmation (kimiService.confirmRestart) with the forecast, and the page cache warmed
 * first when asked.
 */
import type * as vscode from 'vscode';
import type { ServerProfile, Settings } from '../../config/config';
import type { Fleet, FleetSession, RestartResult } from '../../fleet/fleet';
import type { LoadForecast } from '../../monitor/loadInsights';
import { TransportError } from '../../transport/transport';
import { errorText } from '../../util/errors';
import type { BackgroundService } from './backgroundService';
import type { Notifier } from './notifier';
import { confirmRestart, followOrRestart, warmThenReport } from './restartDialog';
import type { ServerChoice } from './serverChoice';
import type { Sessions } from './sessions';
import type { StatusRenderer } from './statusRenderer';
import type { WatchCommands } from './watchCommands';

export interface RestartDeps {
  readonly fleet: Fleet;
  readonly sessions: Sessions;
  readonly choice: ServerChoice;
  readonly background: BackgroundService;
  readonly status: StatusRenderer;
  readonly notifier: Notifier;
  readonly watches: WatchCommands;
  readonly log: vscode.LogOutputChannel;
  readonly settings: () => Settings | undefined;
}

export class RestartCommand {
  constructor(private readonly deps: RestartDeps) {}

  async restart(target?: string): Promise<void> {
    const { choice, background, sessions, fleet, status, notifier, log } = this.deps;
    const server = choice.require(target);
    if (!server) return;
    background.commanded(server.name);
    // A refused connection (host key, auth, DNS...) is said first: no dialog to answer for nothing.
    const session = await sessions.openSession(server);
    if (!session || !(await sessions.connect(server))) return;
    let result: RestartResult | undefined;
    try {
      result = await fleet.restartAsking(server, {
        choose: (reason) => followOrRestart(server, reason),
        ...(this.deps.settings()?.confirmRestart ? { confirm: () => this.confirm(server, session) } : {}),
      });
    } catch (error) {
      // A refused connection has been said already (the fleet's `refused` event).
      if (!(error instanceof TransportError))
        void notifier.notify('error', `Kimi on ${server.name}: cannot restart: ${errorText(error)}`);
      return;
    } finally {
      status.render();
    }
    if (!result) return;
    if (result.kind === 'attached') log.info(`[${server.name}] Not restarted: ${result.reason}.`);
    try {
      await result.outcome;
    } finally {
      status.render();
    }
  }

  /** The confirmation with the forecast, and the page cache warmed first when asked; false: nothing is restarted. */
  private async confirm(server: ServerProfile, session: FleetSession): Promise<boolean> {
    const forecast = await this.forecast(server);
    const choice = await confirmRestart(server, forecast);
    if (choice === 'cancel') return false;
    if (choice === 'warm' && forecast?.modelPath) {
      // The steady watch gives its channels to the warm-up (the restart's watch replaces it anyway).
      const wasWatching = this.deps.fleet.stop(server, 'warming the page cache before a restart');
      const warmed = await warmThenReport(session, forecast.modelPath, this.deps.log);
      if (!warmed) {
        if (wasWatching) void this.deps.watches.watch(server, 'attach', true);
        return false;
      }
    }
    return true;
  }

  /** The load forecast for the confirmation. */
  private async forecast(server: ServerProfile): Promise<LoadForecast | undefined> {
    const { fleet, log } = this.deps;
    try {
      const forecast = await fleet.forecast(server);
      if (forecast.text) log.info(`[${server.name}] Forecast: ${forecast.text}`);
      if (forecast.warning) log.warn(`[${server.name}] ${forecast.warning}`);
      return forecast;
    } catch (error) {
      log.warn(`[${server.name}] No load forecast: ${errorText(error)}`);
      return undefined;
    }
  }
}
