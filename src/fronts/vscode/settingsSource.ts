/** The `kimi.*` settings from VS Code's configuration (user, workspace, folder), parsed. */
import * as vscode from 'vscode';
import { parseSettings } from '../../config/config';
import type { SettingsRead, SettingsSource } from '../../config/settingsSource';

/** The settings the extension reads (package.json's contributes.configuration). */
export const SETTING_KEYS = [
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
] as const;

export const VSCODE_SETTINGS_SOURCE_NAME = 'kimi.servers';

export const vscodeSettingsSource: SettingsSource = {
  read(): SettingsRead {
    const config = vscode.workspace.getConfiguration('kimi');
    const raw: Record<string, unknown> = {};
    for (const key of SETTING_KEYS) {
      const value = config.get(key);
      if (value !== undefined) raw[key] = value;
    }
    const result = parseSettings(raw);
    return result.ok
      ? { ok: true, settings: result.settings, source: VSCODE_SETTINGS_SOURCE_NAME }
      : { ok: false, errors: result.errors, source: 'VS Code settings' };
  },
};
