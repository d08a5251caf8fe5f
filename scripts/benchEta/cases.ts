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
];
