/**
 * The MCP server's fleet and settings: one fleet (one SSH connection per server) for the whole
 * life of the process, settings read from the same sources as the CLI and read again at each
 * tool call (a fixed file applies without restarting the server; an unchanged one changes
 * nothing). Unknown host keys are refused: there is nobody to ask.
 */
import * as os from 'node:os';
import type { SettingsRead, SettingsSource } from '../../config/settingsSource';
import { Fleet } from '../../fleet/fleet';
import { FileSettingsSource } from '../../fleet/fileSettingsSource';
import { defaultHistoryFile, FileMemento, NO_QUESTIONS_UI } from '../../fleet/standalone';
import type { LogLevel } from '../../monitor/watcher';
import { invalidSettingsText } from '../../present/serverChoice';
import type { McpArgs } from './args';

export interface FrontOptions {
  readonly args: McpArgs;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (level: LogLevel, message: string) => void;
  readonly home?: string;
  readonly platform?: NodeJS.Platform;
}

export class McpFront implements SettingsSource {
  readonly fleet: Fleet;
  private readonly source: FileSettingsSource;
  private applied: string | undefined;
  private lastError: string | undefined;

  constructor(private readonly options: FrontOptions) {
    const home = options.home ?? os.homedir();
    this.fleet = new Fleet({
      ui: NO_QUESTIONS_UI,
      log: options.log,
      history: new FileMemento(defaultHistoryFile(options.env, home)),
    });
    this.source = new FileSettingsSource({
      ...(options.args.configFile ? { configFile: options.args.configFile } : {}),
      ...(options.args.settingsFile ? { settingsFile: options.args.settingsFile } : {}),
      env: options.env,
      platform: options.platform ?? process.platform,
      home,
    });
  }

  /** The settings now; the fleet is configured with them when they changed. */
  read(): SettingsRead {
    const read = this.source.read();
    if (!read.ok) {
      const message = invalidSettingsText(read.source, read.errors);
      if (message !== this.lastError) this.options.log('error', message);
      this.lastError = message;
      return read;
    }
    this.lastError = undefined;
    const key = JSON.stringify(read.settings);
    if (key !== this.applied) {
      this.options.log(
        'info',
        `Servers from ${read.source}: ${read.settings.servers.map((s) => s.name).join(', ') || 'none'}`,
      );
      this.fleet.configure(read.settings);
      this.applied = key;
    }
    return read;
  }

  dispose(): void {
    this.fleet.dispose();
  }
}
