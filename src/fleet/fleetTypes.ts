/** The fleet's public shapes: its sessions, events, snapshots and the answers of its verbs. */
import type { ServerProfile, Settings } from '../config/config';
import type { MementoLike } from '../monitor/history/history';
import type { LoadState } from '../monitor/state/loadStateTypes';
import type { ServerSession } from '../monitor/watch/session';
import type { LogLevel, WatchAlert, WatchOutcome } from '../monitor/watch/watchTypes';
import type { Transport, TransportError } from '../transport/transport';
import type { SessionUi } from './sessions/sessionFactory';
import type { Refusal } from '../present/refusalWords';
import type { CheckResult } from '../verify/verifier';
import type { ForwardInfo } from './forward/forwardPlan';
import type { MultiNodeSession } from './sessions/multiNodeSession';
import type { NodeSnapshot, ServerSnapshot, VerifyingNow, WaitResult } from '../present/serverSnapshot';

export type { NodeSnapshot, ServerSnapshot, VerifyingNow, WaitResult };

/** One server's session: one connection, or one per node of a multi-node server. */
export type FleetSession = ServerSession | MultiNodeSession;

export type FleetEvent =
  | { readonly type: 'state'; readonly server: ServerProfile; readonly state: LoadState; readonly previous: LoadState }
  /** A load ended (`quiet`: a watch resumed on its own found what was known already). */
  | { readonly type: 'end'; readonly server: ServerProfile; readonly outcome: WatchOutcome; readonly quiet: boolean }
  | { readonly type: 'alert'; readonly server: ServerProfile; readonly alert: WatchAlert }
  | {
      readonly type: 'refused';
      readonly server: ServerProfile;
      readonly refusal: Refusal;
      readonly error: TransportError;
    }
  | { readonly type: 'connected'; readonly server: ServerProfile }
  | {
      readonly type: 'verified';
      readonly server: ServerProfile;
      readonly summary: string;
      readonly allPassed: boolean | undefined;
      /** Each check's outcome (none when the verification could not run). */
      readonly checks: readonly CheckResult[];
    }
  /** A parser verification under way: where it is (each second, and at each check's end). */
  | { readonly type: 'verifying'; readonly server: ServerProfile; readonly verifying: VerifyingNow }
  /** A watch began, or ended for good. */
  | { readonly type: 'watching'; readonly server: ServerProfile; readonly watching: boolean }
  /** A port forward opened (`forward`) or closed (undefined). */
  | { readonly type: 'forward'; readonly server: ServerProfile; readonly forward: ForwardInfo | undefined };

/** What a parser verification found, as every front shows it (src/present/verifyReport.ts). */
export interface ParserVerification {
  readonly summary: string;
  readonly allPassed: boolean | undefined;
  readonly table: string;
  /** verified | failed | inconclusive (answers cut by max_tokens) | incomplete (requests unanswered). */
  readonly verdict: 'verified' | 'failed' | 'inconclusive' | 'incomplete';
}

export interface FleetDeps {
  readonly ui: SessionUi;
  readonly log: (level: LogLevel, message: string) => void;
  /** Where the load history lives (VS Code's globalState, a file for the CLI). */
  readonly history: MementoLike;
  /** The API key of a server, if one is stored for it. */
  readonly apiKey?: (serverName: string) => Promise<string | undefined>;
  /** Builds a session (default: SSH or local, see sessionFactory). */
  readonly createSession?: (server: ServerProfile, settings: Settings) => Promise<ServerSession>;
  /** Wraps the transport of a default session (the broker routes a client's commands and HTTP through its owner). */
  readonly wrapTransport?: (server: ServerProfile, transport: Transport) => Transport;
}

/** How a restart request was met. */
export type RestartAnswer =
  /** `issued`: the host has the restart (false after the issue timeout: `snapshot` says why). */
  | {
      readonly kind: 'restarted';
      readonly outcome: Promise<WatchOutcome | undefined>;
      readonly issued: boolean;
      readonly snapshot: ServerSnapshot;
    }
  /** A load was already under way (here, or started by someone else): followed, not restarted. */
  | { readonly kind: 'watched'; readonly reason: string; readonly outcome: Promise<WatchOutcome | undefined> };

export interface RestartOptions {
  /** Restart even if a load is under way. */
  readonly force?: boolean;
  /** How long the restart waits for the host to have it (default 60 s). */
  readonly issueTimeoutMs?: number;
  /** Stops waiting for the host (the restart itself is not taken back). */
  readonly signal?: AbortSignal;
}
