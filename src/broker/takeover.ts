/**
 * What a new owner shows while its own watch catches up (docs/broker.md, "Handover"). Taking
 * over, it watches afresh every server the old owner watched: that watch reads the run's
 * journal from its start and goes through `loading` and `warming up` again before its first
 * look ends, for a server that was ready all along. Until then every window keeps the state the
 * old owner last sent (and its parser verification), and the fresh watch's states that are only
 * behind it are not shown: a takeover never makes a ready server look like it loads again. The
 * fresh watch shows through at once when it finds something else (a new run, a failure, a stop,
 * the host unreachable), and at the latest at its first end. Pure: the fleet feeds it events.
 */
import type { ServerProfile } from '../config/config';
import type { FleetEvent, ServerSnapshot } from '../fleet/fleetTypes';
import type { LoadState, Verdict } from '../monitor/state/loadStateTypes';
import { processKey } from '../monitor/state/unitChange';

/** The order a load's verdicts come in: a fresh watch of the same run passes through the lower ones again. */
const RANK: Partial<Record<Verdict, number>> = { loading: 1, 'warming up': 2, ready: 3 };

/** After this long the fresh watch's state is shown whatever it says (it never caught up: that is news). */
export const HOLD_MAX_MS = 60_000;

/**
 * True when `fresh` (a watch that has just started) only replays what `inherited` already
 * said of the same run: a lower verdict of the load's order, or the same loading verdict with
 * less progress.
 */
export function isBehind(fresh: LoadState, inherited: LoadState): boolean {
  if (fresh.unit && inherited.unit && processKey(fresh.unit) !== processKey(inherited.unit)) return false;
  const f = RANK[fresh.verdict];
  const i = RANK[inherited.verdict];
  if (f === undefined || i === undefined) return false;
  if (f !== i) return f < i;
  return f < RANK.ready! && (fresh.progress ?? 0) < (inherited.progress ?? 0);
}

interface Held {
  readonly state: LoadState;
  readonly since: number;
}

/** The old owner's parser verification of the run, kept by the new owner until it has one of its own. */
export interface InheritedChecks {
  readonly verification: string | undefined;
  readonly verificationTable?: string;
}

export class TakeoverHold {
  private readonly held = new Map<string, Held>();
  private readonly checks = new Map<string, InheritedChecks & { readonly run: string | undefined }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A server taken over, with the snapshot (state and verification) the old owner last sent. */
  hold(name: string, inherited: Pick<ServerSnapshot, 'state' | 'verification' | 'verificationTable'>): void {
    const state = inherited.state;
    if (!state) return;
    this.held.set(name, { state, since: this.now() });
    if (inherited.verification !== undefined)
      this.checks.set(name, {
        verification: inherited.verification,
        ...(inherited.verificationTable !== undefined ? { verificationTable: inherited.verificationTable } : {}),
        run: state.unit ? processKey(state.unit) : undefined,
      });
  }

  isHeld(name: string): boolean {
    return this.held.has(name);
  }

  /** The inherited verification, while the server's own state is still the same run (or says no run yet). */
  checksOf(name: string, own: LoadState | undefined): InheritedChecks | undefined {
    const checks = this.checks.get(name);
    if (!checks) return undefined;
    if (own?.unit && checks.run !== undefined && processKey(own.unit) !== checks.run) {
      this.checks.delete(name);
      return undefined;
    }
    return {
      verification: checks.verification,
      ...(checks.verificationTable !== undefined ? { verificationTable: checks.verificationTable } : {}),
    };
  }

  /**
   * A command acts on the server (a restart, a stop, a watch that is news): its own watch's
   * states are the truth from now on, and `forgetChecks` (a new load) drops the verification.
   */
  release(name: string, forgetChecks: boolean): void {
    this.held.delete(name);
    if (forgetChecks) this.checks.delete(name);
  }

  clear(): void {
    this.held.clear();
    this.checks.clear();
  }

  /**
   * The events to show for one event of the fresh watch: none while it is behind; when it
   * catches up, its state (said as a change from the inherited one) and the event itself.
   */
  filter(event: FleetEvent): FleetEvent[] {
    const name = event.server.name;
    // This fleet's own verification (or its failure): the inherited one is no longer needed.
    if (event.type === 'verified') this.checks.delete(name);
    const held = this.held.get(name);
    if (!held) return [event];
    const server: ServerProfile = event.server;
    switch (event.type) {
      case 'state':
        if (this.now() - held.since < HOLD_MAX_MS && isBehind(event.state, held.state)) return [];
        this.held.delete(name);
        return [{ ...event, previous: held.state }];
      case 'end':
        this.held.delete(name);
        return [{ type: 'state', server, state: event.outcome.state, previous: held.state }, event];
      case 'watching':
        if (!event.watching) this.held.delete(name);
        return [event];
      default:
        return [event];
    }
  }
}
