/**
 * The settings of a front outside VS Code (the CLI, the MCP server): from --config, the XDG
 * servers.json, a VS Code settings.json or command-line flags (fleet/servers/standalone decides the
 * order), with an unknown host key refused when nobody can be asked.
 */
import type { Settings } from '../../config/config';
import type { SettingsRead, SettingsSource } from '../../config/settingsSource';
import { loadStandaloneSettings, nonInteractivePolicy, type SettingsSources } from './standalone';

export class FileSettingsSource implements SettingsSource {
  constructor(
    private readonly sources: SettingsSources,
    /** A person at a terminal can answer a host-key question. */
    private readonly interactive = false,
  ) {}

  read(): SettingsRead {
    const loaded = loadStandaloneSettings(this.sources);
    if (!loaded.ok) return loaded;
    const settings: Settings = {
      ...loaded.settings,
      hostKeyPolicy: nonInteractivePolicy(loaded.settings.hostKeyPolicy, this.interactive),
    };
    return { ok: true, settings, source: loaded.source };
  }
}
