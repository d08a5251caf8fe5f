/**
 * The per-probe remote command of a load: `systemctl show` with, while the weights load, the
 * process tree's bytes read and nvidia-smi folded into the same exec (one remote process per
 * probe instead of three, issue 6), and its output split back apart. Pure.
 */
import { GPU_QUERY_COMMAND, parseNvidiaSmiCsv, totalGpuMemory, type GpuReading } from '../server/gpu';
import { parseProcIo, procIoCommand, type ProcIo } from '../server/procIo';
import { phaseRank, type GpuMemory } from '../server/events';
import type { LoadState, Signal } from './loadState';

const IO_MARK = '@@kimi-io@@';
const GPU_MARK = '@@kimi-gpu@@';

/** The show command, then the witnesses; the exit code stays systemctl's. */
export function witnessProbeCommand(showCommand: string, mainPid: number, controlGroup?: string): string {
  const io = procIoCommand(mainPid, controlGroup);
  return `${showCommand}; rc=$?; echo ${IO_MARK}; ( ${io} ); echo ${GPU_MARK}; ${GPU_QUERY_COMMAND} 2>&1; exit $rc`;
}

export interface WitnessOutput {
  readonly show: string;
  readonly io: ProcIo | undefined;
  readonly gpu: GpuReading | undefined;
}

export function splitWitnessOutput(stdout: string): WitnessOutput {
  const i = stdout.indexOf(IO_MARK);
  if (i < 0) return { show: stdout, io: undefined, gpu: undefined };
  const show = stdout.slice(0, i);
  const rest = stdout.slice(i + IO_MARK.length);
  const j = rest.indexOf(GPU_MARK);
  const ioText = j < 0 ? rest : rest.slice(0, j);
  const gpuText = j < 0 ? undefined : rest.slice(j + GPU_MARK.length);
  return { show, io: parseProcIo(ioText), gpu: gpuText === undefined ? undefined : parseNvidiaSmiCsv(gpuText) };
}

/** The witnesses are read while a process is loading and the server is not yet warming up. */
export function wantsWitnesses(state: LoadState): { mainPid: number; controlGroup?: string } | undefined {
  if (state.mainPid === undefined || state.failure || state.readyAt !== undefined) return undefined;
  if (state.phase !== undefined && phaseRank(state.phase) >= phaseRank('warming up')) return undefined;
  const cg = state.unit?.controlGroup;
  return { mainPid: state.mainPid, ...(cg ? { controlGroup: cg } : {}) };
}

/**
 * Bytes read by the tree: the largest of read_bytes, rchar and the cgroup's rbytes (see the
 * 'io' Signal in loadState.ts for why). Undefined when no process of the tree was readable.
 */
export function witnessSignals(out: WitnessOutput, at: number, totalBytes: number | undefined): Signal[] {
  const signals: Signal[] = [];
  if (out.io && out.io.processes > 0) {
    const readBytes = Math.max(out.io.readBytes, out.io.rchar, out.io.cgroupReadBytes ?? 0);
    const coldBytes = Math.max(out.io.readBytes, out.io.cgroupReadBytes ?? 0);
    signals.push({ kind: 'io', at, readBytes, coldBytes, ...(totalBytes !== undefined ? { totalBytes } : {}) });
  }
  if (out.gpu && out.gpu.gpus.length > 0) {
    const t = totalGpuMemory(out.gpu.gpus);
    const perGpu: GpuMemory[] = out.gpu.gpus;
    signals.push({ kind: 'gpu', at, usedMiB: t.usedMiB, totalMiB: t.totalMiB, perGpu });
  }
  return signals;
}
