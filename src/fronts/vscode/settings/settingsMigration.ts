/**
 * The first start after the rename: this extension's old `kimi.*` user settings are copied to
 * `kimiService.*` (where the new key has no value yet) and the user is told once. The old values
 * stay in the settings file untouched: `kimi.*` belongs to Moonshot's Kimi Code extension.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import {
  LEGACY_KEYS,
  SECTION,
  legacyName,
  migrationPlan,
  settingName,
  type LegacyKey,
} from '../../../config/namespace';

const DONE_KEY = 'kimiService.migratedFromKimi';

type Log = Pick<vscode.LogOutputChannel, 'info' | 'warn'>;

export async function migrateLegacySettings(state: vscode.Memento, log: Log): Promise<LegacyKey[]> {
  if (state.get<boolean>(DONE_KEY) === true) return [];
  const root = vscode.workspace.getConfiguration();
  const legacy: Partial<Record<LegacyKey, unknown>> = {};
  const current: Partial<Record<LegacyKey, unknown>> = {};
  const inWorkspace: string[] = [];
  for (const key of LEGACY_KEYS) {
    const old = root.inspect(legacyName(key));
    legacy[key] = old?.globalValue;
    if (old?.workspaceValue !== undefined || old?.workspaceFolderValue !== undefined) inWorkspace.push(legacyName(key));
    current[key] = root.inspect(settingName(key))?.globalValue;
  }
  const plan = migrationPlan(legacy, current);
  const section = vscode.workspace.getConfiguration(SECTION);
  for (const { key, value } of plan) await section.update(key, value, vscode.ConfigurationTarget.Global);
  await state.update(DONE_KEY, true);
  if (plan.length > 0) {
    const names = plan.map(({ key }) => legacyName(key)).join(', ');
    log.info(
      `Settings: copied ${names} to ${SECTION}.*; the old keys stay in your settings file and are no longer read.`,
    );
    void vscode.window.showInformationMessage(
      l10n.t(
        'Kimi Service: your settings moved to "{0}.*" ({1} copied from "kimi.*", which Moonshot\'s Kimi Code extension also uses). The old values stay in your settings file and are no longer read.',
        SECTION,
        plan.length,
      ),
    );
  }
  if (inWorkspace.length > 0)
    log.warn(
      `Settings: ${inWorkspace.join(', ')} in this workspace's settings are no longer read (the section is now ${SECTION}.*).`,
    );
  return plan.map(({ key }) => key);
}
