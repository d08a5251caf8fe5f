/**
 * "Kimi Service: Watch" and "Stop watching": watch a server's load (nothing is restarted) and
 * end watches (nothing on the host is touched).
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../../config/config';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import type { WatchOutcome } from '../../../monitor/watch/watchTypes';
import type { BackgroundService } from '../backgroundService';
import { refuseBusy, type ServerPicker } from './serverPicker';
import type { Sessions } from '../sessions';
import type { StatusRenderer } from '../status/statusRenderer';

export class WatchCommands {
  constructor(
    private readonly fleet: FleetVerbs,
    private readonly sessions: Sessions,
    private readonly choice: ServerPicker,
    private readonly background: BackgroundService,
    private readonly status: StatusRenderer,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async watch(target?: string): Promise<void> {
    const server = this.choice.idle(target);
    if (server) await this.watchServer(server);
  }

  /**
   * Watches the server in the background (nothing is restarted); resolves with how the load
   * ended. With kimiService.watchAfterReady the watch goes on after that.
   */
  async watchServer(server: ServerProfile, quiet = false): Promise<WatchOutcome | undefined> {
    this.background.commanded(server.name);
    if (!(await this.sessions.openSession(server))) return undefined;
    const snapshot = this.fleet.snapshot(server);
    if (snapshot.loading) {
      refuseBusy(server, snapshot.state);
      return undefined;
    }
    try {
      return await this.fleet.watch(server, quiet);
    } finally {
      this.status.render();
    }
  }

  /** Stops the watch of one server, or of every server without a target. */
  stopWatching(target?: string): void {
    if (target !== undefined) {
      const server = this.choice.require(target);
      if (!server) return;
      this.background.stoppedBy([server.name]);
      if (this.fleet.stop(server)) this.log.info(`Stopped watching ${server.name}.`);
      else void vscode.window.showInformationMessage(l10n.t('Kimi: {0} is not being watched.', server.name));
      return;
    }
    const stopped = this.fleet.stopAll();
    this.background.stoppedBy(stopped);
    if (stopped.length === 0) void vscode.window.showInformationMessage(l10n.t('Kimi: nothing is being watched.'));
    else this.log.info(`Stopped watching ${stopped.join(', ')}.`);
  }
}
