/**
 * Reads, before a restart, whether the next start will compile kernels (an empty kernel cache):
 * one remote command (host/kernelCaches.ts) against the running server's process, judged by
 * compileForecast.ts with this server's previous loads. Never throws: nothing read, nothing foreseen.
 */
import { engineFor } from '../../engine/engine';
import type { ActivityKind } from '../../engine/events';
import { kernelCacheCommand, parseKernelCaches } from '../../host/kernelCaches';
import type { Transport } from '../../transport/transport';
import { foreseeCompiles, type CompileForecast } from '../eta/compileForecast';
import type { LoadRecord } from '../history/history';

/** The longest step of each kind in the previous loads. */
function historyMsOf(records: readonly LoadRecord[]): Partial<Record<ActivityKind, number>> {
  const out: Partial<Record<ActivityKind, number>> = {};
  for (const r of records) for (const s of r.steps ?? []) out[s.kind] = Math.max(out[s.kind] ?? 0, s.ms);
  return out;
}

export async function readCompileForecast(
  transport: Transport,
  pid: number | undefined,
  argv: readonly string[],
  modelPath: string | undefined,
  records: readonly LoadRecord[],
): Promise<CompileForecast> {
  const engine = engineFor(argv)?.id;
  if (pid === undefined || pid <= 0 || (engine !== 'sglang' && engine !== 'vllm')) return { steps: [] };
  try {
    const result = await transport.exec(kernelCacheCommand(pid, modelPath), { timeoutMs: 20_000 });
    return foreseeCompiles(parseKernelCaches(result.stdout), { engine, argv, historyMs: historyMsOf(records) });
  } catch {
    return { steps: [] };
  }
}
