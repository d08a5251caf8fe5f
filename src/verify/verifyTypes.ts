/** The verifier's shapes: what it needs (HTTP through the tunnel), and what it finds. */
import type { Budgets } from './budget';
import type { CheckName } from './checks';
import type { Judgement, KnownFault } from './judges';

export interface VerifierDeps {
  getJson(path: string, options?: { signal?: AbortSignal }): Promise<{ status: number; body: unknown }>;
  postJson(
    path: string,
    body: unknown,
    options?: {
      stream?: boolean;
      signal?: AbortSignal;
      timeoutMs?: number;
      /** A streamed answer's text as it arrives (the whole body still comes back at the end). */
      onText?: (text: string) => void;
      /** A streamed answer's response began (its status and headers came). */
      onResponse?: () => void;
    },
  ): Promise<{ status: number; body: string; truncated?: boolean }>;
  /** Per request (a retry at a bigger budget gets more, see retryTimeoutMs). */
  readonly timeoutMs: number;
  /** The running server's command line (vLLM, which has no /server_info); undefined when there is none. */
  runningArgv?(): Promise<readonly string[] | undefined>;
  /** At most this many requests at once; CONCURRENCY when unset. */
  readonly concurrency?: number;
}

/**
 * Why a check is inconclusive: undefined for an answer cut by max_tokens (or longer than the
 * client reads), 'time' when the time ran out while the model was seen still at work.
 */
export type InconclusiveCause = 'time';

export interface CheckResult {
  readonly name: CheckName;
  readonly status: Judgement['status'];
  readonly evidence: string;
  /** The request, in short, when it did not pass. */
  readonly request?: string;
  /** What an agent suffers, when it did not pass. */
  readonly consequence?: string;
  /** A fault the chat model repairs on the way, when the judge recognised one. */
  readonly fault?: KnownFault;
  /** Inconclusive because the time ran out (see InconclusiveCause). */
  readonly cause?: InconclusiveCause;
}

export interface VerifyResult {
  readonly checks: readonly CheckResult[];
  readonly allPassed: boolean;
  /** From GET /v1/models, when it answered. */
  readonly model?: string;
  /** The max_tokens budgets used; undefined when no chat request could be made. */
  readonly budgets?: Budgets;
}
