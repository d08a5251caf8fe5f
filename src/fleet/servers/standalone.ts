/**
 * The fleet outside VS Code (the CLI, the MCP server): where the servers come from, where the
 * load history is kept, and how a connection may ask questions when there is no window.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { parseSettings } from '../../config/parseSettings';
import type { HostKeyPolicy, RawSettings, Settings } from '../../config/config';
import { hasOwnKeys, ownSettingsOf } from '../../config/namespace';
import type { MementoLike } from '../../monitor/history/history';
import type { SessionUi } from '../sessions/sessionFactory';
import { noServersConfigured } from '../../present/words/fleetWords';
import { fileNotJson, noSuchFile } from '../../present/words/fleetWords';

/** One server given on the command line instead of a settings file. */
export interface ServerFlags {
  readonly host?: string;
  readonly unit?: string;
  readonly url?: string;
  readonly port?: number;
  readonly username?: string;
  readonly identityFile?: string;
  readonly sudo?: boolean;
}

export interface SettingsSources {
  /** --config FILE: the kimiService.servers schema (an array of servers, or an object of kimi settings). */
  readonly configFile?: string;
  /** --settings FILE: a VS Code settings.json (its `kimiService.*` keys; the old `kimi.*` ones until VS Code migrates them). */
  readonly settingsFile?: string;
  /** --host/--unit/--url...: one server from flags. */
  readonly flags?: ServerFlags & { readonly name?: string };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
  readonly home: string;
}

export type LoadedSettings =
  | { readonly ok: true; readonly settings: Settings; readonly source: string }
  | { readonly ok: false; readonly errors: readonly string[]; readonly source: string };

/** `$XDG_CONFIG_HOME/kimi-service/servers.json` (default ~/.config). */
export function defaultConfigFile(sources: Pick<SettingsSources, 'env' | 'home' | 'platform'>): string {
  const base =
    sources.env.XDG_CONFIG_HOME ||
    (sources.platform === 'win32'
      ? sources.env.APPDATA || path.join(sources.home, 'AppData', 'Roaming')
      : path.join(sources.home, '.config'));
  return path.join(base, 'kimi-service', 'servers.json');
}

/** The user's VS Code settings.json on this platform. */
export function defaultVscodeSettingsFile(sources: Pick<SettingsSources, 'env' | 'home' | 'platform'>): string {
  if (sources.platform === 'darwin')
    return path.join(sources.home, 'Library', 'Application Support', 'Code', 'User', 'settings.json');
  if (sources.platform === 'win32')
    return path.join(
      sources.env.APPDATA || path.join(sources.home, 'AppData', 'Roaming'),
      'Code',
      'User',
      'settings.json',
    );
  return path.join(sources.env.XDG_CONFIG_HOME || path.join(sources.home, '.config'), 'Code', 'User', 'settings.json');
}

function readJsonc(file: string, read: (file: string) => string): { value?: unknown; error?: string } {
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    return {
      error:
        (error as NodeJS.ErrnoException).code === 'ENOENT' ? noSuchFile(file) : `${file}: ${(error as Error).message}`,
    };
  }
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0)
    return {
      error: fileNotJson(file, printParseErrorCode(errors[0]!.error), errors[0]!.offset),
    };
  return { value };
}

/**
 * Settings from, in order: --config FILE, the XDG servers.json, --settings FILE or the user's
 * VS Code settings.json, --host/--unit/--url flags. The first source that exists wins; a
 * source that exists but is invalid is an error (nothing is run).
 */
