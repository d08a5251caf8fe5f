/**
 * What the status bar shows, rendered from the fleet: the active server's state, why its last
 * watch ended, the other servers that are not ready, a settings error.
 */
import type { FrontFleet } from '../../../fleet/fleetVerbs';
import type { SettingsState } from '../settings/settingsState';
import type { StatusBar } from './statusBar';
import { otherServers } from './statusOthers';

export class StatusRenderer {
  /** Why each server's last watch ended (not ready, failed or stopped): the status bar's note. */
  private readonly endNotes = new Map<string, string>();

  constructor(
    private readonly statusBar: StatusBar,
    private readonly fleet: FrontFleet,
    private readonly settings: SettingsState,
  ) {}

  setEndNote(name: string, note: string | undefined): void {
    if (note === undefined) this.endNotes.delete(name);
    else this.endNotes.set(name, note);
  }

  render(): void {
    const server = this.settings.activeServer();
    const snapshot = server ? this.fleet.snapshot(server) : undefined;
    this.statusBar.update({
      server,
      state: snapshot?.state,
      watching: snapshot?.watching ?? false,
      refusal: snapshot?.refusal,
      endNote: server ? this.endNotes.get(server.name) : undefined,
      verification: snapshot?.verification,
      verifying: snapshot?.verifying,
      forwardUrl: server ? this.fleet.forwardOf(server)?.baseUrl : undefined,
      sshClient: snapshot?.sshClient,
      configError: this.settings.settings ? undefined : this.settings.errors[0],
      others: otherServers(this.fleet.snapshots(), server?.name),
    });
  }
}
