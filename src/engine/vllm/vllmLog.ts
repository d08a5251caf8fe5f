/**
 * vLLM's journal lines into the same events as SGLang's (docs/vllm-server.md §2–§4). Pure.
 * ../logGrammar strips vLLM's prefixes (stripVllmPrefix); `vllmGrammar` gives vLLM's words to
 * the shared rules (../logRules).
 */
import type { JournalEvent } from '../events';
import { EXCEPTION_LINE, type LogGrammar } from '../logRules';

export { stripVllmPrefix, type VllmPrefix } from '../logGrammar';
import { detach } from '../../util/detach';

/** What reading a stream of vLLM lines must remember: the CUDA-graph bars seen so far. */
export interface VllmContext {
  /** Per bar (its description), the last done/total: vLLM captures two bars in a row. */
  graphBars: Map<string, { done: number; total: number }>;
}

export function newVllmContext(): VllmContext {
  return { graphBars: new Map() };
}

const ENGINE_START: readonly RegExp[] = [
  /^vLLM API server version \S+/,
  /^Initializing a V1 LLM engine \(v?[^)]*\) with config:/,
  /^Initializing an LLM engine \(v?[^)]*\) with config:/,
  /^Waiting for init message from front-end\./,
];
const LOAD_BEGIN = /^Starting to load model \S+/;
const LOADING_WEIGHTS_TOOK = /^Loading weights took ([\d.]+) seconds/;
/** `Model loading took 3.8844 GiB and 20.442057 seconds` (older: `... 3.88 GB and 20.4 seconds`, `Loading model weights took 14.99 GB`). */
const MODEL_LOADING_TOOK =
  /^(?:Model loading took ([\d.]+) Gi?B(?: memory)?(?: and ([\d.]+) seconds?)?|Loading model weights took ([\d.]+) GB)/;
/** torch.compile runs in the profile run that sizes the KV cache. */
const PROFILING: readonly RegExp[] = [
  /^Using cache directory: .* for vLLM's torch\.compile/,
  /^Dynamo bytecode transform time: [\d.]+ s/,
  /^Compiling a graph for dynamic shape takes [\d.]+ s/,
  /^torch\.compile takes [\d.]+ s in total/,
  /^Memory profiling takes [\d.]+ seconds/,
];
const KV_AVAILABLE = /^Available KV cache memory: (-?[\d.]+) GiB/;
const KV_SIZE = /^GPU KV cache size: ([\d,]+) tokens/;
const GPU_BLOCKS = /^# (?:GPU|cuda) blocks: (\d+)/;
/** `Capturing CUDA graphs (decode, FULL): 40%|████ | 14/35 [...]`; older: `Capturing CUDA graph shapes: ...`. */
const GRAPH_BAR = /^(Capturing CUDA graphs?(?: shapes)?(?: \([^)]*\))?):\s*(\d+)%\|[^|]*\|\s*(\d+)\/(\d+)/;
const GRAPH_DONE = /^Graph capturing finished in [\d.]+ secs?/;
const GRAPH_BEGIN = /^Capturing cudagraphs? for decoding\./;
const API_SERVER_STARTING = /^Starting vLLM API server(?: \d+)? on (\S+)/;

/** The engine's own words that it is gone or could not start: always the end of the load. */
const FATAL: readonly RegExp[] = [
  /EngineCore failed to start\./,
  /Engine core initialization failed\./,
  /EngineCore encountered a fatal error\./,
  /EngineDeadError/,
  /No available memory for the cache blocks/,
  /KV cache is needed, which is larger than the available KV cache memory/,
  /is less than desired GPU memory utilization/,
  /--enable-auto-tool-choice requires --tool-call-parser/,
  /invalid (?:tool call|reasoning) parser: /,
  /^vllm(?: serve)?: error: /,
  /^api_server\.py: error: /,
];

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s.replace(/,/g, ''));
  return Number.isFinite(n) ? n : undefined;
}

/** vLLM draws two bars (piecewise, full); a line with a new description each time must not grow the map. */
const MAX_GRAPH_BARS = 8;

