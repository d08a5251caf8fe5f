/**
 * One server as every front shows it, and what a wait for it ended in: the facts the fleet hands
 * to present/ (report.ts words them) and to the fronts. Types only.
 */
import type { ServerProfile } from '../config/config';
import type { LoadBreakdown } from '../monitor/history/loadBreakdown';
import type { LoadState } from '../monitor/state/loadStateTypes';
import type { ClientChoice } from '../transport/openssh/chooseClient';
import type { Refusal } from './refusalWords';

/** A parser verification under way, as every front shows it (src/verify/progress.ts). */
export interface VerifyingNow {
  /** "verifying 5/16" */
  readonly word: string;
  /** "verifying 5/16 · reasoning (stream) waiting 42 s (1,830 tokens of reasoning so far, budget 2,048)" */
  readonly line: string;
  /** A check has waited 10 s or more: the status bar's text says `verifying 5/16` too. */
  readonly long: boolean;
}

export interface NodeSnapshot {
  readonly label: string;
  readonly host: string;
  readonly state: LoadState | undefined;
}

/** One server as every front shows it. */
export interface ServerSnapshot {
  readonly server: ServerProfile;
  readonly state: LoadState | undefined;
  /** Something watches it now (a load, or the steady state). */
  readonly watching: boolean;
  /** A load is followed: a second restart would wait. */
  readonly loading: boolean;
  readonly refusal: Refusal | undefined;
  /** The last parser verification, in one line. */
  readonly verification: string | undefined;
  /** A verification under way: where it is. */
  readonly verifying?: VerifyingNow;
  /** Its table of checks (evidence, requests, what agents suffer), for the dashboard. */
  readonly verificationTable?: string;
  /** Per node, rank 0 first, for a multi-node server. */
  readonly nodes?: readonly NodeSnapshot[];
  /** The local port forwarded to the server's url, if any. */
  readonly forwardedPort?: number;
  /** The last load that reached ready, explained (phases, rates, against the loads before it). */
  readonly lastLoad?: LoadBreakdown;
  /** Which SSH client connects to it and why; absent before its first session and for this machine. */
  readonly sshClient?: ClientChoice;
}

export type WaitResult =
  /** stalled: the load became stalled during the wait (the process lives, no witness moves); the load goes on. */
  | { readonly kind: 'ready' | 'failed' | 'stopped' | 'stalled'; readonly snapshot: ServerSnapshot }
  | { readonly kind: 'timeout' | 'cancelled' | 'not watched'; readonly snapshot: ServerSnapshot };
