/** nvidia-smi's CSV query (the sampler runs it in a loop and reads its lines: monitor/watch/sampler.ts) and GPU memory per device. */
import type { GpuMemory } from '../engine/events';

export const GPU_QUERY_COMMAND = 'nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits';

export interface GpuReading {
  readonly gpus: GpuMemory[];
  /** The busiest GPU's utilization.gpu, when it was asked and known. */
  readonly utilPercent?: number;
  /** Why there are no readings (nvidia-smi failed, not installed, ...); absent when all is well. */
  readonly reason?: string;
}

/** Total used / total memory over all GPUs, in MiB. */
export function totalGpuMemory(gpus: readonly GpuMemory[]): { usedMiB: number; totalMiB: number } {
  return gpus.reduce((a, g) => ({ usedMiB: a.usedMiB + g.usedMiB, totalMiB: a.totalMiB + g.totalMiB }), {
    usedMiB: 0,
    totalMiB: 0,
  });
}
