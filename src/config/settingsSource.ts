/**
 * Where a front's `kimiService.*` settings come from, read one way: VS Code's configuration
 * (fronts/vscode/settings/settingsSource) or files and environment (fleet/servers/fileSettingsSource, for the
 * CLI and the MCP server). Each read parses again, so a fixed setting applies at the next call.
 */
import type { Settings } from './config';

export type SettingsRead =
  | { readonly ok: true; readonly settings: Settings; readonly source: string }
  | { readonly ok: false; readonly errors: readonly string[]; readonly source: string };

export interface SettingsSource {
  read(): SettingsRead;
}
