/** The watcher's options, dependencies, outcomes and timings (watcher.ts and its witnesses). */
import type { ServerProfile } from '../../config/config';
import type { Transport } from '../../transport/transport';
import type { ServerNodeShell, ServiceStatus, Target } from '../../target/target';
import type { ServerHttpClient } from '../../engine/serverHttp';
import type { LoadState } from '../state/loadStateTypes';
import type { LoadPrior } from '../eta/eta';

export interface WatchOptions {
  readonly pollIntervalMs: number;
  readonly stallMs: number;
  readonly loadTimeoutMs: number;
  readonly unreachableTimeoutMs: number;
  /**
   * After a load ends in ready, failed or stopped, keep watching (journal follow, /health and
   * the unit at this interval) so the state stays true; undefined: stop watching there.
   */
  readonly steadyIntervalMs?: number;
  /** /health says up but the completion keeps failing this long: alert (default 30 s). */
  readonly completionAlertMs?: number;
  /**
   * false: a node rank >= 1 of a multi-node server, which serves no HTTP: no /health or
   * completion; it is ready once its journal says its load is done (CUDA graphs captured).
   */
  readonly servesHttp?: boolean;
}

export type LogLevel = 'trace' | 'info' | 'warn' | 'error';

export interface WatcherDeps {
  readonly profile: ServerProfile;
  readonly transport: Transport;
  readonly http: ServerHttpClient;
  readonly options: WatchOptions;
  readonly log: (level: LogLevel, message: string) => void;
  readonly now?: () => number;
  /** What history and the page cache say about this load (ETA prior), if known. */
  readonly prior?: LoadPrior;
  /** What is restarted and watched; default: the profile's unit or container (targetFor). */
  readonly target?: Target;
  /** A look at the unit taken moments before a restart (by whoever decided to restart): not asked again. */
  readonly unitBefore?: ServiceStatus;
}

/** How a watch ended. `state` is the last load state. */
export interface WatchOutcome {
  readonly end: 'ready' | 'failed' | 'stopped' | 'timeout' | 'unreachable' | 'cancelled';
  readonly state: LoadState;
  readonly message?: string;
}

/** Something the user should be told while the watch goes on (the fronts choose how). */
export interface WatchAlert {
  readonly kind: 'completion' | 'journal' | 'url' | 'unhealthy' | 'recovered' | 'time-limit';
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
}

export const COMMAND_TIMEOUT_MS = 20_000;
/** While the port is seen closed, one /health every this many rounds (a backstop for the port witness). */
export const HEALTH_BACKSTOP_ROUNDS = 5;

export interface WantedSampler {
  readonly pid: number;
  readonly intervalMs: number;
  readonly listenPort: number | undefined;
  /** The server's node when it is not the SSH host: the sampler runs there. */
  readonly place?: Extract<ServerNodeShell, { kind: 'inside' }>;
}

export function urlPort(url: string): number | undefined {
  try {
    const parsed = new URL(url);
    return parsed.port ? Number(parsed.port) : 80;
  } catch {
    return undefined;
  }
}

/**
 * `systemctl show` while only one of the journal and the sampler is live: a backstop (the journal
 * reports systemd's exit lines, the sampler a main process gone, at once).
 */
export const UNIT_BACKSTOP_MS = 5 * 60_000;
export const STEADY_UNIT_BACKSTOP_MS = 10 * 60_000;
/**
 * How often a load's watch reads the state of a target whose ends only its state tells
 * (Target.endsOnlyInState); a steady watch reads it each steady round.
 */
export const STATE_READ_WHILE_LOADING_MS = 10_000;
export const JOURNAL_RETRY_FIRST_MS = 1_000;
export const JOURNAL_RETRY_MAX_MS = 60_000;
export const COMPLETION_PROMPT = 'hi';
export const COMPLETION_ALERT_MS = 30_000;
/** Journal lines read for the cause of a run found already failed. */
export const FAILURE_TAIL_LINES = 200;
/**
 * Reads of that tail while none of its lines tells the cause, this far apart: a young death's
 * last lines reach the journal within milliseconds of systemd's, and the failure is said within
 * a second of the exit (4 reads, 250 ms apart), as every other crash is.
 */
export const FAILURE_TAIL_READS = 4;
export const FAILURE_TAIL_RETRY_MS = 250;
/** A process that ends this soon after its start may have its last lines in the journal after systemd's. */
export const EARLY_EXIT_MS = 5_000;
