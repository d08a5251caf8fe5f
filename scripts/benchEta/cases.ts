/**
 * The ETA benchmark's cases: one load shape of the simulated host each (sglang-sim/shapes.js,
 * docs/load-shapes.md), time-compressed by SCALE (the real logs' seconds x SCALE), the weights
 * read at a rate that makes them last about as long as the shapes' silences, in proportion.
 */

/** Real-log seconds -> bench seconds (ETA_BENCH_SCALE=1: the real logs' own lengths). */
export const SCALE = Number(process.env['ETA_BENCH_SCALE'] ?? 0.12);
export const SHARDS = 12;
export const SHARD_BYTES = 24 * 1024 * 1024;
/** Storage and page-cache read rates, MB/s: 302 MB of weights in ~30 s cold. */
export const COLD_MBPS = 10;
export const WARM_MBPS = 100;

/** sim.json of every case, under its shape: the phases around the weights, compressed. */
export const BASE_SIM: Readonly<Record<string, unknown>> = {
  readMBps: COLD_MBPS,
  warmReadMBps: WARM_MBPS,
  initSeconds: 2,
  kvSeconds: 0.5,
  cudaGraphSeconds: 3,
  uvicornSeconds: 0.3,
  warmupSeconds: 1,
  warmupPollSeconds: 0.2,
  coldRateChange: null,
  fault: {},
};

export interface CaseSpec {
  readonly name: string;
  readonly title: string;
  /** sim.json keys of the case (its loadShape). */
  readonly sim: Record<string, unknown>;
  /** Flags added to the unit's server command line for load `n` (0-based), if any. */
  unitArgs?(n: number): string;
  /** sim.json keys set before load `n` of `kind` (0-based over all loads of the host). */
  simFor?(n: number, kind: 'first' | 'later'): Record<string, unknown>;
  /** Loads that are run and kept in the server's history but not measured (the history a case needs). */
  unmeasured?(n: number, kind: 'first' | 'later'): boolean;
  /** One load before the measured ones, with these sim.json keys: the server is running when the first forecast reads it. */
  prime?: Record<string, unknown>;
  /** The host's model config.json `quantization_config`. */
  quantization?: Record<string, unknown>;
  /** Replaces the unit's `SGLANG_ENABLE_JIT_DEEPGEMM=0` (its Environment=); `{cache}` becomes a folder of the host's. */
  unitEnv?: string;
}

/** --cuda-graph-max-bs of load n in the growing-capture case: 6, 10, 16 then 24 batch sizes. */
export const GRAPH_MAX_BS = [16, 48, 96, 160] as const;

export const CASES: readonly CaseSpec[] = [
  { name: 'cold', title: 'plain cold: every shard from storage, forecast 0 % cached', sim: { loadShape: 'cold' } },
  {
    name: 'partlyWarm',
    title: 'partly warm: half the shards cached (forecast right), the rate jumps mid-way',
    sim: { loadShape: 'partlyWarm' },
  },
  {
    name: 'wrongForecast',
    title: 'wrong forecast: the host says 100 % cached, every shard reads cold',
    sim: { loadShape: 'wrongForecast' },
  },
  {
    name: 'postShard',
    title: `silent post-shard phase: 150 s x ${SCALE} of processing after the last shard, no line`,
    sim: { loadShape: { name: 'postShardSilence', scale: SCALE } },
  },
  {
    name: 'jit',
    title: `JIT: 150 s x ${SCALE} of DeepGEMM JIT compile inside the first CUDA-graph capture`,
    sim: { loadShape: { name: 'jit', scale: SCALE } },
  },
  {
    name: 'graphGrowing',
    title: `graph capture growing: --cuda-graph-max-bs ${GRAPH_MAX_BS.join('/')} by turns, 4 s x ${SCALE} per batch size`,
    sim: { loadShape: { name: 'graphCapture', scale: SCALE } },
    unitArgs: (n) => `--cuda-graph-max-bs ${GRAPH_MAX_BS[n % GRAPH_MAX_BS.length]}`,
  },
  {
    name: 'piecewise',
    title: `piecewise CUDA graphs (SGLang 2026): (22 + 15) s x ${SCALE} of torch.compile and capture after the decode graphs`,
    sim: { loadShape: { name: 'piecewise', scale: SCALE } },
  },
  {
    name: 'rateHalves',
    title: 'read rate halves midway: every shard cold, half the rate after half the bytes',
    sim: { loadShape: 'readRateHalves' },
  },
  {
    name: 'warmThenCold',
    title:
      'forecast warm, load cold: the loads before read every shard from the page cache (history warm, forecast 100 % cached); every other later load finds them evicted and reads all cold (only those measured)',
    sim: { coldFiles: 'none', pageCacheAfterLoad: 'none' },
    simFor: (n, kind) => ({ coldFiles: kind === 'later' && n % 2 === 1 ? 'all' : 'none' }),
    unmeasured: (n, kind) => kind === 'first' || n % 2 === 0,
  },
  {
    name: 'coldCompile',
    title:
      "cold compile foreseen: a block-FP8 model, DeepGEMM's kernel cache empty before every restart (not kept), 150 s of JIT compile at the first CUDA-graph capture (the published logs' length, not scaled), read before the restart",
    sim: { loadShape: 'cold', deepGemm: { seconds: 150, bar: false, keep: false } },
    prime: { deepGemm: null },
    simFor: () => ({ deepGemm: { seconds: 150, bar: false, keep: false } }),
    quantization: { quant_method: 'fp8', activation_scheme: 'dynamic', fmt: 'e4m3', weight_block_size: [128, 128] },
    unitEnv: 'SGLANG_ENABLE_JIT_DEEPGEMM=1 SGLANG_DG_CACHE_DIR={cache}',
  },
];
