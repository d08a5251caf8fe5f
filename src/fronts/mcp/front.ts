/**
 * The MCP server's fleet and settings: one fleet (one SSH connection per server) for the whole
 * life of the process, settings read from the same sources as the CLI and read again at each
 * tool call (a fixed file applies without restarting the server; an unchanged one changes
 * nothing). Unknown host keys are refused: there is nobody to ask (hostKeyPolicy "ask" acts as
 * "strict"; hostKeyText says so in the log and in every refusal). The server's API key, when it
 * is not in the unit's command line, comes from KIMI_API_KEY (VS Code's secret storage is not
 * reachable from this process).
 */
import * as os from 'node:os';
import type { HostKeyPolicy, Settings } from '../../config/config';
import type { SettingsRead, SettingsSource } from '../../config/settingsSource';
import { Fleet } from '../../fleet/fleet';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import { FileSettingsSource } from '../../fleet/servers/fileSettingsSource';
import { defaultHistoryFile, FileMemento, NO_QUESTIONS_UI, nonInteractivePolicy } from '../../fleet/servers/standalone';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { invalidSettingsText } from '../../present/serverRefusalText';
import type { McpArgs } from './args';

/** What the host-key policy means in this server, in the log's words. Pure. */
export function hostKeyText(policy: HostKeyPolicy): string {
  switch (policy) {
    case 'ask':
      return `Host keys: hostKeyPolicy "ask" acts as "strict" in the MCP server (nobody can be asked): an unknown host key is refused; put the host in the known-hosts file first (ssh to it once, run kimi-service status on a terminal, or connect once from the VS Code extension)`;
    case 'strict':
      return 'Host keys: hostKeyPolicy "strict": an unknown host key is refused; a changed one always is';
    case 'accept-new':
      return 'Host keys: hostKeyPolicy "accept-new": an unknown host key is added to the known-hosts file; a changed one is refused';
  }
}

/** Added to a refusal of an unknown host key, so the model can tell the user why nobody asked. */
export const HOST_KEY_REFUSED_HINT =
  'Nobody can be asked about a host key in the MCP server (hostKeyPolicy "ask" acts as "strict" here): put the host in the known-hosts file first (ssh to it once, or run kimi-service status on a terminal, which asks), then call again.';

export interface FrontOptions {
  readonly args: McpArgs;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (level: LogLevel, message: string) => void;
  readonly home?: string;
  readonly platform?: NodeJS.Platform;
}

export class McpFront implements SettingsSource {
  readonly fleet: FrontFleet;
  private readonly source: FileSettingsSource;
  private applied: string | undefined;
  private lastError: string | undefined;

  constructor(private readonly options: FrontOptions) {
    const home = options.home ?? os.homedir();
    this.fleet = new Fleet({
      ui: NO_QUESTIONS_UI,
      log: options.log,
      history: new FileMemento(defaultHistoryFile(options.env, home)),
      apiKey: async () => options.env.KIMI_API_KEY || undefined,
    });
    this.source = new FileSettingsSource(
      {
        ...(options.args.configFile ? { configFile: options.args.configFile } : {}),
        ...(options.args.settingsFile ? { settingsFile: options.args.settingsFile } : {}),
        env: options.env,
        platform: options.platform ?? process.platform,
        home,
      },
      true,
    ); // keeps "ask" as written, so the log and the refusals can say what it became
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
    const asked = read.settings.hostKeyPolicy;
    // Nobody can answer a host-key question here: "ask" acts as "strict".
    const settings: Settings = { ...read.settings, hostKeyPolicy: nonInteractivePolicy(asked, false) };
    const key = JSON.stringify(settings);
    if (key !== this.applied) {
      this.options.log(
        'info',
        `Servers from ${read.source}: ${settings.servers.map((s) => s.name).join(', ') || 'none'}`,
      );
      this.options.log('info', hostKeyText(asked));
      this.fleet.configure(settings);
      this.applied = key;
    }
    return { ...read, settings };
  }

  dispose(): void {
    this.fleet.dispose();
  }
}
