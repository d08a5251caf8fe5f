/**
 * The fleet's sessions, one per server: created on first use (one creation at a time per
 * server), replaced when the server's or the connection's settings change (at once when idle or
 * under steady watch, after its load when it loads: such a session is stale until then).
 */
import type { ServerProfile, Settings } from '../../config/config';
import type { WatchOptions } from '../../monitor/watch/watchTypes';
import { FleetError } from '../fleetError';
import { fleetClosed } from '../../present/words/forwardWords';
import { settingsChanged } from '../../present/words/fleetWords';
import type { FleetSession } from '../fleetTypes';

/** The watch options of the settings. */
export function watchOptionsOf(settings: Settings): WatchOptions {
  return {
    pollIntervalMs: settings.pollIntervalMs,
    stallMs: settings.stallMs,
    loadTimeoutMs: settings.loadTimeoutMs,
    unreachableTimeoutMs: settings.unreachableTimeoutMs,
    ...(settings.watchAfterReady ? { steadyIntervalMs: settings.healthIntervalMs } : {}),
  };
}

/** The settings a running watch was started with: a change replaces its session. */
function watchSettingsKey(s: Settings): string {
  return [
    s.pollIntervalMs,
    s.stallMs,
    s.loadTimeoutMs,
    s.unreachableTimeoutMs,
    s.watchAfterReady,
    s.healthIntervalMs,
  ].join();
}

export class SessionRegistry {
  private readonly sessions = new Map<string, FleetSession>();
  private readonly pending = new Map<string, Promise<FleetSession>>();
  /** Sessions whose settings changed during a load: replaced once that load ends. */
  private readonly stale = new Set<FleetSession>();
  private closed = false;

  constructor(private readonly create: (server: ServerProfile) => Promise<FleetSession>) {}

  get(name: string): FleetSession | undefined {
    return this.sessions.get(name);
  }

  /** A session of the server is being created. */
  creating(name: string): boolean {
    return this.pending.has(name);
  }

  all(): FleetSession[] {
    return [...this.sessions.values()];
  }

  /** The session of a server, created on first use. */
  async sessionFor(server: ServerProfile): Promise<FleetSession> {
    const existing = this.sessions.get(server.name);
    if (existing) return existing;
    let pending = this.pending.get(server.name);
    if (!pending) {
      pending = this.create(server);
      this.pending.set(server.name, pending);
    }
    try {
      const session = await pending;
      if (this.closed) {
        session.dispose();
        throw new FleetError('closed', fleetClosed());
      }
      this.sessions.set(server.name, session);
      return session;
    } finally {
      this.pending.delete(server.name);
    }
  }

  /**
   * New settings: each session whose server or connection settings changed is replaced (idle or
   * under steady watch) or marked stale (loading). The servers whose steady watch was dropped.
   */
  reconfigure(previous: Settings, next: Settings): ServerProfile[] {
    const dropped: ServerProfile[] = [];
    for (const [name, session] of this.sessions) {
      const profile = next.servers.find((s) => s.name === name);
      const same =
        profile !== undefined &&
        JSON.stringify(profile) === JSON.stringify(session.profile) &&
        previous.knownHostsFile === next.knownHostsFile &&
        previous.hostKeyPolicy === next.hostKeyPolicy &&
        previous.sshClient === next.sshClient &&
        (!session.watching || watchSettingsKey(previous) === watchSettingsKey(next));
      if (same) continue;
      if (session.busy) {
        this.stale.add(session);
        continue;
      }
      this.sessions.delete(name);
      const wasWatching = session.watching;
      session.dispose();
      if (wasWatching && profile) dropped.push(profile);
    }
    return dropped;
  }

  /**
   * A load ended: a stale session still watching is stopped and forgotten (true), so that the
   * next watch gets a session with the new settings.
   */
  retireIfStale(session: FleetSession): boolean {
    if (!this.stale.has(session) || !session.watching) return false;
    this.forget(session);
    session.stop(settingsChanged());
    return true;
  }

  /** A session's watch closed: a stale one is disposed and forgotten. */
  closedWatch(session: FleetSession): void {
    if (!this.stale.delete(session)) return;
    session.dispose();
    this.forget(session);
  }

  private forget(session: FleetSession): void {
    const name = session.profile.name;
    if (this.sessions.get(name) === session) this.sessions.delete(name);
  }

  dispose(): void {
    this.closed = true;
    for (const session of [...this.sessions.values(), ...this.stale]) session.dispose();
    this.sessions.clear();
    this.stale.clear();
  }
}
