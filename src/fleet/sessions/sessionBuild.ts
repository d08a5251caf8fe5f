/**
 * A server's session as the fleet builds it: one connection's session, or one per node of a
 * multi-node server; a node's log lines go to its server's log, naming the node; the server's
 * API key set before the first request.
 */
import type { ServerProfile, Settings } from '../../config/config';
import type { ServerSession } from '../../monitor/watch/session';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import type { FleetDeps, FleetSession } from '../fleetTypes';
import { MultiNodeSession, nodeServerProfile } from './multiNodeSession';

export interface SessionBuildContext {
  readonly deps: FleetDeps;
  readonly settings: Settings;
  /** A line of the server's log (serverLog.ts). */
  readonly record: (name: string, level: LogLevel, line: string) => void;
}

export async function buildSession(context: SessionBuildContext, server: ServerProfile): Promise<FleetSession> {
  if (!server.nodes) return buildNodeSession(context, server, server);
  const nodes = server.nodes;
  const sessions: ServerSession[] = [];
  try {
    for (const node of nodes)
      sessions.push(await buildNodeSession(context, server, nodeServerProfile(server, node), node.label));
  } catch (error) {
    for (const session of sessions) session.dispose();
    throw error;
  }
  return new MultiNodeSession(
    server,
    nodes.map((node, i) => ({ node, session: sessions[i]! })),
  );
}

async function buildNodeSession(
  { deps, settings, record }: SessionBuildContext,
  server: ServerProfile,
  profile: ServerProfile,
  nodeLabel?: string,
): Promise<ServerSession> {
  // Every line of the session is its server's (the name is known here, not read back from the line).
  const log: (level: LogLevel, message: string) => void =
    nodeLabel === undefined
      ? (level, message) => record(server.name, level, message)
      : (level, message) =>
          record(server.name, level, message.replace(`[${profile.name}]`, `[${server.name}] ${nodeLabel}:`));
  const session = deps.createSession
    ? await deps.createSession(profile, settings)
    : await import('./sessionFactory').then(({ createSession }) =>
        createSession(
          profile,
          settings,
          deps.ui,
          log,
          undefined,
          // One node's session of a multi-node server is never another process's (docs/broker.md).
          deps.wrapTransport && nodeLabel === undefined ? (t) => deps.wrapTransport!(server, t) : undefined,
        ),
      );
  const apiKey = await deps.apiKey?.(server.name);
  if (apiKey) session.client.setApiKey(apiKey);
  return session;
}
