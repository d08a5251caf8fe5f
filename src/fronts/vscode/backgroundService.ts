/**
 * The background watches of this window (kimiService.watchAfterReady, fleet/sessions/backgroundWatches.ts)
 * and the offer, right after activation, to resume a watch a closed window cut short (nothing
 * is restarted).
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile, Settings } from '../../config/config';
import { BackgroundWatches } from '../../fleet/sessions/backgroundWatches';
import type { FleetVerbs } from '../../fleet/fleetVerbs';
import type { NoticeGate } from '../../fleet/logs/notices';
import type { MementoLike } from '../../monitor/history/history';
import { Disposable } from '../../util/disposable';

export interface BackgroundDeps {
  readonly fleet: FleetVerbs;
  /** Per window: which watches were under way when it closed. */
  readonly windowState: MementoLike;
  readonly log: vscode.LogOutputChannel;
  readonly notices: NoticeGate;
  readonly unreachable: (server: ServerProfile) => boolean;
  readonly settings: () => Settings | undefined;
  /** Watches a server (the resume offer's answer). */
  readonly watch: (server: ServerProfile) => void;
}

export class BackgroundService extends Disposable {
  private readonly watches: BackgroundWatches;

  constructor(private readonly deps: BackgroundDeps) {
    super();
    this.watches = this._register(new BackgroundWatches(deps.fleet, deps.windowState, deps.unreachable));
    // Settings are validated (and a watch cut short by a window reload is offered back) right
    // after activation rather than during it; a command that comes first validates on demand.
    this._registerTimeout(() => void this.offerToResume(), 0);
  }

  /** A command watches the server: the user's stop no longer holds. */
  commanded(name: string): void {
    this.watches.commanded(name);
  }

  stoppedBy(names: readonly string[]): void {
    this.watches.stoppedBy(names);
  }

  /** A watch began (`startedAt`) or ended (undefined): the mark a closed window leaves. */
  remember(name: string, startedAt: number | undefined): void {
    void this.watches.remember(name, startedAt);
  }

  /** Every configured server under steady watch (kimiService.watchAfterReady), as BackgroundWatches decides. */
  start(settings: Settings | undefined, offeredBack: ReadonlySet<string> = new Set()): void {
    if (this.isDisposed) return;
    const started = this.watches.start(settings, offeredBack);
    this.deps.notices.watchedInBackground(started);
    if (started.length > 0) this.deps.log.info(`Watching in the background: ${started.join(', ')}.`);
  }

  /**
   * A window closed (or reloaded) during a watch leaves its mark; the next activation offers to
   * watch the load that is still under way, without restarting anything.
   */
  private async offerToResume(): Promise<void> {
    const servers = await this.watches.takeOffers(this.deps.settings());
    // Said either way: whoever reads the log (or waits on it) knows the new window has decided.
    this.deps.log.info(`Resume offers after the window opened: ${servers.map((s) => s.name).join(', ') || 'none'}.`);
    this.start(this.deps.settings(), new Set(servers.map((s) => s.name)));
    for (const server of servers) {
      const resume = l10n.t('Resume watching');
      const choice = await vscode.window.showInformationMessage(
        l10n.t(
          'Kimi on {0} was being watched when the window closed. Resume watching (nothing is restarted)?',
          server.name,
        ),
        resume,
      );
      if (choice === resume) this.deps.watch(server);
    }
  }
}
