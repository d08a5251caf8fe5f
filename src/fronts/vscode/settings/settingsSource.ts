/** The `kimiService.*` settings from VS Code's configuration (user, workspace, folder), parsed. */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import { parseSettings } from '../../../config/parseSettings';
import type { SettingsRead, SettingsSource } from '../../../config/settingsSource';
import { EXTENSION_ID, SECTION, SETTING_KEYS } from '../../../config/namespace';
import { isUserOnly, settingWrite, type SettingWrite, type UserOnlyKey } from '../../../config/userOnlySettings';

export const VSCODE_SETTINGS_SOURCE_NAME = 'kimiService.servers';

export const vscodeSettingsSource: SettingsSource = {
  read(): SettingsRead {
    const config = vscode.workspace.getConfiguration(SECTION);
    const raw: Record<string, unknown> = {};
    for (const key of SETTING_KEYS) {
      const value = isUserOnly(key) ? userValue(config, key) : config.get(key);
      if (value !== undefined) raw[key] = value;
    }
    const result = parseSettings(raw);
    return result.ok
      ? { ok: true, settings: result.settings, source: VSCODE_SETTINGS_SOURCE_NAME }
      : { ok: false, errors: result.errors, source: 'VS Code settings' };
  },
};

/**
 * A setting a workspace cannot choose (config/userOnlySettings): the user's own value, else the
 * default. Never the merged value: a workspace's or folder's value is ignored (and said, see
 * workspaceOverrides.ts), even where the host does not filter it by the declared scope.
 */
function userValue(config: vscode.WorkspaceConfiguration, key: UserOnlyKey): unknown {
  const inspected = config.inspect(key);
  return inspected?.globalValue ?? inspected?.defaultValue;
}

/** The user's own value of a user-only setting, e.g. for the chat model's reads. */
export function userSetting<T>(key: UserOnlyKey, fallback: T): T {
  const value = userValue(vscode.workspace.getConfiguration(SECTION), key);
  return value === undefined ? fallback : (value as T);
}

/** kimiService.verifyParsersWhenReady, from the user's settings only (chat/provider.ts reads it). */
export function verifyParsersWhenReadySetting(): boolean {
  return userSetting<unknown>('verifyParsersWhenReady', true) !== false;
}

/** The settings of the `kimiService` section, parsed. */
export function readKimiSettings(): SettingsRead {
  return vscodeSettingsSource.read();
}

export function reportSettingsErrors(errors: readonly string[]): void {
  const first = errors[0] ?? l10n.t('unknown error');
  const message =
    errors.length > 1
      ? l10n.t('Kimi: invalid settings: {0} (and {1} more: see the log)', first, errors.length - 1)
      : l10n.t('Kimi: invalid settings: {0}', first);
  void vscode.window.showErrorMessage(message, l10n.t('Open Settings')).then((choice) => {
    if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'kimiService.');
  });
}

/**
 * Writes `kimiService.<key>` where it is read from (config/userOnlySettings settingWrite): the
 * user's (or Remote) settings for a user-only key, the workspace's when a workspace sets a merged
 * key. Returns where, in the user's words.
 */
export async function updateKimiSetting(key: string, value: unknown): Promise<SettingWrite> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const write = settingWrite(key, config.inspect(key), onRemoteSide());
  await config.update(
    key,
    value,
    write.target === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
  );
  return write;
}

/** Runs in a remote extension host (code-server, or installed on the remote side of a Remote window). */
function onRemoteSide(): boolean {
  return (
    vscode.env.remoteName !== undefined &&
    vscode.extensions.getExtension(EXTENSION_ID)?.extensionKind === vscode.ExtensionKind.Workspace
  );
}

export function reportNoServers(): void {
  // Machine-scoped settings reach a remote extension host from the remote machine's settings only.
  const remote = onRemoteSide();
  const message = remote
    ? l10n.t(
        'Kimi: no server is configured. Add one to the setting kimiService.servers. This window runs the extension on the remote machine: set kimiService.servers in the Remote settings.',
      )
    : l10n.t('Kimi: no server is configured. Add one to the setting kimiService.servers.');
  void vscode.window.showErrorMessage(message, l10n.t('Open Settings')).then((choice) => {
    if (!choice) return;
    if (remote) void vscode.commands.executeCommand('workbench.action.openRemoteSettings');
    else void vscode.commands.executeCommand('workbench.action.openSettings', 'kimiService.servers');
  });
}
