/** nvidia-smi's CSV query -> GPU memory per device. */
import type { GpuMemory } from '../engine/events';

export const GPU_QUERY_COMMAND = 'nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits';

export interface GpuReading {
  readonly gpus: GpuMemory[];
  /** The busiest GPU's utilization.gpu, when it was asked and known. */
  readonly utilPercent?: number;
  /** Why there are no readings (nvidia-smi failed, not installed, ...); absent when all is well. */
  readonly reason?: string;
}

const FAILURE =
  /NVIDIA-SMI has failed|couldn't communicate with the NVIDIA driver|No devices were found|command not found|not found|Unable to determine|Failed to initialize NVML/i;

function mib(field: string): number | undefined {
  // One optional unit between the spaces: `\s*(MiB)?\s*$` backtracks quadratically on a run of spaces.
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:(?:MiB|MB)\s*)?$/i.exec(field);
  const n = m ? Number(m[1]) : undefined;
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

/**
 * Accepts the exact form of GPU_QUERY_COMMAND and also its header/unit variants
 * (`index, memory.used [MiB], memory.total [MiB]` / `0, 1024 MiB, 81559 MiB`).
 * Lines with `[N/A]`, garbage or missing fields are skipped.
 */
export function parseNvidiaSmiCsv(text: string): GpuReading {
  const gpus: GpuMemory[] = [];
  let failure: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    if (FAILURE.test(line)) {
      failure ??= line;
      continue;
    }
    const cols = line.split(',').map((c) => c.trim());
    if (cols.length < 3) continue;
    const index = /^\d{1,6}$/.test(cols[0] ?? '') ? Number(cols[0]) : undefined;
    const used = mib(cols[1] ?? '');
    const total = mib(cols[2] ?? '');
    if (index === undefined || used === undefined || total === undefined) continue;
    gpus.push({ index, usedMiB: used, totalMiB: total });
  }
  if (gpus.length > 0) return { gpus };
  return {
    gpus,
    reason: failure ?? (text.trim() ? 'nvidia-smi printed no GPU readings' : 'nvidia-smi printed nothing'),
  };
}

/** Total used / total memory over all GPUs, in MiB. */
export function totalGpuMemory(gpus: readonly GpuMemory[]): { usedMiB: number; totalMiB: number } {
  return gpus.reduce((a, g) => ({ usedMiB: a.usedMiB + g.usedMiB, totalMiB: a.totalMiB + g.totalMiB }), {
    usedMiB: 0,
    totalMiB: 0,
  });
}
