/** The kimi.* settings as VS Code has them, and what the user reads when they are not usable. */
import * as vscode from 'vscode';
import { parseSettings } from '../../config/config';

const SETTING_KEYS = [
  'servers',
  'activeServer',
  'knownHostsFile',
  'hostKeyPolicy',
  'confirmRestart',
  'pollIntervalSeconds',
  'loadTimeoutMinutes',
  'stallSeconds',
  'unreachableTimeoutMinutes',
  'notifyWhenReady',
  'verifyParsersWhenReady',
  'watchAfterReady',
  'healthIntervalSeconds',
];

/** The settings of the `kimi` section, parsed. */
export function readKimiSettings(): ReturnType<typeof parseSettings> {
  const config = vscode.workspace.getConfiguration('kimi');
  const raw: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = config.get(key);
    if (value !== undefined) raw[key] = value;
  }
  return parseSettings(raw);
}

export function reportSettingsErrors(errors: readonly string[]): void {
  const first = errors[0] ?? 'unknown error';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see the log)` : '';
  void vscode.window.showErrorMessage(`Kimi: invalid settings: ${first}${more}`, 'Open Settings').then((choice) => {
    if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'kimi.');
  });
}

export function reportNoServers(): void {
  void vscode.window
    .showErrorMessage('Kimi: no server is configured. Add one to the setting kimi.servers.', 'Open Settings')
    .then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'kimi.servers');
    });
}
