/** The settings and the server a CLI call acts on: files, flags and environment, or why there are none. */
import * as l10n from '@vscode/l10n';
import type { ServerProfile, Settings } from '../../config/config';
import { FileSettingsSource } from '../../fleet/servers/fileSettingsSource';
import { resolveServer } from '../../fleet/servers/resolveServer';
import { serverChoiceText } from '../../present/serverRefusalText';
import type { CliCommand } from './args';
import type { CliIo } from './cliContext';

/** The settings and the server to act on, or why there are none (exit 5, nothing run). */
export function configure(
  cmd: CliCommand,
  io: CliIo,
): { settings: Settings; server: ServerProfile } | { error: string } {
  const fromFlags = cmd.flags.host !== undefined || cmd.flags.unit !== undefined;
  const loaded = new FileSettingsSource(
    {
      ...(cmd.configFile !== undefined ? { configFile: cmd.configFile } : {}),
      ...(cmd.settingsFile !== undefined ? { settingsFile: cmd.settingsFile } : {}),
      ...(fromFlags ? { flags: { ...cmd.flags, ...(cmd.server !== undefined ? { name: cmd.server } : {}) } } : {}),
      env: io.env,
      platform: io.platform,
      home: io.home,
    },
    io.terminal !== undefined,
  ).read();
  if (!loaded.ok)
    return {
      error:
        loaded.source === 'none'
          ? loaded.errors.join('\n')
          : `${l10n.t('the settings from {0} are not valid:', loaded.source)}\n${loaded.errors.join('\n')}`,
    };
  if (fromFlags && loaded.source !== 'command-line flags') {
    // The servers file won over the flags: acting on another server than the one named would be worse than stopping.
    return {
      error: l10n.t(
        '--host/--unit were given, but the servers come from {0}; pick one of its servers with --server NAME, or pass --config FILE',
        loaded.source,
      ),
    };
  }
  const { settings } = loaded;
  const choice = resolveServer(settings, cmd.server);
  if (!choice.ok) return { error: serverChoiceText(choice, loaded.source) };
  const server = choice.server;
  return { settings, server };
}
