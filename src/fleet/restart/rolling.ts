/**
 * A rolling restart: servers restarted one at a time, the next only once the previous one is
 * ready and its parsers verified, so the others keep serving meanwhile. The first failure stops
 * the roll. Knows nothing of VS Code; every front drives it with the fleet's own verbs.
 */
import type { ServerProfile } from '../../config/config';
import type { RestartAnswer, WaitResult } from '../fleetTypes';
import { serverReport } from '../../present/report';
import { rollingFollowed } from '../../present/words/fleetWords';
import * as words from '../../present/words/rollingWords';

/** The fleet verbs a roll uses (the Fleet has them; tests give a fake). */
export interface RollingFleet {
  restart(server: ServerProfile): Promise<Pick<RestartAnswer, 'kind'>>;
  waitFor(server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }): Promise<WaitResult>;
  verifyParsers(
    server: ServerProfile,
    log: (line: string) => void,
  ): Promise<{ summary: string; allPassed: boolean | undefined }>;
}

export type RollStep = 'restarting' | 'loading' | 'verifying' | 'done';

export interface RollProgress {
  readonly server: ServerProfile;
  /** 0-based position of the server in the roll. */
  readonly index: number;
  readonly total: number;
  readonly step: RollStep;
  /** "restarting b (2/3)". */
  readonly text: string;
}

export interface RollOptions {
  /** How long one server may take to be ready (its load timeout). */
  readonly loadTimeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: RollProgress) => void;
  readonly log?: (line: string) => void;
}

export type RollResult =
  | { readonly kind: 'done'; readonly restarted: readonly string[] }
  | {
      readonly kind: 'failed' | 'cancelled';
      /** The server the roll stopped at. */
      readonly server: string;
      /** Why, in words a person reads. */
      readonly reason: string;
      /** Restarted, ready and verified before it stopped. */
      readonly restarted: readonly string[];
      /** Not touched. */
      readonly skipped: readonly string[];
    };

class RollStop extends Error {
  constructor(
    readonly kind: 'failed' | 'cancelled',
    reason: string,
  ) {
    super(reason);
  }
}

function waitFailure(result: WaitResult): string {
  const report = serverReport(result.snapshot);
  switch (result.kind) {
    case 'failed':
      return words.itFailed(report.lastError);
    case 'stopped':
      return words.itIsStopped();
    case 'timeout':
      return words.notReadyInTime(report.state);
    case 'not watched':
      return words.cannotBeWatched(report.lastError ?? report.state);
    default:
      return words.loadEnded(result.kind);
  }
}

/** One line that says how a roll ended (the notification's text). */
export function rollSummary(result: RollResult): string {
  if (result.kind === 'done') return words.rollDone(result.restarted);
  return words.rollStopped(result.kind === 'cancelled', result.server, result.reason, result.restarted, result.skipped);
}

/**
 * Restarts `servers` in order. Each one: restart (a load already under way is followed, not
 * restarted again), wait for ready, verify the parsers (all checks must pass). A cancellation
 * stops before the next step; the load under way goes on.
 */
export async function rollingRestart(
  fleet: RollingFleet,
  servers: readonly ServerProfile[],
  options: RollOptions,
): Promise<RollResult> {
  const restarted: string[] = [];
  const total = servers.length;
  for (const [index, server] of servers.entries()) {
    const progress = (step: RollStep, text: string) =>
      options.onProgress?.({ server, index, total, step, text: `${text} (${index + 1}/${total})` });
    const cancelled = () => {
      if (options.signal?.aborted) throw new RollStop('cancelled', words.cancelledByUser());
    };
    try {
      cancelled();
      progress('restarting', words.restartingStep(server.name));
      const restart = await fleet.restart(server);
      if (restart.kind === 'watched') options.log?.(rollingFollowed(server.name));
      cancelled();
      progress('loading', words.waitingStep(server.name));
      const wait = await fleet.waitFor(server, {
        timeoutMs: options.loadTimeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (wait.kind === 'cancelled') throw new RollStop('cancelled', words.cancelledLoadGoesOn());
      if (wait.kind !== 'ready') throw new RollStop('failed', waitFailure(wait));
      cancelled();
      progress('verifying', words.verifyingStep(server.name));
      const verification = await fleet.verifyParsers(server, (line) => options.log?.(`[${server.name}] ${line}`));
      if (verification.allPassed !== true) throw new RollStop('failed', words.parsersNotVerified(verification.summary));
      restarted.push(server.name);
      progress('done', words.readyStep(server.name, verification.summary));
    } catch (error) {
      const stop =
        error instanceof RollStop
          ? error
          : new RollStop('failed', error instanceof Error ? error.message : String(error));
      return {
        kind: stop.kind,
        server: server.name,
        reason: stop.message,
        restarted,
        skipped: servers.slice(index + 1).map((s) => s.name),
      };
    }
  }
  return { kind: 'done', restarted };
}

/** The servers a roll proposes: those whose model path is `reference`'s (the active server's; just it when unknown). */
export function sameModelDefaults(
  names: readonly string[],
  modelPaths: ReadonlyMap<string, string | undefined>,
  reference: string | undefined,
): string[] {
  const path = reference ? modelPaths.get(reference) : undefined;
  if (path === undefined) return reference && names.includes(reference) ? [reference] : [];
  return names.filter((name) => modelPaths.get(name) === path);
}
