/**
 * What the language-model tools need from the extension: the fleet, and the controller's view of
 * the settings (which server is active, whether they are valid). The Controller satisfies it; a
 * test can hand in a stand-in. Errors are thrown with a text a model can act on.
 */
import * as vscode from 'vscode';
import { parseSettings, type ServerProfile } from '../../config/config';
import type { Fleet } from '../../fleet/fleet';

export interface ToolHost {
  readonly fleet: Fleet;
  /** The active server after loading and checking the settings; undefined (and the user told why) otherwise. */
  activeServerProfile(): ServerProfile | undefined;
  /** The server's session, or undefined after telling the user why there is none (e.g. host "local" on the UI side). */
  openSession(server: ServerProfile): Promise<unknown>;
}

/** What the tools read from the `kimi` settings themselves (the rest goes through the host). */
export interface ToolSettings {
  /** kimi.confirmRestart: ask before a restart, as the command does. */
  confirmRestart(): boolean;
  /** Why no server can be used: the invalid settings by name, or that none is configured. */
  problem(): string;
}

export const vscodeToolSettings: ToolSettings = {
  confirmRestart: () => vscode.workspace.getConfiguration('kimi').get<boolean>('confirmRestart', true) !== false,
  problem: () => {
    // The controller reports the same errors to the user; the model gets them in the thrown error.
    const config = vscode.workspace.getConfiguration('kimi');
    const raw = Object.fromEntries(Object.entries(config).filter(([, value]) => typeof value !== 'function'));
    const parsed = parseSettings(raw);
    if (!parsed.ok)
      return `The Kimi settings are invalid, so nothing was run: ${parsed.errors.join(' ')} The user must fix them (Settings, "kimi.").`;
    if (parsed.settings.servers.length === 0)
      return 'No Kimi server is configured, so nothing was run: the user must add one to the setting kimi.servers.';
    return 'The Kimi settings could not be used; the "Kimi Service" output channel says why. Nothing was run.';
  },
};

/** The server a tool input names (`server`), else the active one. */
export function resolveServer(host: ToolHost, settings: ToolSettings, name: string | undefined): ServerProfile {
  const active = host.activeServerProfile();
  if (!active) throw new Error(settings.problem());
  if (name === undefined || name.trim() === '') return active;
  const server = host.fleet.server(name.trim());
  if (server) return server;
  const names = host.fleet.servers.map((s) => `"${s.name}"`).join(', ');
  throw new Error(
    `There is no Kimi server named "${name}". Configured servers: ${names}. Omit "server" to use the active one ("${active.name}").`,
  );
}

/** The session of a server, or an error saying why there is none. */
export async function requireSession(host: ToolHost, server: ServerProfile): Promise<void> {
  if (!(await host.openSession(server))) {
    throw new Error(
      `Cannot set up the connection to ${server.name}; the notification and the "Kimi Service" output channel say why. Nothing was run.`,
    );
  }
}

/** Reads one optional field of a tool input, checking its type (invokeTool does not always validate). */
export function optional<T extends 'string' | 'number' | 'boolean'>(
  input: unknown,
  key: string,
  type: T,
): (T extends 'string' ? string : T extends 'number' ? number : boolean) | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'object' || Array.isArray(input)) throw new Error('The tool input must be a JSON object.');
  const value = (input as Record<string, unknown>)[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
    throw new Error(`"${key}" must be a ${type}, not ${JSON.stringify(value)}.`);
  }
  return value as never;
}
