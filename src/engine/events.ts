/** What one SGLang journal line says, once parsed (the shared rules: logRules.ts; SGLang's own words: sglang/sglangLog.ts). */
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
   * names it, `progress` counts it (its own tqdm bar), `end` says it finished (activity.ts).
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

/** The long quiet steps the monitor names (their words: activity.ts ACTIVITY_LABELS). */
export type ActivityKind =
  | 'deepgemm'
  | 'torch-compile'
  | 'piecewise-graphs'
  | 'flashinfer-jit'
  | 'autotune'
  | 'post-shards';

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

/** One reading of nvidia-smi. */
export interface GpuMemory {
  readonly index: number;
  readonly usedMiB: number;
  readonly totalMiB: number;
}
