/**
 * The MCP client configuration of this server, as Claude Code (`.mcp.json`, `claude mcp add`)
 * and Cursor (`.cursor/mcp.json`, `~/.cursor/mcp.json`) read it:
 * `{"mcpServers":{"kimi":{"command":"kimi-service","args":["mcp"]}}}`. Pure.
 */
export const MCP_SERVER_NAME = 'kimi';

export interface McpServerEntry {
  readonly command: string;
  readonly args: readonly string[];
}

/** The entry that runs the bundled server: `node <script> [extra args]`. */
export function mcpServerEntry(scriptPath: string, extraArgs: readonly string[] = []): McpServerEntry {
  return { command: 'node', args: [scriptPath, ...extraArgs] };
}

/**
 * The entry through the installed `kimi-service` command (`kimi-service mcp`): the command is the
 * bare name when its folder is on PATH, else the launcher's full path. It outlives updates, since
 * the launcher follows the extension's folder. On Windows: `cmd /c kimi-service mcp`.
 */
export function launcherMcpEntry(
  command: string,
  extraArgs: readonly string[] = [],
  platform: NodeJS.Platform = 'linux',
): McpServerEntry {
  // On Windows the launcher is a batch file, which clients start without a shell only through cmd.
  if (platform === 'win32') return { command: 'cmd', args: ['/c', command, 'mcp', ...extraArgs] };
  return { command, args: ['mcp', ...extraArgs] };
}

/** The whole configuration with only this server, as text (what the clipboard gets). */
export function mcpConfigText(entry: McpServerEntry, name: string = MCP_SERVER_NAME): string {
  return `${JSON.stringify({ mcpServers: { [name]: entry } }, null, 2)}\n`;
}

/** `claude mcp add` for the same entry (arguments quoted for a POSIX shell when needed). */
export function claudeMcpAddCommand(entry: McpServerEntry, name: string = MCP_SERVER_NAME): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return ['claude', 'mcp', 'add', name, '--', entry.command, ...entry.args].map(quote).join(' ');
}

export type MergeResult =
  | { readonly ok: true; readonly text: string; readonly replaced: boolean }
  | { readonly ok: false; readonly error: string };

/**
 * An existing `.mcp.json` (or none) with this server's entry added or replaced; every other
 * entry and key is kept, in order. The file is plain JSON (as Claude Code and Cursor read it): a
 * file that is not a JSON object, or whose `mcpServers` is not one, is an error and is not
 * overwritten. (No JSONC library here: this module is also bundled into the extension.)
 */
export function mergeMcpConfig(
  existing: string | undefined,
  entry: McpServerEntry,
  name: string = MCP_SERVER_NAME,
): MergeResult {
  if (existing === undefined || existing.trim() === '')
    return { ok: true, text: mcpConfigText(entry, name), replaced: false };
  let value: unknown;
  try {
    value = JSON.parse(existing.replace(/^\uFEFF/, ''));
  } catch (error) {
    return { ok: false, error: `not valid JSON (${(error as Error).message})` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'not a JSON object' };
  const config = value as Record<string, unknown>;
  const servers = config.mcpServers ?? {};
  if (!servers || typeof servers !== 'object' || Array.isArray(servers))
    return { ok: false, error: '"mcpServers" is not an object' };
  const replaced = Object.prototype.hasOwnProperty.call(servers, name);
  const merged = {
    ...config,
    mcpServers: { ...(servers as Record<string, unknown>), [name]: { command: entry.command, args: [...entry.args] } },
  };
  const eol = existing.includes('\r\n') ? '\r\n' : '\n';
  const indent = /^\{\r?\n(\t|[ ]+)"/.exec(existing)?.[1] ?? 2;
  return { ok: true, text: `${JSON.stringify(merged, null, indent).replace(/\n/g, eol)}${eol}`, replaced };
}

/**
 * `--settings FILE` for the entry when the VS Code that runs the extension keeps its user
 * settings elsewhere than VS Code's own `Code/User` folder, which the server reads by default
 * (VS Code Insiders, VSCodium, code-server, a portable install...). Its user folder is two levels
 * above the extension's global storage (`User/globalStorage/<id>`). Nothing for VS Code itself,
 * or when that settings.json does not exist.
 */
export function userSettingsArgs(
  globalStoragePath: string | undefined,
  exists: (file: string) => boolean,
  pathApi: { dirname(p: string): string; basename(p: string): string; join(...p: string[]): string },
): string[] {
  if (!globalStoragePath) return [];
  const userDir = pathApi.dirname(pathApi.dirname(globalStoragePath));
  if (pathApi.basename(userDir) === 'User' && pathApi.basename(pathApi.dirname(userDir)) === 'Code') return [];
  const file = pathApi.join(userDir, 'settings.json');
  return exists(file) ? ['--settings', file] : [];
}
