/** The load state's shape and the signals the reducer (loadState.ts) folds into it. */
import type { ActivityKind, GpuMemory, JournalEvent, LoadPhase } from '../../engine/events';
import type { ServiceStatus } from '../../target/target';
import type { Activity } from '../../engine/activity';
import type { CpuSample, ProgressMark } from './witnessMoves';
import type { LoadPrior } from '../eta/eta';
import type { IoSample } from '../eta/ioRate';
import type { ShownEta } from '../eta/etaDamp';
import type { StandIn } from '../../host/portOwner';

/** The word the status bar shows. */
export type Verdict =
  | 'stopped'
  | 'stopping'
  | 'restarting'
  | 'loading'
  | 'warming up'
  | 'ready'
  | 'unhealthy'
  | 'failed'
  | 'unreachable'
  | 'stalled';

/** /health failures in a row, after ready and while the process lives, that make a server unhealthy. */
export const UNHEALTHY_AFTER_FAILURES = 3;

export type HttpVerdict = 'refused' | 'warming' | 'healthy' | 'error';

/** Everything the monitor knows about one load. Built only by `reduce`. */
export interface LoadState {
  readonly verdict: Verdict;
  readonly phase: LoadPhase | undefined;
  readonly watchStartedAt: number;
  readonly restartRequestedAt: number | undefined;
  /** The service process this load belongs to; signals about another process end it. */
  readonly mainPid: number | undefined;
  readonly processStartedAt: number | undefined;
  readonly baselineRestarts: number | undefined;
  readonly unit: ServiceStatus | undefined;
  readonly shards: { readonly done: number; readonly total: number } | undefined;
  readonly cudaGraphBatches:
    | {
        readonly done: number;
        readonly total: number;
        /** The first count above 0 seen, and when: the capture's rate is measured from there. */
        readonly firstDoneAt?: { readonly at: number; readonly done: number };
      }
    | undefined;
  /** Overall progress of the load, 0..1, never decreasing within one process. */
  readonly progress: number | undefined;
  readonly lastProgressAt: number;
  readonly lastSignal: { readonly at: number; readonly text: string } | undefined;
  readonly http: HttpVerdict | undefined;
  readonly readyLogSeen: boolean;
  /** The last 1-token completion's verdict, when one was tried. */
  readonly completion: { readonly ok: boolean; readonly detail: string } | undefined;
  readonly readyAt: number | undefined;
  readonly failure: { readonly summary: string; readonly lines: readonly string[] } | undefined;
  readonly recentErrors: readonly string[];
  readonly connected: boolean;
  readonly downSince: number | undefined;
  readonly connectionError: string | undefined;
  /** The transport's kind of fault (e.g. host-key-changed, auth), when the connection is down. */
  readonly connectionErrorKind: string | undefined;
  readonly stalled: boolean;
  /** /health answers in a row that were not 200, counted once the server is ready. */
  readonly healthFailures: number;
  /** The last time the host itself confirmed what this state says (a unit, journal or HTTP answer). */
  readonly confirmedAt: number | undefined;
  /** Whether the unit's journal can be read; undefined until journalctl has said either way. */
  readonly journal: { readonly readable: boolean; readonly detail?: string } | undefined;
  /** Set when the restart was not ours: someone else (or systemd) restarted the unit. */
  readonly restartedBy: 'us' | 'someone else' | undefined;
  // --- witnesses ---
  /** Latest bytes witness: bytes read by MainPID and its descendants, and the model's size. */
  readonly io:
    | { readonly at: number; readonly readBytes: number; readonly coldBytes?: number; readonly totalBytes?: number }
    | undefined;
  /** Recent bytes samples (last ~60 s), for the read rate and the ETA. */
  readonly ioSamples: readonly IoSample[];
  /** Bytes/s over the last ~30 s of samples. */
  readonly readRate: number | undefined;
  /**
   * Bytes and time spent reading, split into cold (read_bytes grew) and warm (only the rest
   * grew), summed over the whole load: the mean rates the history keeps.
   */
  readonly ioTotals: {
    readonly coldBytes: number;
    readonly coldMs: number;
    readonly warmBytes: number;
    readonly warmMs: number;
  };
  /** Latest GPU memory reading (total over GPUs and per GPU). */
  readonly gpu:
    | {
        readonly at: number;
        readonly usedMiB: number;
        readonly totalMiB: number;
        readonly perGpu: readonly GpuMemory[];
        readonly utilPercent?: number;
      }
    | undefined;
  /** Highest total GPU memory seen in this load (moves are measured from progressMark, see witnessMoves.ts). */
  readonly gpuPeakMiB: number;
  /** When each phase was first seen. */
  readonly phaseTimes: Readonly<Partial<Record<LoadPhase, number>>>;
  /** What history and the page cache said before the load (rates, fixed phases, residency). */
  readonly prior: LoadPrior | undefined;
  /** Estimated time of readiness, once there is enough signal; recomputed at each signal. */
  readonly eta: ShownEta | undefined;
  /** Set once when the shard count and the bytes read disagree badly; the watcher logs it. */
  readonly witnessWarning: string | undefined;
  // --- named quiet phases and stalls (docs/phases-and-stalls.md) ---
  /** The long quiet step under way inside the phase (a JIT compile, weights after the last shard), if known. */
  readonly activity: Activity | undefined;
  /** The kinds of quiet step this load has gone through (or is in): a foreseen compile no longer to come. */
  readonly stepsSeen?: readonly ActivityKind[];
  /** The step the engine's own lines announced (activity is this, else one the state implies). */
  readonly lineActivity: Activity | undefined;
  /** SGLang's `Load weight end` lines seen (one per rank: the others may still be processing theirs). */
  readonly weightsEnded: number;
  /** vLLM said its weights are loaded (`Loading weights took`: one line for every worker). */
  readonly weightsDone: boolean;
  /** When the weights' bytes were all read, or the last shard line came (the earlier), inside the weights phase. */
  readonly weightsReadAt?: number;
  /** CPU time of the service's process tree: the latest reading, and the cores it kept busy lately. */
  readonly cpu: { readonly at: number; readonly seconds: number; readonly cores: number | undefined } | undefined;
  readonly cpuSamples: readonly CpuSample[];
  /** The witnesses' readings at the last progress: a move is measured from there, not from the last reading. */
  readonly progressMark: ProgressMark;
  /** Which witness moved last (at lastProgressAt), for "last seen". */
  readonly lastProgressWitness: string | undefined;
  // --- who answers the port (host/portOwner.ts) ---
  /** Another process holds the socket listening on the server's port: its answers are not the server's. */
  readonly standIn: StandIn | undefined;
  /**
   * The phase before an HTTP answer advanced it to `warming up`, while that advance has no other
   * witness: when the answer turns out to come from a stand-in, the load goes back to it.
   */
  readonly phaseBeforeHttp?: { readonly phase: LoadPhase | undefined; readonly at: number };
}

