/**
 * The witnesses of a load besides the journal: bytes read by the service's process tree and GPU
 * memory (read by the sampler, see sampler.ts), turned into load signals. Pure.
 */
import type { GpuReading } from '../../host/gpu';
import { totalGpuMemory } from '../../host/gpu';
import type { ProcIo } from '../../host/procIo';
import { phaseRank, type GpuMemory } from '../../engine/events';
import type { LoadState, Signal } from '../state/loadStateTypes';

/** The witnesses are read while a process is loading and the server is not yet warming up. */
export function wantsWitnesses(state: LoadState): { mainPid: number; controlGroup?: string } | undefined {
  if (state.mainPid === undefined || state.failure || state.readyAt !== undefined) return undefined;
  if (state.unit?.mainPidElsewhere) return undefined;
  if (state.phase !== undefined && phaseRank(state.phase) >= phaseRank('warming up')) return undefined;
  const cg = state.unit?.controlGroup;
  return { mainPid: state.mainPid, ...(cg ? { controlGroup: cg } : {}) };
}

/**
 * Bytes read by the tree: the largest of read_bytes, rchar and the cgroup's rbytes (see the
 * 'io' Signal in loadState.ts for why). Undefined when no process of the tree was readable.
 */
export function witnessSignals(
  out: { readonly io?: ProcIo | undefined; readonly gpu?: GpuReading | undefined; readonly cpuSeconds?: number },
  at: number,
  totalBytes: number | undefined,
): Signal[] {
  const signals: Signal[] = [];
  if (out.io && out.io.processes > 0) {
    const readBytes = Math.max(out.io.readBytes, out.io.rchar, out.io.cgroupReadBytes ?? 0);
    const coldBytes = Math.max(out.io.readBytes, out.io.cgroupReadBytes ?? 0);
    signals.push({ kind: 'io', at, readBytes, coldBytes, ...(totalBytes !== undefined ? { totalBytes } : {}) });
  }
  if (out.gpu && out.gpu.gpus.length > 0) {
    const t = totalGpuMemory(out.gpu.gpus);
    const perGpu: GpuMemory[] = out.gpu.gpus;
    signals.push({
      kind: 'gpu',
      at,
      usedMiB: t.usedMiB,
      totalMiB: t.totalMiB,
      perGpu,
      ...(out.gpu.utilPercent !== undefined ? { utilPercent: out.gpu.utilPercent } : {}),
    });
  }
  if (out.cpuSeconds !== undefined && Number.isFinite(out.cpuSeconds))
    signals.push({ kind: 'cpu', at, cpuSeconds: out.cpuSeconds });
  return signals;
}
