/**
 * The MCP server's fleet and settings: one fleet (one SSH connection per server) for the whole
 * life of the process, settings read from the same sources as the CLI and read again at each
 * tool call (a fixed file applies without restarting the server; an unchanged one changes
 * nothing). Unknown host keys are refused: there is nobody to ask.
 */
import * as os from 'node:os';
import type { Settings } from '../../config/config';
import { Fleet } from '../../fleet/fleet';
import {
  defaultHistoryFile,
  FileMemento,
  loadStandaloneSettings,
  nonInteractivePolicy,
  NO_QUESTIONS_UI,
  type SettingsSources,
} from '../../fleet/standalone';
import type { LogLevel } from '../../monitor/watcher';
import type { McpArgs } from './args';
import type { SettingsNow } from './tools';

export interface FrontOptions {
  readonly args: McpArgs;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (level: LogLevel, message: string) => void;
  readonly home?: string;
  readonly platform?: NodeJS.Platform;
}

export class McpFront {
  readonly fleet: Fleet;
  private applied: string | undefined;
  private lastError: string | undefined;

  constructor(private readonly options: FrontOptions) {
    this.fleet = new Fleet({
      ui: NO_QUESTIONS_UI,
      log: options.log,
      history: new FileMemento(defaultHistoryFile(options.env, this.home)),
    });
  }

  private get home(): string {
    return this.options.home ?? os.homedir();
  }

  /** The settings now; the fleet is configured with them when they changed. */
  settings(): SettingsNow {
    const sources: SettingsSources = {
      ...(this.options.args.configFile ? { configFile: this.options.args.configFile } : {}),
      ...(this.options.args.settingsFile ? { settingsFile: this.options.args.settingsFile } : {}),
      env: this.options.env,
      platform: this.options.platform ?? process.platform,
      home: this.home,
    };
    const loaded = loadStandaloneSettings(sources);
    if (!loaded.ok) {
      const message = `The Kimi configuration is not valid (${loaded.source}): ${loaded.errors.join('; ')}. Nothing was run; fix it and call again.`;
      if (message !== this.lastError) this.options.log('error', message);
      this.lastError = message;
      return { ok: false, message };
    }
    this.lastError = undefined;
    const settings: Settings = {
      ...loaded.settings,
      hostKeyPolicy: nonInteractivePolicy(loaded.settings.hostKeyPolicy, false),
    };
    const key = JSON.stringify(settings);
    if (key !== this.applied) {
      this.options.log(
        'info',
        `Servers from ${loaded.source}: ${settings.servers.map((s) => s.name).join(', ') || 'none'}`,
      );
      this.fleet.configure(settings);
      this.applied = key;
    }
    return { ok: true, settings };
  }

  dispose(): void {
    this.fleet.dispose();
  }
}