function graphProgress(ctx: VllmContext, bar: string, done: number, total: number): JournalEvent {
  if (!ctx.graphBars.has(bar) && ctx.graphBars.size >= MAX_GRAPH_BARS) return { type: 'cudaGraphBatches', done, total };
  ctx.graphBars.set(detach(bar), { done, total });
  let d = 0;
  let t = 0;
  for (const b of ctx.graphBars.values()) {
    d += b.done;
    t += b.total;
  }
  return { type: 'cudaGraphBatches', done: d, total: t };
}

/**
 * One vLLM line, its prefixes already stripped -> events; undefined when it is none of vLLM's
 * lines (the caller then tries SGLang's rules). `[]` for a vLLM line that says nothing new.
 */
export function parseVllmText(text: string, ctx: VllmContext): JournalEvent[] | undefined {
  if (FATAL.some((re) => re.test(text))) return [{ type: 'error', text, fatal: true }];
  if (ENGINE_START.some((re) => re.test(text))) return [{ type: 'phase', phase: 'starting' }];
  if (LOAD_BEGIN.test(text)) return [{ type: 'phase', phase: 'loading weights' }];

  const took = LOADING_WEIGHTS_TOOK.exec(text);
  if (took) return [{ type: 'weightsLoaded', elapsedSeconds: Number(took[1]) }];
  const model = MODEL_LOADING_TOOK.exec(text);
  if (model) {
    const mem = num(model[1] ?? model[3]);
    const seconds = num(model[2]);
    return [
      {
        type: 'weightsLoaded',
        ...(mem !== undefined ? { memUsageGB: mem } : {}),
        ...(seconds !== undefined ? { elapsedSeconds: seconds } : {}),
      },
    ];
  }

  if (PROFILING.some((re) => re.test(text))) return [{ type: 'phase', phase: 'allocating KV cache' }];
  const kvMem = KV_AVAILABLE.exec(text);
  if (kvMem) {
    const gib = Number(kvMem[1]);
    const phase: JournalEvent = { type: 'phase', phase: 'allocating KV cache' };
    // A negative budget: the engine stops right after with "No available memory for the cache blocks".
    return gib < 0 ? [phase, { type: 'error', text, fatal: false }] : [phase, { type: 'kvCache', sizeGB: gib }];
  }
  const kvSize = KV_SIZE.exec(text);
  if (kvSize)
    return [
      { type: 'phase', phase: 'allocating KV cache' },
      { type: 'kvCache', tokens: num(kvSize[1]) ?? 0 },
    ];
  if (GPU_BLOCKS.test(text)) return [{ type: 'phase', phase: 'allocating KV cache' }];

  const bar = GRAPH_BAR.exec(text);
  if (bar) return [graphProgress(ctx, bar[1] ?? '', Number(bar[3]), Number(bar[4]))];
  if (GRAPH_BEGIN.test(text)) return [{ type: 'phase', phase: 'capturing CUDA graphs' }];
  if (GRAPH_DONE.test(text)) {
    const total = [...ctx.graphBars.values()].reduce((n, b) => n + b.total, 0);
    return [
      { type: 'phase', phase: 'capturing CUDA graphs' },
      ...(total > 0 ? [{ type: 'cudaGraphBatches' as const, done: total, total }] : []),
    ];
  }

  const api = API_SERVER_STARTING.exec(text);
  if (api)
    return [
      { type: 'phase', phase: 'warming up' },
      { type: 'httpUp', url: api[1] ?? '' },
    ];
  return undefined;
}

/** vLLM's words for one stream: the CUDA-graph bars seen so far are remembered. */
export const vllmGrammar: LogGrammar = {
  words() {
    const ctx = newVllmContext();
    return (text, indented, line) => {
      const events = parseVllmText(text, ctx);
      // A traceback's code line (`    raise ValueError("No available memory for the cache blocks. "`) is not the error it raises.
      if (!events || (indented && events.every((e) => e.type === 'error'))) return undefined;
      if (events.some((e) => e.type === 'error') && !indented && EXCEPTION_LINE.test(text)) line.inTraceback = false;
      return events;
    };
  },
};
