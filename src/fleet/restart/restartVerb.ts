/**
 * The restart verb, the one door of every restart (docs/restart-rule.md): the look and the rule
 * (restartLook.ts, restartRule.ts), the front's choices while a load is under way (follow it,
 * restart anyway, cancel) and its confirmation, then the restart's watch, resolved once the host
 * has the restart (`issued`) or after the issue timeout.
 */
import type { ServerProfile } from '../../config/config';
import type { ServiceStatus } from '../../target/target';
import type { WatchOutcome } from '../../monitor/watch/watchTypes';
import type { FleetSession, RestartOptions, RestartAnswer } from '../fleetTypes';
import { FleetError } from '../fleetError';
import { whenRestartIssued } from './observe';
import { lookBeforeRestart, type LookHost } from './restartLook';
import { followingAsAsked } from '../../present/words/restartWords';
import { restartedAgain } from '../../present/words/fleetWords';

/** How long a restart waits for the host to have it (the unit seen again after `systemctl restart`). */
const ISSUE_WAIT_MS = 60_000;

/** What a front that can ask its user passes to the restart. */
export interface RestartQuestions {
  /** Asked when a load is under way: follow it, restart anyway, or cancel. */
  readonly choose?: (reason: string) => Promise<'follow' | 'restart' | 'cancel'>;
  /** Asked before a restart the rule allows (false: nothing is restarted). */
  readonly confirm?: () => Promise<boolean>;
}

/** What the verb needs of the fleet. */
export interface RestartHost extends LookHost {
  connect(server: ServerProfile): Promise<FleetSession>;
  /** The fleet's watch of the server: `watch` follows what is there, `restart` restarts it first. */
  startWatch(
    server: ServerProfile,
    mode: 'restart' | 'watch',
    unitBefore?: ServiceStatus,
  ): Promise<WatchOutcome | undefined>;
}

/** The restart rule applied, with the front's questions; undefined when the user cancelled. */
export async function restartThroughRule(
  host: RestartHost,
  server: ServerProfile,
  options: RestartOptions & RestartQuestions,
): Promise<RestartAnswer | undefined> {
  const session = await host.connect(server);
  let force = options.force === true;
  let { decision, unitBefore } = await lookBeforeRestart(host, session, force);
  if (decision.action === 'follow' && options.choose) {
    const choice = await options.choose(decision.reason);
    if (choice === 'cancel') return undefined;
    force = choice === 'restart';
    // The user took their time: what is under way now is looked at again (and looked at by the restart).
    unitBefore = undefined;
    if (force) decision = { action: 'restart' };
    else {
      // Follow, as asked, whatever is there now (the load may have ended meanwhile: then its state is watched).
      const now = (await lookBeforeRestart(host, session, false)).decision;
      decision = now.action === 'follow' ? now : { action: 'follow', reason: followingAsAsked() };
    }
  } else if (decision.action === 'restart' && !force && options.confirm) {
    if (!(await options.confirm())) return undefined;
    ({ decision } = await lookBeforeRestart(host, session, false));
    unitBefore = undefined;
  }
  if (decision.action === 'follow') {
    const outcome = session.busy ? session.whenLoadEnds() : host.startWatch(server, 'watch');
    return { kind: 'watched', reason: decision.reason, outcome };
  }
  if (decision.action === 'refuse') throw new FleetError('refused', decision.reason);
  if (session.busy) session.stop(restartedAgain());
  const since = Date.now();
  const outcome = host.startWatch(server, 'restart', unitBefore);
  const { issued, snapshot } = await whenRestartIssued(host, server, {
    timeoutMs: options.issueTimeoutMs ?? ISSUE_WAIT_MS,
    since,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { kind: 'restarted', outcome, issued, snapshot };
}
