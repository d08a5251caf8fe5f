'use strict';
// Simulator configuration: defaults merged with $KIMI_SIM_ROOT/sim.json (read once at start).
const fs = require('fs');
const path = require('path');
const { expandShape } = require('./shapes');

const DEFAULTS = Object.freeze({
  // timings (seconds) and rates (MB/s, 1 MB = 1e6 bytes)
  initSeconds: 0.3,
  readMBps: 200,
  warmReadMBps: 2000,
  coldRateChange: null, // {afterMB, factor}: once a reader has read afterMB MB, its cold reads go factor times as fast (a disk that slows mid-load)
  kvSeconds: 0.3,
  cudaGraphSeconds: 0.6,
  cudaGraphBatches: 7,
  uvicornSeconds: 0.2,
  warmupSeconds: 1.0,
  warmupPollSeconds: 0.2,
  tokenDelayMs: 5,
  // reading
  readers: 1, // reader child processes (like per-rank scheduler subprocesses)
  readChunkBytes: 0, // 0 = automatic
  directIO: true, // O_DIRECT for cold bytes (then the shard is read into the page cache by a process outside the server); false: plain reads
  coldFiles: null, // "all" | "none" | [names] | {coldShare}: evict / read in the shards of the real page cache at load start
  pageCacheAfterLoad: null, // same values: applied once ready (what the next restart's forecast measures); null = as the load left it
  cudaGraphMaxBs: null, // overrides --cuda-graph-max-bs: the captured batch sizes are SGLang's list up to it
  cudaGraphSecondsPerBatch: null, // > 0: each batch size takes this long (the capture grows with the list); null: cudaGraphSeconds in all
  // SGLang 2026's piecewise CUDA graphs after the decode ones: null (older SGLang, or
  // --disable-piecewise-cuda-graph) | { compileSeconds, captureSeconds, sizes } (servekit logs: 22 + 15 s, 58 sizes)
  piecewiseCudaGraph: null,
  deepGemm: null, // {seconds, bar, keep}: the model uses DeepGEMM; an empty kernel cache at start compiles (kernelCache.js)
  loadShape: null, // a load shape of shapes.js ("jit", {name, scale, ...}): preset keys under the ones sim.json sets
  // log style
  shardDesc: 'multi', // "multi" | "legacy"
  loadWeightEndFormat: 'new', // "new" | "legacy" (adds dtype=...)
  tqdmMode: 'lines', // shard bar: "lines" (each update "\r<text>\n") | "carriage" (updates joined by \r, one \n at close)
  captureTqdmMode: 'carriage', // CUDA graph capture bar: "carriage" (real tqdm) | "lines"
  streamNullKeys: false,
  legacyHealth: false,
  // GPU memory model (per GPU)
  memoryTotalMiB: 81920,
  initGB: 0.55,
  weightsGB: 68.76,
  kvCacheGB: 4.2,
  cudaGraphGB: 1.1,
  maxTotalNumTokens: 524288,
  contextLength: 262144,
  architecture: null, // default from config.json in the model dir, else DeepseekV3ForCausalLM
  version: '0.5.4',
  crashExit: null, // "code" (exit fault.exitCode||1) | "sigkill" (kill -9 itself, as SGLang's kill_process_tree does); null: code for crashes, sigkill for warm-up failures
  unbalancedLoadingTimeoutSeconds: 300, // multi-node: how long a node that loaded waits for the others (SGLang's UNBALANCED_MODEL_LOADING_TIMEOUT_S)
  stopDelayMs: 0, // SIGTERM: shut down (port closed), then stay alive this long before exiting (NCCL teardown); read again at SIGTERM
  stopHold: false, // SIGTERM: as stopDelayMs, but stay alive until sim.json says false (a test's condition, not a time)
  fault: {},
  replay: null, // {log, speed, maxGapMs, ...}: play a published log instead of simulating a load (replay.js)
});

function loadConfig(root) {
  let user = {};
  let error = null;
  if (root) {
    const p = path.join(root, 'sim.json');
    try {
      user = JSON.parse(fs.readFileSync(p, 'utf8'));
      if (!user || typeof user !== 'object' || Array.isArray(user)) throw new Error('sim.json is not an object');
    } catch (e) {
      if (e.code !== 'ENOENT') error = `sim.json: ${e.message}`;
      user = {};
    }
  }
  return mergeConfig(user, error);
}

function mergeConfig(given, error = null) {
  let user = given;
  try {
    user = expandShape(given);
  } catch (e) {
    error = error || `sim.json: ${e.message}`;
  }
  const cfg = { ...DEFAULTS, ...user };
  cfg.fault = { ...(user.fault || {}) };
  // shorthand top-level fault keys
  for (const k of ['warmupFails', 'toolCallInReasoning', 'missingThinkEnd', 'slowWarmupSeconds']) {
    if (user[k] !== undefined && cfg.fault[k] === undefined) cfg.fault[k] = user[k];
  }
  cfg.configError = error;
  return cfg;
}

module.exports = { DEFAULTS, loadConfig, mergeConfig, SIM_DIR: __dirname };
