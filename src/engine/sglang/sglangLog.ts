/**
 * SGLang's own words in its log (../shared/reference/sglang-server.md §3): the load's phases,
 * CUDA-graph progress, the weights and KV cache it reports, and "fired up". Pure.
 * The lines around them (systemd, tracebacks, errors, uvicorn) are read by ../logRules.
 */
import type { JournalEvent } from '../events';
import type { EngineWords, LogGrammar } from '../logRules';

export { SHARD_PROGRESS } from '../logRules';
const CUDA_GRAPH_BATCHES = /Capturing batches\b[^:]*:\s*(\d+)%\|[^|]*\|\s*(\d+)\/(\d+)/;
const CUDA_GRAPH_END = /^Capture (?:target decode )?cuda graph end\b/i;
const CUDA_GRAPH_BS = /^Capture cuda graph bs \[([\d,\s]*)\]/;
const LOAD_WEIGHT_END = /^Load weight end\.(.*)$/;
const KV_ALLOCATED = /^KV Cache is allocated\.(.*)$/;

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function field(rest: string, name: string): string | undefined {
  // `[^,]*` then trim: a lazy `[^,]*?` before `\s*$` backtracks quadratically on a run of spaces.
  const m = new RegExp(`(?:^|[\\s,])${name}=([^,]*)`).exec(rest);
  return m?.[1]?.trim();
}

function gb(s: string | undefined): number | undefined {
  return num(s?.replace(/\s*GB\.?$/, ''));
}

/** One SGLang line (prefix stripped) -> events; undefined when it is none of SGLang's words. */
export function parseSglangText(text: string): JournalEvent[] | undefined {
  if (text.startsWith('Init torch distributed begin')) return [{ type: 'phase', phase: 'starting' }];
  if (text.startsWith('Load weight begin')) return [{ type: 'phase', phase: 'loading weights' }];

  const lwe = LOAD_WEIGHT_END.exec(text);
  if (lwe) {
    const rest = lwe[1] ?? '';
    const elapsed = num(field(rest, 'elapsed')?.replace(/\s*s$/, ''));
    const memUsage = gb(field(rest, 'mem usage'));
    const availMem = gb(field(rest, 'avail mem'));
    const modelType = field(rest, 'type');
    const dtype = field(rest, 'dtype');
    return [
      {
        type: 'weightsLoaded',
        ...(elapsed !== undefined ? { elapsedSeconds: elapsed } : {}),
        ...(memUsage !== undefined ? { memUsageGB: memUsage } : {}),
        ...(availMem !== undefined ? { availMemGB: availMem } : {}),
        ...(modelType ? { modelType } : {}),
        ...(dtype ? { dtype } : {}),
      },
    ];
  }

  if (text.startsWith('Using KV cache dtype') || text.startsWith('Memory pool end')) {
    return [{ type: 'phase', phase: 'allocating KV cache' }];
  }
  const kv = KV_ALLOCATED.exec(text);
  if (kv) {
    const rest = kv[1] ?? '';
    const tokens = num(/#tokens:\s*(\d+)/.exec(rest)?.[1]);
    const size = num(/KV size:\s*([\d.]+)\s*GB/.exec(rest)?.[1]);
    return [
      { type: 'phase', phase: 'allocating KV cache' },
      { type: 'kvCache', ...(tokens !== undefined ? { tokens } : {}), ...(size !== undefined ? { sizeGB: size } : {}) },
    ];
  }

  if (text.startsWith('Capture cuda graph begin')) return [{ type: 'phase', phase: 'capturing CUDA graphs' }];
  // Newer SGLang says "Capture target decode CUDA graph end. elapsed=...".
  if (CUDA_GRAPH_END.test(text)) return [{ type: 'phase', phase: 'capturing CUDA graphs' }, { type: 'graphsCaptured' }];
  const bs = CUDA_GRAPH_BS.exec(text);
  if (bs) {
    const total = (bs[1] ?? '').split(',').filter((s) => s.trim() !== '').length;
    return [
      { type: 'phase', phase: 'capturing CUDA graphs' },
      ...(total > 0 ? [{ type: 'cudaGraphBatches' as const, done: 0, total }] : []),
    ];
  }
  const cg = CUDA_GRAPH_BATCHES.exec(text);
  if (cg) return [{ type: 'cudaGraphBatches', done: Number(cg[2]), total: Number(cg[3]) }];

  if (text.includes('The server is fired up and ready to roll!')) return [{ type: 'ready' }];
  return undefined;
}

const words: EngineWords = (text) => parseSglangText(text);

/** SGLang's words keep no state between lines. */
export const sglangGrammar: LogGrammar = { words: () => words };
