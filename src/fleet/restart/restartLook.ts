/**
 * The look a restart takes before it acts: what this fleet follows, then the unit on the host
 * (and /health when the unit does not tell), judged by the restart rule (restartRule.ts).
 */
import type { ServerProfile } from '../../config/config';
import { targetFor, targetIo, type ServiceStatus } from '../../target/target';
import { isTiedToRun, isFinished } from '../../monitor/state/loadVerdict';
import { ServerSession } from '../../monitor/watch/session';
import type { FleetEvent, FleetSession, ServerSnapshot } from '../fleetTypes';
import { decideRestart, type RestartDecision } from './restartRule';

/** How long a restart waits for a watch still at its first look to say what it follows. */
const FIRST_LOOK_WAIT_MS = 10_000;

export interface LookHost {
  snapshot(server: ServerProfile): ServerSnapshot;
  onEvent(listener: (event: FleetEvent) => void): { dispose(): void };
  readonly loadTimeoutMs: number;
}

/** The restart rule applied to what the fleet and the host say now; the look at the unit it took. */
export async function lookBeforeRestart(
  host: LookHost,
  session: FleetSession,
  force: boolean,
): Promise<{ decision: RestartDecision; unitBefore?: ServiceStatus }> {
  const request = { force, now: Date.now(), loadTimeoutMs: host.loadTimeoutMs };
  if (force) return { decision: decideRestart({ kind: 'followed' }, request) };
  const server = session.profile;
  // A watch that is still looking at the unit (not yet tied to a run) is not a load under way yet: let it look.
  if (session.busy) await untilLoadKnown(host, server, FIRST_LOOK_WAIT_MS);
  if (session.busy) return { decision: decideRestart({ kind: 'followed' }, request) };
  let unit: ServiceStatus;
  try {
    const state = await targetFor(server).readState(targetIo(session.transport, 20_000));
    unit = state.unit;
    // /health goes where the run is: a url on the job's node is asked there, not at `{node}`.
    session.client.setNode(state.node);
  } catch {
    return { decision: decideRestart({ kind: 'unknown' }, request) };
  }
  const named = { ...unit, id: unit.id ?? server.unit };
  let decision = decideRestart({ kind: 'unit', unit: named }, request);
  if (decision.action === 'ask health') {
    const health = await session.client.health();
    const serving = health.kind === 'http' && health.status === 200;
    decision = decideRestart({ kind: 'unit', unit: named, serving }, request);
  }
  // One connection's look: the restart of a single-node server uses it instead of its own.
  return decision.action === 'restart' && session instanceof ServerSession
    ? { decision, unitBefore: unit }
    : { decision };
}

/** Resolves once the server's watch follows a load under way, or is no longer loading, or after `ms`. */
function untilLoadKnown(host: LookHost, server: ServerProfile, ms: number): Promise<void> {
  // Known: not loading, or loading a process it follows. A watch whose state is already final
  // (stopped, failed) but whose round has not ended is not a load under way either: wait for it.
  const known = () => {
    const { loading, state } = host.snapshot(server);
    if (!loading) return true;
    return state !== undefined && !isFinished(state) && (isTiedToRun(state) || state.restartRequestedAt !== undefined);
  };
  if (known()) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      subscription.dispose();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const subscription = host.onEvent((event) => {
      if (event.server.name === server.name && known()) done();
    });
  });
}
