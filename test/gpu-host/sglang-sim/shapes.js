'use strict';
// Load shapes: named presets of sim.json for the shapes real loads have (docs/load-shapes.md).
// sim.json `loadShape: "jit"` or `{ "name": "jit", "scale": 0.1, ... }` expands into the keys
// below, under the keys sim.json sets itself (those win; `fault` is merged key by key).
// Durations are the real logs' seconds, times `scale` (default 1), so a bench can run the same
// shape in proportion, faster.
//
// Page cache: `coldFiles` is what the load finds at its start (applied as the process starts,
// main.js measurePageCache), `pageCacheAfterLoad` what it leaves behind once ready, i.e. what a
// forecast before the NEXT restart measures. The two differ only for `wrongForecast`.

/** Seconds taken from the real logs (see docs/load-shapes.md for the sources). */
const REAL = Object.freeze({
  // sgl-project/sglang#17970 (and the shard bar at 100 % in sg-18124): processing after the last shard, no line
  postShardSeconds: 150,
  // sgl-project/sglang#15891: a DeepGEMM JIT compile inside the first CUDA-graph capture
  // (sg-10424-deepgemm-inside-capture: 44 s for one kernel, "typically 10-20 mins" for all of them)
  jitSeconds: 150,
  // sg-4161-dsr1-tp8-391s-capture: 391 s for the default batch-size list (23 sizes) of DeepSeek-R1 TP8, ~17 s a size;
  // without the kernels compiled inside it, a few seconds a size
  graphSecondsPerBatch: 4,
  // eth-easl/servekit (servekit-apertus8b-tp4-gh200-piecewise-ready): SGLang 2026's piecewise CUDA
  // graphs after the decode ones, 22 s of torch.compile and 15 s of capture for 58 token sizes
  piecewiseCompileSeconds: 22,
  piecewiseCaptureSeconds: 15,
});

const cold = { coldFiles: 'all', pageCacheAfterLoad: 'all' };

/** name -> (options) -> sim.json keys */
const SHAPES = Object.freeze({
  cold: {
    about: 'every shard read from storage; the files are evicted after the load, so the next forecast says 0 % cached',
    keys: () => ({ ...cold }),
  },
  partlyWarm: {
    about:
      'the first `coldShare` (default half) of the shards cold, the others in the page cache, before and after each load: the forecast is right and the read rate jumps when the cached files come up',
    keys: (o) => {
      const share = o.coldShare != null ? Number(o.coldShare) : 0.5;
      return { coldFiles: { coldShare: share }, pageCacheAfterLoad: { coldShare: share } };
    },
  },
  wrongForecast: {
    about:
      'the load leaves every shard in the page cache (a forecast says 100 % cached), and the next load finds them evicted: every byte is read cold',
    keys: () => ({ coldFiles: 'all', pageCacheAfterLoad: 'none' }),
  },
  postShardSilence: {
    about:
      'cold shards, then `seconds` (150) of processing after the last shard: the shard bar at 100 %, no line, a CPU and the GPUs busy, then "Load weight end"',
    keys: (o, scale) => ({
      ...cold,
      fault: {
        busySilence: {
          at: 'afterShards',
          seconds: num(o.seconds, REAL.postShardSeconds) * scale,
          gpuUtil: 100,
          cpuShare: 0.4,
        },
      },
    }),
  },
  jit: {
    about:
      'cold shards, then a DeepGEMM JIT compile of `seconds` (150) inside the first CUDA-graph capture: its banner glued to the capture bar at 0 %, its own bar (carriage returns, one journal line when it closes), the capture bar still after',
    keys: (o, scale) => ({
      ...cold,
      fault: {
        busySilence: {
          at: 'cudaGraph',
          atBatch: 0,
          seconds: num(o.seconds, REAL.jitSeconds) * scale,
          deepGemm: true,
          deepGemmBar: true,
          gpuUtil: 100,
          cpuShare: 0.4,
        },
      },
    }),
  },
  graphCapture: {
    about:
      "cold shards, then a CUDA-graph capture of `secondsPerBatch` (4) per batch size: the list is SGLang's sizes up to `--cuda-graph-max-bs` (sim.json `cudaGraphMaxBs` overrides the flag), so the capture grows with it",
    keys: (o, scale) => ({
      ...cold,
      cudaGraphSecondsPerBatch: num(o.secondsPerBatch, REAL.graphSecondsPerBatch) * scale,
      ...(o.maxBs != null ? { cudaGraphMaxBs: Number(o.maxBs) } : {}),
    }),
  },
  piecewise: {
    about:
      "cold shards, then after the decode CUDA graphs SGLang 2026's piecewise graphs: `compileSeconds` (22) of a torch.compile bar (its first size the slow one), `captureSeconds` (15) of a capture bar, 58 token sizes, between their begin and end lines",
    keys: (o, scale) => ({
      ...cold,
      piecewiseCudaGraph: {
        compileSeconds: num(o.compileSeconds, REAL.piecewiseCompileSeconds) * scale,
        captureSeconds: num(o.captureSeconds, REAL.piecewiseCaptureSeconds) * scale,
        sizes: num(o.sizes, 58),
      },
    }),
  },
  readRateHalves: {
    about:
      'cold shards; the storage read rate halves once half of the bytes are read (a disk or network file system that slows mid-load)',
    keys: (o) => ({ ...cold, coldRateChange: { afterShare: num(o.afterShare, 0.5), factor: num(o.factor, 0.5) } }),
  },
});

function num(v, def) {
  return v != null && Number.isFinite(Number(v)) ? Number(v) : def;
}

/** `{ name, scale, ... }` of a sim.json `loadShape` value (a name or an object), or null. */
function shapeOptions(value) {
  if (value == null) return null;
  const o = typeof value === 'string' ? { name: value } : value;
  if (!o || typeof o !== 'object' || !SHAPES[o.name])
    throw new Error(`unknown loadShape ${JSON.stringify(value)} (${Object.keys(SHAPES).join(', ')})`);
  return o;
}

/** sim.json with its loadShape expanded underneath: the shape's keys, then the user's (fault merged). */
function expandShape(user) {
  const o = shapeOptions(user.loadShape);
  if (!o) return user;
  const scale = num(o.scale, 1);
  const keys = SHAPES[o.name].keys(o, scale);
  return { ...keys, ...user, fault: { ...(keys.fault || {}), ...(user.fault || {}) } };
}

module.exports = { SHAPES, REAL, expandShape, shapeOptions };

if (require.main === module) {
  for (const [name, s] of Object.entries(SHAPES)) process.stdout.write(`${name}: ${s.about}\n`);
}
