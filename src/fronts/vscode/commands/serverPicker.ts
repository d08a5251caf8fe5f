/**
 * Which server a command acts on: the one it names or the active one (unknown names and invalid
 * settings are said), the QuickPick that makes a server active.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import { activeProfile, type ServerProfile } from '../../../config/config';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import type { NoticeGate } from '../../../fleet/logs/notices';
import { resolveServer } from '../../../fleet/servers/resolveServer';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { describe } from '../../../present/messages';
import { serverChoiceText } from '../../../present/serverRefusalText';
import type { SettingsState } from '../settings/settingsState';
import { reportNoServers, updateKimiSetting } from '../settings/settingsSource';

export class ServerPicker {
  constructor(
    private readonly settings: SettingsState,
    private readonly fleet: FleetVerbs,
    private readonly notices: NoticeGate,
  ) {}

  /** The named server (a command's target) or the active one; unknown names and bad settings are reported. */
  require(target?: string): ServerProfile | undefined {
    const settings = this.settings.settings;
    if (!settings) {
      this.settings.reportErrors();
      return undefined;
    }
    if (target !== undefined) {
      const choice = resolveServer(settings, target);
      if (!choice.ok && choice.reason === 'unknown')
        void vscode.window.showErrorMessage(
          l10n.t('Kimi: {0}. Nothing was done.', serverChoiceText(choice, 'kimiService.servers')),
        );
      if (!choice.ok) return undefined;
      this.notices.touched(choice.server.name);
      return choice.server;
    }
    const server = activeProfile(settings);
    if (!server) reportNoServers();
    return server;
  }

  /** The server when it is configured and not loading (a load under way is said). */
  idle(target?: string): ServerProfile | undefined {
    const server = this.require(target);
    if (!server) return undefined;
    const snapshot = this.fleet.snapshot(server);
    if (snapshot.loading) {
      refuseBusy(server, snapshot.state);
      return undefined;
    }
    return server;
  }

  /** "Kimi Service: Select server": a QuickPick of the servers with their states. */
  async select(): Promise<void> {
    const picked = await this.pick(l10n.t('Kimi: select the server to act on'));
    if (picked !== undefined) await makeActive(picked);
  }

  /** A QuickPick of the servers with their states (the active one marked): the name chosen. */
  async pick(title: string): Promise<string | undefined> {
    const settings = this.settings.settings;
    if (!settings) return void this.settings.reportErrors();
    if (settings.servers.length === 0) return void reportNoServers();
    const active = activeProfile(settings);
    const picked = await vscode.window.showQuickPick(
      this.fleet.snapshots().map(({ server, state }) => ({
        label: server.name,
        description: `${server.host ?? l10n.t('local')} · ${server.unit}`,
        detail: state ? describe(state) : undefined,
        picked: server.name === active?.name,
      })),
      { title },
    );
    return picked?.label;
  }

  /** "Make active": the server the status bar, the dashboard and the commands without a target use. */
  async makeActive(target?: string): Promise<void> {
    if (target === undefined) return this.select();
    const server = this.require(target);
    if (server) await makeActive(server.name);
  }
}

/** Written where the active server is read from: a workspace that sets it keeps it, changed. */
async function makeActive(name: string): Promise<void> {
  await updateKimiSetting('activeServer', name);
}

/** Starting a watch while a load is under way is refused: it is watched already. */
export function refuseBusy(server: ServerProfile, state: LoadState | undefined): void {
  void vscode.window.showWarningMessage(
    l10n.t(
      'Kimi on {0} is loading{1}. Nothing was restarted; wait for the load, or run "Kimi Service: Stop watching" first.',
      server.name,
      state ? ` (${describe(state)})` : '',
    ),
  );
}
