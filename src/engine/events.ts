/** What one SGLang journal line says, once parsed (see server/journal.ts). */
export type JournalEvent =
  | { readonly type: 'phase'; readonly phase: LoadPhase }
  | { readonly type: 'shards'; readonly done: number; readonly total: number; readonly percent: number }
  | { readonly type: 'cudaGraphBatches'; readonly done: number; readonly total: number }
  | {
      readonly type: 'weightsLoaded';
      readonly elapsedSeconds?: number;
      readonly memUsageGB?: number;
      readonly availMemGB?: number;
      /** Model class, e.g. DeepseekV3ForCausalLM. */
      readonly modelType?: string;
      /** Only in the older format, e.g. torch.bfloat16. */
      readonly dtype?: string;
    }
  | { readonly type: 'kvCache'; readonly tokens?: number; readonly sizeGB?: number }
  /** `Capture cuda graph end.`: every rank logs it; the last load line of a rank that serves no HTTP (node rank >= 1). */
  | { readonly type: 'graphsCaptured' }
  | { readonly type: 'httpUp'; readonly url?: string }
  | { readonly type: 'ready' }
  /** An error worth showing: traceback header/footer, OOM, CUDA error, warm-up failure. */
  | {
      readonly type: 'error';
      readonly text: string;
      readonly fatal: boolean;
      /** Not a line of its own: what explains the exception before it (the line that raised it, "Possible solutions"). */
      readonly detail?: boolean;
    }
  /**
   * A long, quiet step the engine announced (a JIT compile, torch.compile, autotuning): `start`
   * names it, `progress` counts it (its own tqdm bar), `end` says it finished (server/activity.ts).
   */
  | {
      readonly type: 'activity';
      readonly activity: ActivityKind;
      readonly edge: 'start' | 'progress' | 'end';
      readonly done?: number;
      readonly total?: number;
    }
  /** systemd's own words about the unit: started, stopping, main process exited, failed. */
  | {
      readonly type: 'systemd';
      readonly what: 'started' | 'stopping' | 'stopped' | 'exited' | 'failed' | 'scheduled-restart';
      readonly text: string;
    };

/** The long quiet steps the monitor names (their words: server/activity.ts ACTIVITY_LABELS). */
export type ActivityKind = 'deepgemm' | 'torch-compile' | 'flashinfer-jit' | 'autotune' | 'post-shards';

/**
 * Load phases in the order a real SGLang start goes through them
 * (../shared/reference/sglang-server.md section 3).
 */
export const LOAD_PHASES = [
  'starting',
  'loading weights',
  'allocating KV cache',
  'capturing CUDA graphs',
  'warming up',
  'ready',
] as const;
export type LoadPhase = (typeof LOAD_PHASES)[number];

export function phaseRank(phase: LoadPhase): number {
  return LOAD_PHASES.indexOf(phase);
}

/** The unit as `systemctl show` describes it. Timestamps are epoch milliseconds. */
export interface UnitStatus {
  readonly loadState: string; // loaded | not-found | ...
  readonly activeState: string; // active | activating | deactivating | inactive | failed
  readonly subState: string; // running | dead | failed | auto-restart | ...
  readonly mainPid: number; // 0 when no process
  readonly nRestarts: number;
  readonly result: string; // success | exit-code | signal | core-dump | ...
  readonly execMainStatus?: number;
  readonly execMainCode?: string; // exited | killed | dumped (from ExecMainCode: 1/2/3)
  readonly execMainStartedAt?: number;
  /** CLOCK_MONOTONIC microseconds of the process start: compares exactly with journal entries. */
  readonly execMainStartedMonotonicUs?: number;
  readonly execMainExitedAt?: number;
  readonly fragmentPath?: string;
  readonly dropInPaths: readonly string[];
  readonly needDaemonReload: boolean;
  readonly id?: string; // e.g. sglang-k26-ddtree.service
  /** Changes on every start: tells a new run from the old one. */
  readonly invocationId?: string;
  readonly controlGroup?: string; // e.g. /system.slice/sglang-k26-ddtree.service
  readonly activeEnteredAt?: number;
  readonly execMainPid?: number;
  /** 'docker': the state of a container (server/dockerInspect), not of a systemd unit. */
  readonly manager?: 'docker';
  /** The process ended because someone stopped it (`docker stop` or `kill`: Docker's events), not on its own. */
  readonly stopRequested?: boolean;
}

/** One reading of nvidia-smi. */
export interface GpuMemory {
  readonly index: number;
  readonly usedMiB: number;
  readonly totalMiB: number;
}
