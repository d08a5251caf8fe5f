/**
 * The settings a workspace cannot turn against the user: those that choose a host, an identity,
 * the known-hosts file, the host-key policy, `sudo`, the commands run on the host, or whether a
 * restart asks first. They are read from the user's settings only; a value for one of them in a
 * workspace's or a folder's settings is ignored and said once. Pure: which keys, where a value
 * was found, and what to say. docs/security.md explains each choice.
 */
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { SECTION } from './namespace';
import {
  folderSettingsPlace,
  ignoredSettingLine,
  ignoredSettingsWarning,
  remoteSettingsPlace,
  userOnlyReason,
  userSettingsPlace,
  workspaceSettingsPlace,
  type UserOnlySetting,
} from '../present/words/settingsWords';

export type UserOnlyKey = UserOnlySetting;

/**
 * The keys (under `kimiService.`) read from the user's settings only; present/words says why each
 * is. A record of every UserOnlySetting, so that the compiler refuses a key left out here.
 */
const USER_ONLY: Readonly<Record<UserOnlyKey, true>> = {
  servers: true,
  knownHostsFile: true,
  hostKeyPolicy: true,
  'ssh.client': true,
  confirmRestart: true,
  verifyParsersWhenReady: true,
};
export const USER_ONLY_KEYS = Object.keys(USER_ONLY) as readonly UserOnlyKey[];

export function isUserOnly(key: string): key is UserOnlyKey {
  return Object.prototype.hasOwnProperty.call(USER_ONLY, key);
}

/** A value of a user-only key found outside the user's settings. */
export interface IgnoredSetting {
  /** The full setting name, e.g. `kimiService.servers`. */
  readonly setting: string;
  /** Where it was found: a file path, or "workspace settings" when VS Code did not say which file. */
  readonly where: string;
}

/** The user-only keys a settings.json (or a .code-workspace file's `settings`) sets. */
export function userOnlyKeysInSettingsText(text: string, options: { workspaceFile?: boolean } = {}): UserOnlyKey[] {
  const errors: ParseError[] = [];
  const parsed: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  const root = options.workspaceFile && isObject(parsed) ? parsed.settings : parsed;
  if (!isObject(root)) return [];
  const found = new Set<UserOnlyKey>();
  const prefix = `${SECTION}.`;
  for (const [name, value] of Object.entries(root)) {
    if (name === SECTION && isObject(value)) {
      for (const inner of Object.keys(value)) if (isUserOnly(inner)) found.add(inner);
      continue;
    }
    if (!name.startsWith(prefix)) continue;
    const key = name.slice(prefix.length);
    if (isUserOnly(key)) found.add(key);
  }
  return USER_ONLY_KEYS.filter((key) => found.has(key));
}

/** The values VS Code's inspect() reports outside the user's settings (a host that does not filter them by scope). */
export function userOnlyKeysInInspect(
  key: UserOnlyKey,
  inspected: { workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined,
  folderLabel?: string,
): IgnoredSetting[] {
  const setting = `${SECTION}.${key}`;
  const out: IgnoredSetting[] = [];
  if (inspected?.workspaceValue !== undefined) out.push({ setting, where: workspaceSettingsPlace() });
  if (inspected?.workspaceFolderValue !== undefined) out.push({ setting, where: folderSettingsPlace(folderLabel) });
  return out;
}

/** Once per window: what was not yet said, keyed by setting and place. */
export function notYetReported(found: readonly IgnoredSetting[], reported: ReadonlySet<string>): IgnoredSetting[] {
  const seen = new Set<string>();
  return found.filter((item) => {
    const id = reportId(item);
    if (reported.has(id) || seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

export function reportId({ setting, where }: IgnoredSetting): string {
  return `${setting}\n${where}`;
}

/** The warning notification (one for all) and the log lines (one per key and place). */
export function ignoredSettingsNotice(items: readonly IgnoredSetting[]): { warning: string; logLines: string[] } {
  const settings = [...new Set(items.map((item) => item.setting))];
  const places = [...new Set(items.map((item) => item.where))];
  const warning = ignoredSettingsWarning(settings.join(', '), places.join(', '), settings.length !== 1);
  const logLines = items.map(({ setting, where }) =>
    ignoredSettingLine(setting, where, userOnlyReason(keyOf(setting))),
  );
  return { warning, logLines };
}

function keyOf(setting: string): UserOnlyKey {
  const key = setting.slice(SECTION.length + 1);
  if (!isUserOnly(key)) throw new Error(`not a user-only setting: ${setting}`);
  return key;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where a command writes a setting so that the value it reads next is the one written. */
export interface SettingWrite {
  /** The editor's target: the user's settings (Remote settings for a machine-scoped key in a remote extension host), or the workspace's. */
  readonly target: 'global' | 'workspace';
  /** Where that is, in the user's words (for the log and the messages). */
  readonly where: string;
}

/**
 * The writers' side of how the settings are read (vscode settingsSource): a user-only key is read
 * from the user's value alone, which a remote extension host takes from the Remote settings, so it
 * is written there (the editor's user target, which it routes to the Remote settings for a
 * machine-scoped key), even when a workspace sets it too (that value is ignored). Any other key is
 * read merged, where a workspace's value wins over the user's: it is written to the workspace when
 * the workspace has one, else to the user's settings.
 */
export function settingWrite(
  key: string,
  inspected: { workspaceValue?: unknown } | undefined,
  remoteSide: boolean,
): SettingWrite {
  if (isUserOnly(key)) return { target: 'global', where: remoteSide ? remoteSettingsPlace() : userSettingsPlace() };
  if (inspected?.workspaceValue !== undefined) return { target: 'workspace', where: workspaceSettingsPlace() };
  return { target: 'global', where: userSettingsPlace() };
}