export type Signal =
  | { readonly kind: 'restartRequested'; readonly at: number; readonly external?: boolean }
  /** Whether journalctl can read the unit's journal (it says so on stderr, or by exiting). */
  | { readonly kind: 'journalStatus'; readonly at: number; readonly readable: boolean; readonly detail?: string }
  /** The unit as seen right after `systemctl restart` returned, or when a watch starts: the watch is tied to its run. */
  | { readonly kind: 'tiedToRun'; readonly at: number; readonly unit: ServiceStatus }
  | { readonly kind: 'restartFailed'; readonly at: number; readonly message: string }
  | { readonly kind: 'unit'; readonly at: number; readonly unit: ServiceStatus }
  | { readonly kind: 'journal'; readonly at: number; readonly event: JournalEvent; readonly text: string }
  | { readonly kind: 'http'; readonly at: number; readonly result: HttpVerdict; readonly detail: string }
  | { readonly kind: 'completion'; readonly at: number; readonly ok: boolean; readonly detail: string }
  | {
      readonly kind: 'connection';
      readonly at: number;
      readonly up: boolean;
      readonly error?: string;
      readonly errorKind?: string;
    }
  | { readonly kind: 'tick'; readonly at: number; readonly stallMs: number }
  /**
   * Bytes read by MainPID + descendants. `readBytes` is the larger of read_bytes (storage reads,
   * mmap faults included, page-cache hits not), rchar (read() calls, page-cache hits included,
   * mmap faults not) and the cgroup's rbytes: a cold mmap load shows only in read_bytes, a
   * read()-based or page-cached load only in rchar, and a filesystem without block accounting
   * (tmpfs, some overlay/container setups) keeps read_bytes at 0; taking the larger never counts
   * a byte twice and never stays at 0 while either grows. `coldBytes` is read_bytes alone.
   */
  | {
      readonly kind: 'io';
      readonly at: number;
      readonly readBytes: number;
      readonly coldBytes?: number;
      readonly totalBytes?: number;
    }
  | {
      readonly kind: 'gpu';
      readonly at: number;
      readonly usedMiB: number;
      readonly totalMiB: number;
      readonly perGpu: readonly GpuMemory[];
      readonly utilPercent?: number;
    }
  /** CPU seconds (user + system) of MainPID and its descendants, or of the unit's cgroup. */
  | { readonly kind: 'cpu'; readonly at: number; readonly cpuSeconds: number }
  /**
   * Who holds the socket listening on the server's port, as the sampler saw it: a stand-in, or
   * none (the service itself, nobody, or who cannot be told).
   */
  | { readonly kind: 'listener'; readonly at: number; readonly standIn: StandIn | undefined }
  /** History / page-cache knowledge for this load (ETA prior); sent at the start of a watch. */
  | { readonly kind: 'prior'; readonly at: number; readonly prior: LoadPrior };