export function loadStandaloneSettings(
  sources: SettingsSources,
  read: (file: string) => string = (f) => fs.readFileSync(f, 'utf8'),
  exists: (file: string) => boolean = fs.existsSync,
): LoadedSettings {
  const fromConfig = (file: string): LoadedSettings => {
    const { value, error } = readJsonc(file, read);
    if (error) return { ok: false, errors: [error], source: file };
    const raw: RawSettings = Array.isArray(value)
      ? { servers: value }
      : value && typeof value === 'object'
        ? kimiOrPlain(value as Record<string, unknown>)
        : {};
    return withSource(parseSettings(raw), file);
  };
  if (sources.configFile) return fromConfig(sources.configFile);
  const xdg = defaultConfigFile(sources);
  if (exists(xdg)) return fromConfig(xdg);
  const flags = sources.flags;
  if (flags?.host || flags?.unit) {
    const server: Record<string, unknown> = {
      name: flags.name ?? flags.host ?? 'server',
      host: flags.host ?? 'local',
      unit: flags.unit,
    };
    for (const key of ['url', 'port', 'username', 'identityFile', 'sudo'] as const)
      if (flags[key] !== undefined) server[key] = flags[key];
    return withSource(parseSettings({ servers: [server] }), 'command-line flags');
  }
  const vscodeFile = sources.settingsFile ?? defaultVscodeSettingsFile(sources);
  if (sources.settingsFile || exists(vscodeFile)) {
    const { value, error } = readJsonc(vscodeFile, read);
    if (error) return { ok: false, errors: [error], source: vscodeFile };
    return withSource(parseSettings(ownSettingsOf((value ?? {}) as Record<string, unknown>).raw), vscodeFile);
  }
  return {
    ok: false,
    errors: [noServersConfigured(xdg)],
    source: 'none',
  };
}

/** An object of settings written either as VS Code keys (`kimiService.servers`) or plainly (`servers`). */
function kimiOrPlain(value: Record<string, unknown>): RawSettings {
  return hasOwnKeys(value) ? ownSettingsOf(value).raw : value;
}

function withSource(result: ReturnType<typeof parseSettings>, source: string): LoadedSettings {
  return result.ok ? { ok: true, settings: result.settings, source } : { ok: false, errors: result.errors, source };
}

/** Without a person to ask, an unknown host key is refused (`ask` becomes `strict`). */
export function nonInteractivePolicy(policy: HostKeyPolicy, interactive: boolean): HostKeyPolicy {
  return policy === 'ask' && !interactive ? 'strict' : policy;
}

/** The load history in a JSON file (VS Code keeps it in globalState). */
export class FileMemento implements MementoLike {
  private cache: Record<string, unknown> | undefined;

  constructor(private readonly file: string) {}

  get<T>(key: string): T | undefined {
    return this.load()[key] as T | undefined;
  }

  async update(key: string, value: unknown): Promise<void> {
    const data = { ...this.load() };
    if (value === undefined) delete data[key];
    else data[key] = value;
    this.cache = data;
    await fs.promises.mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await fs.promises.writeFile(tmp, JSON.stringify(data));
    await fs.promises.rename(tmp, this.file);
  }

  private load(): Record<string, unknown> {
    if (this.cache) return this.cache;
    try {
      const value: unknown = JSON.parse(fs.readFileSync(this.file, 'utf8'));
      this.cache =
        value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    } catch {
      this.cache = {};
    }
    return this.cache;
  }
}

/** `$XDG_STATE_HOME/kimi-service/history.json` (default ~/.local/state). */
export function defaultHistoryFile(
  env: Readonly<Record<string, string | undefined>>,
  home: string = os.homedir(),
): string {
  return path.join(env.XDG_STATE_HOME || path.join(home, '.local', 'state'), 'kimi-service', 'history.json');
}

/**
 * A SessionUi with nobody to ask: unknown host keys are refused (the policy decides before this
 * is called, see nonInteractivePolicy), no passphrase is given (use an agent), and a host that
 * asks for a one-time code or a password is refused as needing an interactive login.
 */
export const NO_QUESTIONS_UI: SessionUi = {
  trustUnknownHostKey: async () => false,
  requestPassphrase: async () => undefined,
};

// The status and issue waits moved to observe.ts (fronts import them from there or from here).
