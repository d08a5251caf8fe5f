/**
 * What provideLanguageModelChatInformation answers for each call. VS Code 1.109+ reads the
 * provider's `configuration` schema (contributes.languageModelChatProviders): "Add Models… →
 * Kimi Service" in its Language Models editor makes a named group holding a `server`, and asks
 * the provider once for its own entry (no configuration) and once per group (with the group's
 * configuration; the extension host passes no group name). Every offered model is listed in the
 * provider's own entry (the servers live in kimiService.servers, not in VS Code's groups), so a
 * group lists nothing more: VS Code names a group's models apart, and would list the same model
 * twice. A group naming no configured server says how to add it. Older versions pass no
 * configuration. Pure.
 */

/** The command VS Code makes for the servers view (`<view id>.focus`): its welcome offers Add server. */
export const SERVERS_VIEW_FOCUS = 'kimiService.servers.focus';

/** The property of contributes.languageModelChatProviders[0].configuration that names a server. */
export const GROUP_SERVER_PROPERTY = 'server';

export type ModelListAnswer =
  /** The provider's own entry: every model offered now. */
  | { readonly list: 'all' }
  /** A group: its server's model is already in the provider's own entry. */
  | { readonly list: 'none' }
  /** A group naming no configured server: shown on the group, and the servers view is the fix. */
  | { readonly list: 'none'; readonly problem: string };

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

export function modelListAnswer(options: unknown, configuredServers: readonly string[]): ModelListAnswer {
  const configuration = field(options, 'configuration');
  if (configuration === undefined || configuration === null) return { list: 'all' };
  const server = field(configuration, GROUP_SERVER_PROPERTY);
  // A group VS Code made itself (per-model options) carries no server: nothing to say about it.
  if (server === undefined || server === '') return { list: 'none' };
  if (typeof server === 'string' && configuredServers.includes(server)) return { list: 'none' };
  const named = typeof server === 'string' ? `"${server}"` : 'a server';
  const known = configuredServers.length ? ` (configured: ${configuredServers.join(', ')})` : ' (none configured yet)';
  return {
    list: 'none',
    problem:
      `Kimi Service: no server named ${named} in kimiService.servers${known}. ` +
      'Add it with Add server in the Kimi Service servers view; its model is then listed under Kimi Service once the server is ready and verified.',
  };
}
