/**
 * The extension's settings section, and the one it had before (`kimi.*`, which Moonshot's own
 * Kimi Code extension also uses). Pure: what the migration carries over and how a settings
 * object's keys of this extension are read.
 */

/** The section of every setting, command, view and context key of this extension. */
export const SECTION = 'kimiService';

/** The extension's id (publisher.name), as the editor's settings name it (remote.extensionKind). */
export const EXTENSION_ID = 'kimi-tools.kimi-service';
const PREFIX = `${SECTION}.`;

/** The settings the watch and the fronts read (package.json's contributes.configuration, less the chat model's). */
export const SETTING_KEYS = [
  'servers',
  'activeServer',
  'knownHostsFile',
  'hostKeyPolicy',
  'ssh.client',
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

/** The keys this extension had under `kimi.` (no other `kimi.*` key is ever read: Kimi Code owns them). */
export const LEGACY_KEYS = [...SETTING_KEYS, 'chatModel.enabled', 'chatModel.maxOutputTokens'] as const;
export type LegacyKey = (typeof LEGACY_KEYS)[number];
const LEGACY_PREFIX = 'kimi.';

/** The `kimiService.*` keys of a settings.json object, without the prefix. */
export function sectionKeysOf(settings: Record<string, unknown>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings))
    if (key.startsWith(PREFIX)) raw[key.slice(PREFIX.length)] = value;
  return raw;
}

/** This extension's old `kimi.*` keys in a settings.json object (only those of LEGACY_KEYS), without the prefix. */
export function legacyKeysOf(settings: Record<string, unknown>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const key of LEGACY_KEYS) {
    const value = settings[LEGACY_PREFIX + key];
    if (value !== undefined) raw[key] = value;
  }
  return raw;
}

/** Whether a settings.json object has any key of this extension, new or old. */
export function hasOwnKeys(settings: Record<string, unknown>): boolean {
  return Object.keys(sectionKeysOf(settings)).length > 0 || Object.keys(legacyKeysOf(settings)).length > 0;
}

/**
 * The settings of this extension in a settings.json object: the `kimiService.*` keys, or, in a
 * file the migration has not seen yet (none of them), the old `kimi.*` keys of this extension.
 */
export function ownSettingsOf(settings: Record<string, unknown>): {
  raw: Record<string, unknown>;
  legacy: boolean;
} {
  const current = sectionKeysOf(settings);
  if (Object.keys(current).length > 0) return { raw: current, legacy: false };
  const legacy = legacyKeysOf(settings);
  return { raw: legacy, legacy: Object.keys(legacy).length > 0 };
}

/**
 * What the first start copies: each old key with a value where the new key has none. Values the
 * user already set under the new name win; nothing is deleted.
 */
export function migrationPlan(
  legacy: Partial<Record<LegacyKey, unknown>>,
  current: Partial<Record<LegacyKey, unknown>>,
): { key: LegacyKey; value: unknown }[] {
  const plan: { key: LegacyKey; value: unknown }[] = [];
  for (const key of LEGACY_KEYS) {
    if (legacy[key] === undefined || current[key] !== undefined) continue;
    plan.push({ key, value: legacy[key] });
  }
  return plan;
}

export const legacyName = (key: LegacyKey): string => LEGACY_PREFIX + key;
export const settingName = (key: string): string => PREFIX + key;
