/**
 * "Kimi Service: Restart": the fleet's restart verb (the restart rule, docs/restart-rule.md), as
 * every front. A load under way is followed, or restarted anyway, as the user chooses; otherwise
 * the confirmation (kimiService.confirmRestart) with the forecast, and the page cache warmed
 * first when asked.
 */
import type * as vscode from 'vscode';
import type { ServerProfile, Settings } from '../../../config/config';
import type { FleetSession, RestartAnswer } from '../../../fleet/fleetTypes';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import type { LoadForecast } from '../../../monitor/forecast/loadInsights';
import type { WatchOutcome } from '../../../monitor/watch/watchTypes';
import { TransportError } from '../../../transport/transport';
import { errorText } from '../../../util/errors';
import type { BackgroundService } from '../backgroundService';
import type { Notifier } from '../output/notifier';
import { confirmRestart, followOrRestart, warmThenReport } from './restartDialog';
import type { ServerPicker } from '../commands/serverPicker';
import type { Sessions } from '../sessions';
import type { StatusRenderer } from '../status/statusRenderer';
import type { WatchCommands } from '../commands/watchCommands';

export interface RestartDeps {
  readonly fleet: FleetVerbs;
  readonly sessions: Sessions;
  readonly choice: ServerPicker;
  readonly background: BackgroundService;
  readonly status: StatusRenderer;
  readonly notifier: Notifier;
  readonly watches: WatchCommands;
  readonly log: vscode.LogOutputChannel;
  readonly settings: () => Settings | undefined;
}

/** How the restart after a change went: restarted, or a load under way followed; how that load ended. */
export interface ChangeRestart {
  readonly kind: RestartAnswer['kind'];
  readonly outcome: WatchOutcome | undefined;
}

export class RestartCommand {
  constructor(private readonly deps: RestartDeps) {}

  async restart(target?: string): Promise<void> {
    const { choice, background, sessions } = this.deps;
    const server = choice.require(target);
    if (!server) return;
    background.commanded(server.name);
    // A refused connection (host key, auth, DNS...) is said first: no dialog to answer for nothing.
    const session = await sessions.openSession(server);
    if (!session || !(await sessions.connect(server))) return;
    const confirm = this.deps.settings()?.confirmRestart ? () => this.confirm(server, session) : undefined;
    const result = await this.throughRule(server, confirm);
    if (result) await this.follow(server, result);
  }

  /**
   * The restart after a change of the server's command line (the parser and advice actions):
   * the same rule and the same choice while a load is under way (follow it, or restart anyway);
   * the diff the user confirmed was the confirmation. Undefined: nothing restarted or followed.
   */
  async afterChange(server: ServerProfile): Promise<ChangeRestart | undefined> {
    this.deps.background.commanded(server.name);
    const result = await this.throughRule(server, undefined);
    return result && { kind: result.kind, outcome: await this.follow(server, result) };
  }

  /** The rule's verb with the dialogs; undefined when cancelled or refused (said). */
  private async throughRule(
    server: ServerProfile,
    confirm: (() => Promise<boolean>) | undefined,
  ): Promise<RestartAnswer | undefined> {
    const { fleet, status, notifier } = this.deps;
    try {
      return await fleet.restartAsking(server, {
        choose: (reason) => followOrRestart(server, reason),
        ...(confirm ? { confirm } : {}),
      });
    } catch (error) {
      // A refused connection has been said already (the fleet's `refused` event).
      if (!(error instanceof TransportError))
        void notifier.notify('error', `Kimi on ${server.name}: cannot restart: ${errorText(error)}`);
      return undefined;
    } finally {
      status.render();
    }
  }

  /** The load the restart started, or the one it follows, to its end. */
  private async follow(server: ServerProfile, result: RestartAnswer): Promise<WatchOutcome | undefined> {
    if (result.kind === 'watched') this.deps.log.info(`[${server.name}] Not restarted: ${result.reason}.`);
    try {
      return await result.outcome;
    } finally {
      this.deps.status.render();
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
        if (wasWatching) void this.deps.watches.watchServer(server, true);
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
      if (forecast.advice) log.info(`[${server.name}] ${forecast.advice}`);
      return forecast;
    } catch (error) {
      log.warn(`[${server.name}] No load forecast: ${errorText(error)}`);
      return undefined;
    }
  }
}
