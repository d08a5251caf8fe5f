/**
 * Which server a call is about, for every front (VS Code commands, the language-model tools, the
 * MCP server, the CLI): the one named, else the active one (kimiService.activeServer), else the first.
 * Pure; the words of a refusal are present/serverRefusalText's.
 */
import type { ServerProfile, Settings } from '../../config/config';
import type { ServerRefusal } from '../../present/serverRefusalText';

export type ServerChoice =
  | { readonly ok: true; readonly server: ServerProfile }
  | ({ readonly ok: false } & ServerRefusal);

/** `name` undefined or blank: the active server. */
export function resolveServer(settings: Pick<Settings, 'servers' | 'activeServer'>, name?: string): ServerChoice {
  if (settings.servers.length === 0) return { ok: false, reason: 'none' };
  const wanted = name?.trim();
  if (!wanted)
    return { ok: true, server: settings.servers.find((s) => s.name === settings.activeServer) ?? settings.servers[0]! };
  const server = settings.servers.find((s) => s.name === wanted);
  if (server) return { ok: true, server };
  return { ok: false, reason: 'unknown', name: wanted, known: settings.servers.map((s) => s.name) };
}
