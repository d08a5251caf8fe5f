/**
 * The restart rule every front follows (docs/restart-rule.md): a restart asked while a load is
 * under way follows that load instead of restarting again, unless the caller forces it. Pure:
 * the fleet looks at the host and acts on the answer.
 */
import type { ServiceStatus } from '../../target/target';
import { hasRunningProcess } from '../../monitor/state/unitFailure';
import { beingStarted, beingStopped, followedHere, stillLoading } from '../../present/words/restartWords';

/** What is known of a server when a restart is asked. */
export type RestartSituation =
  /** This fleet follows a load of the server already (a restart asked moments ago, a watch's load). */
  | { readonly kind: 'followed' }
  /** The unit as the host shows it now; `serving`: /health answered 200 (asked only when the rule needs it). */
  | { readonly kind: 'unit'; readonly unit: ServiceStatus; readonly serving?: boolean }
  /** The host could not be asked (the restart then reads the unit itself, and restarts nothing if it cannot). */
  | { readonly kind: 'unknown' }
  /** The connection was refused (host key, login, network): nothing can be restarted. */
  | { readonly kind: 'refused'; readonly reason: string };

export interface RestartRequest {
  /** Restart even if a load is under way (`--force`, `force: true`, "Restart anyway"). */
  readonly force?: boolean;
  readonly now: number;
  /** kimiService.loadTimeoutMinutes: a run younger than this that does not serve yet is a load under way. */
  readonly loadTimeoutMs: number;
}

export type RestartDecision =
  | { readonly action: 'restart' }
  /** A load is under way: follow it; `reason` says which, in the words every front shows. */
  | { readonly action: 'follow'; readonly reason: string }
  | { readonly action: 'refuse'; readonly reason: string }
  /** The unit runs a young process in a state that does not tell: ask /health, then decide again. */
  | { readonly action: 'ask health' };

export function decideRestart(situation: RestartSituation, request: RestartRequest): RestartDecision {
  if (situation.kind === 'refused') return { action: 'refuse', reason: situation.reason };
  if (request.force) return { action: 'restart' };
  if (situation.kind === 'followed') return { action: 'follow', reason: followedHere() };
  if (situation.kind === 'unknown') return { action: 'restart' };
  const { unit } = situation;
  if (unit.activeState === 'deactivating') return { action: 'follow', reason: beingStopped(unit.id) };
  // A start job between the old process and the new one (an ExecStartPre, PID 1 forking it).
  if (unit.activeState === 'activating' && !hasRunningProcess(unit))
    return { action: 'follow', reason: beingStarted(unit.id) };
  const startedAt = unit.execMainStartedAt;
  if (!hasRunningProcess(unit) || startedAt === undefined) return { action: 'restart' };
  const age = request.now - startedAt;
  if (age > request.loadTimeoutMs) return { action: 'restart' };
  const loading = {
    action: 'follow',
    reason: stillLoading(unit.id, Math.round(age / 1000)),
  } as const;
  if (unit.activeState === 'activating') return loading;
  // A Type=simple unit is `active` for its whole load: the server itself says whether it serves.
  if (situation.serving === undefined) return { action: 'ask health' };
  return situation.serving ? { action: 'restart' } : loading;
}
