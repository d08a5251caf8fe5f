/**
 * Waits on the host's answer, for fronts that report once and exit: the state now after a first
 * full look (`observe`), and the moment the host has a restart (`whenRestartIssued`).
 */
import type { ServerProfile } from '../../config/config';
import { isFinished } from '../../monitor/state/loadVerdict';
import type { LoadState } from '../../monitor/state/loadStateTypes';
import type { ServerSnapshot } from '../fleetTypes';
import type { FleetVerbs } from '../fleetVerbs';

/**
 * True once a watch that has just started has looked at everything one round looks at: the unit, then
 * /health, then (when SGLang says it is up) the completion that proves readiness. Before that
 * the state reads `loading` for a server that is in fact ready.
 */
export function firstRoundDone(state: LoadState): boolean {
  if (isFinished(state) || !state.connected) return true;
  if (state.http === undefined) return false;
  return state.http !== 'healthy' || state.completion !== undefined;
}

/**
 * The state of a server now, for a front that has just started (a CLI call, a fresh MCP
 * server): a server already watched is reported at once; otherwise the fleet watches it (nothing
 * is restarted) and this resolves after the first full probe round, or after `timeoutMs` with
 * what is known by then. The caller connects first (a refusal is its own answer).
 * (`Fleet.status` is this verb.)
 */
export function observe(
  fleet: Pick<FleetVerbs, 'snapshot' | 'onEvent' | 'watch'>,
  server: ServerProfile,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<ServerSnapshot> {
  const now = fleet.snapshot(server);
  if (now.watching && now.state && firstRoundDone(now.state)) return Promise.resolve(now);
  return new Promise<ServerSnapshot>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      subscription.dispose();
      options.signal?.removeEventListener('abort', finish);
      resolve(fleet.snapshot(server));
    };
    const timer = setTimeout(finish, Math.max(0, options.timeoutMs));
    const subscription = fleet.onEvent((event) => {
      if (event.server.name !== server.name) return;
      if (event.type === 'refused' || (event.type === 'watching' && !event.watching)) finish();
      else if (event.type === 'state' && firstRoundDone(event.state)) finish();
    });
    if (options.signal?.aborted) return finish();
    options.signal?.addEventListener('abort', finish, { once: true });
    if (!now.watching) fleet.watch(server).catch(() => finish());
  });
}

/**
 * Resolves once the host has a restart asked at `since` (the unit was seen again after
 * `systemctl restart` returned), or it was refused (failure), or the connection went away, or
 * `timeoutMs` passed. `Fleet.restart` waits for this before it answers (its `issued`), so that
 * no front reports "restarting" (or exits) before the command reached the host.
 */
export function whenRestartIssued(
  fleet: Pick<FleetVerbs, 'snapshot' | 'onEvent'>,
  server: ServerProfile,
  options: {
    timeoutMs: number;
    signal?: AbortSignal;
    /** When the restart was asked: older states are another watch's. */ since: number;
  },
): Promise<{ readonly issued: boolean; readonly snapshot: ServerSnapshot }> {
  const issued = (state: LoadState | undefined): boolean | undefined => {
    if (!state || state.restartRequestedAt === undefined || state.restartRequestedAt < options.since) return undefined;
    if (state.failure) return false;
    if (!state.connected) return false;
    if (state.confirmedAt !== undefined && state.confirmedAt >= state.restartRequestedAt) return true;
    return undefined;
  };
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      subscription.dispose();
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ issued: ok, snapshot: fleet.snapshot(server) });
    };
    const check = () => {
      const verdict = issued(fleet.snapshot(server).state);
      if (verdict !== undefined) finish(verdict);
    };
    const onAbort = () => finish(false);
    const timer = setTimeout(() => finish(false), Math.max(0, options.timeoutMs));
    const subscription = fleet.onEvent((event) => {
      if (event.server.name !== server.name) return;
      if (event.type === 'watching' && !event.watching) {
        // The watch this restart replaces (a steady watch after ready) ends as the new one starts,
        // in the same turn: only a server left unwatched after it ends the wait.
        queueMicrotask(() => {
          const now = fleet.snapshot(server);
          if (!now.watching) finish(issued(now.state) ?? false);
        });
        return;
      }
      if (event.type === 'state') check();
    });
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    check();
  });
}
