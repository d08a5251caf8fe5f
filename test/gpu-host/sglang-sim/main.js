#!/usr/bin/env node
'use strict';
/*
 * SGLang server simulator (test fixture of the simulated GPU host). Node.js builtins only.
 *
 * Launched as `node main.js -m sglang.launch_server --model-path DIR --tp 8 --port P [--served-model-name N]
 *   [--tool-call-parser kimi_k2] [--reasoning-parser kimi_k2|kimi|...] [--weight-loader-drop-cache-after-load] ...`
 * (also `serve ...` / `sglang serve ...`). Unknown flags are accepted and shown in /server_info.
 * Invalid parser names fail like argparse (exit 2), as the real server does.
 *
 * State dir: env KIMI_SIM_ROOT (optional). Files there:
 *   sim.json        config, read once at start (missing = defaults)
 *   gpu.json        {"pid","updatedAt","gpus":[{"index","memoryUsedMiB","memoryTotalMiB"}]} (tp GPUs), rewritten as
 *                   memory changes; all 0 on exit (after SIGKILL it stays: the pid is dead -> stale)
 *   chat-requests.jsonl  every /v1/chat/completions body the server took, one JSON line each, with a summary of its
 *                   assistant tool-call messages (ids, reasoning chars carried back, in the current tool chain or not):
 *                   requestLog.js; the tests read it to count what reached the host
 * Page cache: the REAL kernel page cache of the model files (no state file). At load start the simulator
 *   applies coldFiles (evicts with `dd iflag=nocache count=0`, reads in with cat) and measures each file's
 *   residency with util-linux `fincore --bytes --noheadings --raw` (no fincore: all cold unless coldFiles warms
 *   them). Resident bytes (taken as a prefix of the file) are read at warmReadMBps, the rest at readMBps; cold
 *   reads are real block I/O and the shards end up cached, as after a real load, so the next load is warm unless
 *   --weight-loader-drop-cache-after-load (evicts the files after the load) or coldFiles says otherwise.
 *   The extension's fincore and warm-cache reads see and change the same cache.
 *   (`node state.js residency|evict|warm F..` to inspect/change it by hand)
 *
 * sim.json keys (defaults in config.js):
 *   initSeconds 0.3, readMBps 200 (cold), warmReadMBps 2000, kvSeconds 0.3, cudaGraphSeconds 0.6,
 *   cudaGraphBatches 7, uvicornSeconds 0.2, warmupSeconds 1.0, warmupPollSeconds 0.2, tokenDelayMs 5
 *   readers 1            reader child processes (children of this process, like per-rank schedulers)
 *   readChunkBytes 0     0 = auto (~50 ms of reading per chunk)
 *   directIO true        cold bytes with O_DIRECT (exact block I/O in /proc/PID/io read_bytes, no readahead running
 *                        ahead of the rate limit) when the fs allows, else plain reads; after each shard a process
 *                        outside the server's tree reads it into the page cache, as a real load leaves it |
 *                        false: plain reads (fill the cache themselves; readahead makes read_bytes lead)
 *   coldFiles null       at load start: "all" evict every shard from the page cache | "none" read them all in |
 *                        ["model-00001-of-00064.safetensors", ...] evict those, read the others in | null as it is
 *   shardDesc "multi"    "multi" = "Multi-thread loading shards", "legacy" = "Loading safetensors checkpoint shards"
 *   loadWeightEndFormat "new" | "legacy" (adds dtype=torch.bfloat16)
 *   tqdmMode "lines"     shard bar: each update "\r<text>\n" (SGLang's _BAR_FORMAT ends with "\n", so journald gets one
 *                        line per update, starting with \r; tqdm's close adds a repeat of the last line and an empty line)
 *                        | "carriage": updates "\r<text>" with no "\n" until the bar closes (one long journal line)
 *   captureTqdmMode "carriage" CUDA graph capture bar (real tqdm default format: no "\n" until close) | "lines"
 *   streamNullKeys false  SSE deltas carry null keys (older SGLang) instead of omitting them
 *   legacyHealth false    /health 200 as soon as HTTP is up (older SGLang); /health_generate waits for warm-up
 *   memoryTotalMiB 81920, initGB 0.55, weightsGB 68.76, kvCacheGB 4.2, cudaGraphGB 1.1 (per GPU),
 *   maxTotalNumTokens 524288, contextLength 262144, architecture null (config.json's, else DeepseekV3ForCausalLM),
 *   version "0.5.4"
 *   crashExit null       how crashes end: "code" (exit fault.exitCode||1) | "sigkill" (kill -9 self, like SGLang's
 *                        kill_process_tree) | "memory" (allocates until the OOM killer ends it: only under a memory
 *                        cgroup limit below 1 GiB, e.g. `docker run --memory 96m`; else exit as "code"). Default: "code" for crashes, "sigkill" for warm-up failures.
 *   fault {}:
 *     crashAt "init"|"weights"|"kv"|"cudaGraph"|"warmup", kind "traceback"|"oom"|"cuda", afterShards N (weights,
 *       default half), afterBatches N (cudaGraph, default half), rank 0, exitCode 1
 *     hangAt  same phases (+ afterShards/afterBatches); resumeAfterSeconds N: stall, then continue; untilCleared
 *       true: stall until sim.json's fault has no hangAt (a test's condition, not a time), then continue; hold.beats counts its looks
 *     busySilence {at: "afterShards"|"cudaGraph", seconds N, gpuUtil P (default 0), deepGemm true, processes K
 *       (default 1)}: N s with no line, K child processes each burning a CPU core (as the TP ranks of a real
 *       server do, each on its part of the weights) and the GPUs at P % utilisation, as a real post-shard weight
 *       processing (afterShards: the bar at 100 %, "Load weight end" only after) or a DeepGEMM JIT compile
 *       (cudaGraph, after the first batch; deepGemm: SGLang's "Entering DeepGEMM JIT Pre-Compile session" lines first)
 *     slowWarmupSeconds N   warm-up generation takes N s
 *     warmupFails true      warm-up request fails: "Initialization failed. warmup error: ..." then kill -9 self
 *     http "hang"|"html500"|"truncatedJson"|"hugeBody"|"wrongContentType"|"errorWithChoices"|"emptyChoices"|"healthFlapping"
 *       (after ready only; hang/html500/truncatedJson/hugeBody/wrongContentType hit every path, httpPaths [..] limits
 *       them; errorWithChoices/emptyChoices hit /v1/completions and /v1/chat/completions, healthFlapping /health*)
 *     toolCallInReasoning true   the tool section is emitted before </think>
 *     missingThinkEnd true       no </think> before the tool section
 *   (warmupFails, toolCallInReasoning, missingThinkEnd, slowWarmupSeconds are also accepted at top level)
 *
 * Output: SGLang log lines on stderr (per-rank lines once per rank TP0..TP(tp-1)), tqdm bars on stderr (rank 0
 * only, no prefix), uvicorn access lines on stdout. Phases: init -> weights (real reads by the reader child,
 * rate-limited; gpu.json grows) -> KV cache (jump) -> CUDA graphs (a bit more) -> uvicorn (the port opens only now)
 * -> warm-up (GET /model_info + POST /generate by the process itself; /health 503) -> "fired up" (/health 200).
 * HTTP: /health /health_generate /ping /v1/models[/ID] /model_info /get_model_info /server_info /get_server_info
 * /generate /v1/completions /v1/chat/completions (stream or not). Generation requests during warm-up wait for it.
 * The served name is checked (404 "The model `x` does not exist."); a missing "model" is accepted.
 *
 *   loadShape null       a load shape of real logs (shapes.js, docs/load-shapes.md): "cold" | "partlyWarm" | "wrongForecast" |
 *                        "postShardSilence" | "jit" | "graphCapture" | "readRateHalves", or {name, scale, ...}: preset keys
 *                        under the ones sim.json sets (fault merged key by key)
 *   coldFiles {coldShare: x}  the first x of the shards (name order) cold, the others read in
 *   pageCacheAfterLoad null   coldFiles' values, applied once ready: the page cache the next restart's forecast measures
 *   cudaGraphMaxBs null, cudaGraphSecondsPerBatch null  the batch sizes up to it (else --cuda-graph-max-bs, else
 *                        cudaGraphBatches of them), each taking that long (else cudaGraphSeconds in all)
 *   deepGemm {seconds, bar, keep}  the model uses DeepGEMM: with its kernel cache ($SGLANG_DG_CACHE_DIR, else
 *                        ~/.cache/deep_gemm) empty at start, the first capture compiles `seconds` (kernelCache.js);
 *                        keep false leaves the cache empty (every start compiles)
 *   fault.busySilence also takes atBatch (cudaGraph: the capture step it comes at, default 1; 0 = glued to the bar's
 *                        first update), deepGemmBar (SGLang's "DeepGEMM warmup" bar during it), cpuShare (share of a core)
 *   replay null          {log, speed, maxGapMs, ...}: play a published log as a live server instead (replay.js, docs/replay.md)
 *   stopDelayMs 0        > 0: on SIGTERM/SIGINT shut down (log, port closed, load stopped) but exit only after this many
 *                        ms (a slow NCCL teardown); read again from sim.json at the signal, so it can be set while running
 *   stopHold false       true: as stopDelayMs, but the process stays alive until sim.json's stopHold is false again (then
 *                        stopDelayMs): a stop that lasts until a test has seen what it needs, however slow the machine
 * --api-key KEY (or --api-key=KEY): every path but /health* and /metrics* needs `Authorization: Bearer KEY`, else
 *   401 {"error":"Unauthorized"} (SGLang's add_api_key_middleware); the warm-up requests send the key.
 *
 * Multi-node (dist.js): --nnodes N --node-rank R --dist-init-addr HOST:PORT [--dist-timeout S] (default 1800): the ranks meet over
 *   TCP at node rank 0's address (it listens on PORT, the others connect and wait), each node runs tp/N ranks (TP labels from R*tp/N),
 *   waits for the others after its weights (sim.json unbalancedLoadingTimeoutSeconds, default 300, then SGLang's ValueError);
 *   only node rank 0 prints tqdm bars and serves HTTP; the others end their load with "Capture cuda graph end." and wait.
 *   Timeouts print torch's DistStoreError / DistNetworkError texts. Faults (sim.json per host) apply to that node.
 * Signals: SIGTERM/SIGINT -> log, close the port, reap the reader children, exit 0 (well under 1 s; see stopDelayMs).
 * A dead reader child -> "Received sigquit from a child process..." and exit 1, like a dead scheduler.
 */
const fs = require('fs');
const path = require('path');
const http = require('http');
const { parseArgs } = require('./args');
const { loadConfig } = require('./config');
const { Logger } = require('./log');
const state = require('./state');
const { listShards, Loader } = require('./loader');
const tqdm = require('./tqdm');
const kernelCache = require('./kernelCache');
const faults = require('./faults');
const { HttpApi } = require('./http');
const { Rendezvous, parseAddr } = require('./dist');
const { runSim } = require('./run');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const f2 = (x) => x.toFixed(2);

function pyRepr(v) {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  return `'${String(v).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function readModelConfig(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  } catch {
    return {};
  }
}

const DEFAULT_BS = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160];

/**
 * The batch sizes a capture runs: SGLang's list (1, 2, 4, 8, 12, then steps of 8) up to
 * `--cuda-graph-max-bs` when given, else the first cfg.cudaGraphBatches of it.
 */
function captureBatchSizes(maxBs, cfg) {
  const max = Number(maxBs);
  if (!(max >= 1)) return DEFAULT_BS.slice(0, Math.max(1, Math.min(DEFAULT_BS.length, cfg.cudaGraphBatches)));
  const out = DEFAULT_BS.filter((b) => b <= max);
  for (let b = 168; b <= max; b += 8) out.push(b);
  return out.length ? out : [1];
}

class Sim {
  constructor(args, extra, cfg, root) {
    this.args = args;
    this.extra = extra || {};
    this.cfg = cfg;
    this.root = root;
    // multi-node: this node runs tp/nnodes of the ranks (TP labels from node_rank * that); only node rank 0
    // (TP0) serves HTTP and shows the tqdm bars
    this.nnodes = args.nnodes || 1;
    this.nodeRank = args.node_rank || 0;
    this.tp = args.tp_size / this.nnodes;
    this.firstRank = this.nodeRank * this.tp;
    this.log = new Logger({ tp: this.tp, base: this.firstRank });
    this.dist = null;
    this.phase = 'init';
    this.httpUp = false;
    this.ready = false;
    this.exiting = false;
    this.loader = null;
    this.api = null;
    this.startedAt = Math.floor(Date.now() / 1000);
    this.mem = { init: 0, weights: 0, kv: 0, graph: 0 };
    this.lastGpuWrite = 0;
    this.resident = new Map(); // model file -> bytes read at the warm rate (page-cache residency measured at load start)
    this.fills = []; // page-cache fills after O_DIRECT reads (promises)
    const mc = readModelConfig(args.model_path);
    this.arch = cfg.architecture || (Array.isArray(mc.architectures) && mc.architectures[0]) || 'DeepseekV3ForCausalLM';
    this.modelType = mc.model_type || 'kimi_k2';
    this.fault = cfg.fault || {};
    // an empty DeepGEMM kernel cache: the first capture compiles (kernelCache.js; a busySilence of sim.json wins)
    const compile = kernelCache.deepGemmCompile(cfg, process.env);
    if (compile && !this.fault.busySilence) this.fault = { ...this.fault, busySilence: compile };
    let warmResolve;
    this.engineWarm = new Promise((r) => {
      warmResolve = r;
    });
    this.engineWarmResolve = warmResolve;
    this.hooks = {};
  }

  // --- GPU memory ------------------------------------------------------------
  usedGB() {
    return this.mem.init + this.mem.weights + this.mem.kv + this.mem.graph;
  }
  totalGB() {
    return this.cfg.memoryTotalMiB / 1024;
  }
  availGB() {
    return Math.max(0, this.totalGB() - 0.75 - this.usedGB());
  }
  writeGpu(force = false, zero = false) {
    if (!this.root) return;
    const now = Date.now();
    if (!force && now - this.lastGpuWrite < 100) return;
    this.lastGpuWrite = now;
    const used = this.usedGB();
    const arr = Array.from({ length: this.tp }, (_, i) => (zero || used === 0 ? 0 : used * 1024 + i * 2));
    try {
      state.writeGpu(this.root, process.pid, arr, this.cfg.memoryTotalMiB, zero ? 0 : this.gpuUtil || 0);
    } catch {
      /* state dir gone */
    }
  }

  /**
   * The real page cache at load start: apply sim.json coldFiles (evict / read in), then measure each file's
   * residency (fincore). Resident bytes are read at warmReadMBps with plain reads, the rest at readMBps
   * with O_DIRECT (see loadWeights for how the page cache is then filled).
   */
  measurePageCache(shards) {
    const { cfg } = this;
    const forcedCold = state.applyColdFiles(shards, cfg.coldFiles);
    const measured = state.measureResidency(shards.map((s) => s.path));
    const warmByConfig = cfg.coldFiles === 'none' || (cfg.coldFiles != null && typeof cfg.coldFiles === 'object');
    this.resident.clear();
    for (const s of shards) {
      const real = measured ? measured.get(s.path) || 0 : warmByConfig && !forcedCold.has(s.path) ? s.size : 0;
      this.resident.set(s.path, forcedCold.has(s.path) ? 0 : real);
    }
  }

  // --- lifecycle ---------------------------------------------------------------
  cleanup() {
    if (this.cleaned) return;
    this.cleaned = true;
    if (this.loader) this.loader.stop();
    if (this.api) this.api.close();
    if (this.dist) this.dist.close();
    for (const child of this.busyChildren ?? []) child.kill('SIGKILL');
    this.mem = { init: 0, weights: 0, kv: 0, graph: 0 };
    this.writeGpu(true, true);
  }

  /** end the process; reader children are killed and reaped first (bounded wait) */
  async exit(code) {
    this.exiting = true;
    if (this.api) this.api.close();
    if (this.loader) await this.loader.stopAndWait(500);
    this.cleanup();
    process.exit(code);
  }

  async killSelf() {
    this.exiting = true;
    if (this.api) this.api.close();
    if (this.loader) await this.loader.stopAndWait(500);
    this.cleanup();
    process.kill(process.pid, 'SIGKILL');
  }

  onSignal(sig) {
    if (this.exiting) return; // a stop already under way: further SIGTERMs change nothing
    this.exiting = true;
    if (this.httpUp) {
      this.log.uvicorn('Shutting down');
      this.log.uvicorn('Waiting for application shutdown.');
      this.log.uvicorn('Application shutdown complete.');
      this.log.uvicorn(`Finished server process [${process.pid}]`);
    } else {
      this.log.main(`Received ${sig === 'SIGINT' ? 'sigint' : 'sigterm'}, shutting down.`);
    }
    const delay = this.stopDelayMs();
    if (delay > 0 || this.stopHeld()) {
      // A slow teardown (NCCL, the scheduler processes): the port closes at once, as uvicorn's
      // shutdown does, the load stops, and the process lives on for stopDelayMs before it exits.
      // Only SIGKILL (systemd's, after TimeoutStopSec) ends it sooner.
      if (this.api) this.api.close();
      if (this.loader) this.loader.stop();
      this.log.out = () => {};
      this.log.err = () => {};
      const held = setInterval(() => {
        if (this.stopHeld()) return;
        clearInterval(held);
        setTimeout(() => this.exit(0), this.stopDelayMs());
      }, 100);
      return;
    }
    this.exit(0);
  }

  /** sim.json's stopDelayMs as it is now (so it can be set while the server runs), else the start-up value */
  stopDelayMs() {
    let v = this.cfg.stopDelayMs;
    if (this.root) {
      const now = loadConfig(this.root);
      if (!now.configError) v = now.stopDelayMs;
    }
    return Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : 0;
  }

  /** sim.json's stopHold as it is now: true keeps a stopping process alive */
  stopHeld() {
    if (!this.root) return this.cfg.stopHold === true;
    const now = loadConfig(this.root);
    return !now.configError && now.stopHold === true;
  }

  /** a scheduler (rank) hit an exception: its traceback, the launcher's SIGQUIT message, death */
  crash(phase, kind) {
    if (this.exiting) return;
    const rank = this.firstRank + (this.fault.rank || 0);
    this.log.rank(
      rank,
      faults.schedulerTraceback(phase, kind || this.fault.kind || 'traceback', { rank: this.fault.rank || 0 }),
    );
    if (phase === 'warmup') {
      this.log.main(faults.warmupTraceback('<Response [500]>'));
      return this.crashExit(true);
    }
    this.log.main('Received sigquit from a child process. It usually means the child failed.');
    return this.crashExit(false);
  }

  crashExit(warmup) {
    const how = this.cfg.crashExit || (warmup ? 'sigkill' : 'code');
    if (how === 'sigkill') return this.killSelf();
    if (how === 'memory') return this.exhaustMemory();
    return this.exit(this.fault.exitCode || 1);
  }

  /**
   * Host memory until the kernel's OOM killer ends the process, as a container over its
   * `--memory` limit is. Only under a cgroup limit below 1 GiB (never eats the machine); past
   * twice the limit, or without one, exit 1.
   */
  exhaustMemory() {
    let limit = Infinity;
    for (const f of ['/sys/fs/cgroup/memory/memory.limit_in_bytes', '/sys/fs/cgroup/memory.max']) {
      try {
        const v = Number(fs.readFileSync(f, 'utf8').trim());
        if (Number.isFinite(v)) limit = Math.min(limit, v);
      } catch {
        /* none */
      }
    }
    if (!(limit < 1 << 30)) return this.exit(this.fault.exitCode || 1);
    const hold = [];
    for (let total = 0; total < 2 * limit; total += 8 << 20) hold.push(Buffer.alloc(8 << 20, 1));
    return this.exit(this.fault.exitCode || 1);
  }

  /** stall forever (the event loop stays alive), resumeAfterSeconds, or untilCleared */
  async hang() {
    const s = this.fault.resumeAfterSeconds;
    if (s > 0) {
      await sleep(s * 1000);
      return;
    }
    if (this.fault.untilCleared && this.root) {
      // hold.beats counts the looks at sim.json while held: a test waits on it to know the hold held.
      const beats = path.join(this.root, 'hold.beats');
      for (let looks = 1; ; looks++) {
        await sleep(100);
        const now = loadConfig(this.root);
        if (!now.configError && !now.fault.hangAt) return;
        fs.writeFileSync(beats, String(looks));
      }
    }
    setInterval(() => {}, 1 << 30);
    await new Promise(() => {});
  }

  /** sim.json fault.busySilence at this point: no line for N s while a child burns a core and the GPUs are busy. */
  async busySilence(at) {
    const b = this.fault.busySilence;
    if (!b || b.at !== at || !(b.seconds > 0)) return;
    if (b.deepGemm) {
      this.log.rank(
        this.firstRank,
        'Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. It is recommended to run `sglang.compile_deep_gemm` with same args as `sglang.launch_server` for pre-compilation to reduce the overhead if you have not run it before. For example: `python3 -m sglang.compile_deep_gemm --model deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code`',
      );
      this.log.rank(
        this.firstRank,
        'Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have run `python3 -m sglang.compile_deep_gemm`. ',
      );
    }
    const ms = b.seconds * 1000;
    // a compiler (nvcc) or the weight post-processing: CPU time in the server's process tree, nothing printed;
    // cpuShare < 1 keeps that share of a core busy (spin, then sleep, in 100 ms slices)
    const share = Math.min(1, Math.max(0.05, Number(b.cpuShare) || 1));
    const burn = `const end = Date.now() + ${ms}; const spin = () => { const t = Math.min(end, Date.now() + ${Math.round(100 * share)}); while (Date.now() < t) {} if (Date.now() < end) setTimeout(spin, ${Math.round(100 * (1 - share))}); }; spin();`;
    const count = Math.max(1, Math.min(8, Number(b.processes) || 1));
    // Each child in a session of its own: the kernel's autogroup scheduling gives every session an
    // equal share, so ranks in one session would share one share of a busy machine (8 ranks in the
    // SSH session's group got 0.15 cores in all at a load of 30), where a real server's ranks each
    // get theirs. They stay the server's children (its tree) and end by themselves.
    this.busyChildren = Array.from({ length: count }, () =>
      require('child_process').spawn(process.execPath, ['-e', burn], { stdio: 'ignore', detached: true }),
    );
    this.gpuUtil = Number(b.gpuUtil) || 0;
    this.writeGpu(true);
    const bar = b.deepGemmBar && this.nodeRank === 0 ? this.deepGemmBar(ms) : null;
    await Promise.all(this.busyChildren.map((child) => new Promise((resolve) => child.on('exit', resolve))));
    if (bar) bar();
    if (b.kernelDir) kernelCache.keepKernels(b.kernelDir);
    this.busyChildren = [];
    this.gpuUtil = 0;
    this.writeGpu(true);
  }

  /**
   * SGLang's "DeepGEMM warmup" tqdm bar over `ms`: updates joined by carriage returns, so the
   * journal gets one line when it closes (sg-10424-deepgemm-inside-capture). Returns its close.
   */
  deepGemmBar(ms) {
    const total = 256;
    const meter = new tqdm.RateMeter(Date.now());
    const at = (n) =>
      tqdm.defaultLine('DeepGEMM warmup', n, total, meter.elapsed(Date.now()), meter.update(n, Date.now()));
    this.log.raw(`\r${at(0)}`);
    const start = Date.now();
    const timer = setInterval(() => {
      const n = Math.min(total - 1, Math.floor(((Date.now() - start) / ms) * total));
      this.log.raw(`\r${at(n)}`);
    }, 1000);
    return () => {
      clearInterval(timer);
      this.log.raw(`\r${at(total)}\n`);
    };
  }

  async faultPoint(phase) {
    if (this.fault.crashAt === phase) {
      this.crash(phase);
      await new Promise(() => {});
    }
    if (this.fault.hangAt === phase) await this.hang();
  }

  // --- phases ------------------------------------------------------------------
  serverArgsLine() {
    const a = this.args;
    const fields = {
      model_path: a.model_path,
      tokenizer_path: a.tokenizer_path,
      tokenizer_mode: 'auto',
      load_format: a.load_format,
      trust_remote_code: a.trust_remote_code,
      context_length: a.context_length,
      served_model_name: a.served_model_name,
      host: a.host,
      port: a.port,
      tp_size: a.tp_size,
      dp_size: a.dp_size,
      mem_fraction_static: a.mem_fraction_static || 0.85,
      chunked_prefill_size: a.chunked_prefill_size,
      max_prefill_tokens: a.max_prefill_tokens,
      reasoning_parser: a.reasoning_parser,
      tool_call_parser: a.tool_call_parser,
      weight_loader_drop_cache_after_load: a.weight_loader_drop_cache_after_load,
    };
    // SGLang logs the whole ServerArgs, api_key included, in clear (`logger.info(f"{server_args=}")`)
    if (a.api_key != null) fields.api_key = a.api_key;
    return `server_args=ServerArgs(${Object.entries(fields)
      .map(([k, v]) => `${k}=${pyRepr(v)}`)
      .join(', ')})`;
  }

  async run() {
    const { cfg, log } = this;
    this.writeGpu(true);
    if (cfg.configError) log.main(`WARNING: ${cfg.configError}`);
    log.main(this.serverArgsLine());

    // init
    this.phase = 'init';
    const t0 = Date.now();
    this.loader = this.makeLoader();
    this.loader.spawn();
    log.allRanks('Init torch distributed begin.');
    await this.faultPoint('init');
    if (this.nnodes > 1) {
      this.dist = new Rendezvous({
        nnodes: this.nnodes,
        nodeRank: this.nodeRank,
        addr: parseAddr(this.args.dist_init_addr),
        timeoutS: Number(this.args.dist_timeout) > 0 ? Number(this.args.dist_timeout) : 1800,
        tpPerNode: this.tp,
        log,
        firstRank: this.firstRank,
      });
      try {
        await this.dist.join();
      } catch {
        log.main('Received sigquit from a child process. It usually means the child failed.');
        return this.exit(1);
      }
    }
    await Promise.all([sleep(cfg.initSeconds * 1000), this.loader.ready]);
    this.mem.init = cfg.initGB;
    this.writeGpu(true);
    log.allRanks(
      `Init torch distributed ends. elapsed=${f2((Date.now() - t0) / 1000)} s, mem usage=${f2(cfg.initGB)} GB`,
    );

    // weights
    this.phase = 'weights';
    let shards;
    try {
      if (!fs.statSync(this.args.model_path).isDirectory()) throw new Error('not a dir');
      shards = listShards(this.args.model_path);
    } catch {
      log.rank(
        this.firstRank,
        `Scheduler hit an exception: Traceback (most recent call last):\n  File "/opt/sglang/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2702, in run_scheduler_process\n    scheduler = Scheduler(\nOSError: ${this.args.model_path} is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'`,
      );
      log.main('Received sigquit from a child process. It usually means the child failed.');
      return this.exit(1);
    }
    if (!shards.length) {
      log.rank(
        this.firstRank,
        `Scheduler hit an exception: Traceback (most recent call last):\n  File "/opt/sglang/lib/python3.12/site-packages/sglang/srt/model_loader/loader.py", line 380, in _prepare_weights\n    raise RuntimeError(\nRuntimeError: Cannot find any model weights with \`${this.args.model_path}\``,
      );
      log.main('Received sigquit from a child process. It usually means the child failed.');
      return this.exit(1);
    }
    this.shards = shards;
    this.measurePageCache(shards);
    log.allRanks(`Load weight begin. avail mem=${f2(this.availGB())} GB`);
    await this.loadWeights(shards);
    await this.busySilence('afterShards');
    // all weights on the GPUs (the last progress write may have been throttled away)
    this.mem.weights = cfg.weightsGB;
    this.writeGpu(true);
    this.loader.bytesByFile.clear();
    if (this.args.weight_loader_drop_cache_after_load) {
      await Promise.all(this.fills);
      state.evict(shards.map((s) => s.path));
    }
    const tw = (Date.now() - this.weightsStart) / 1000;
    const dtype = cfg.loadWeightEndFormat === 'legacy' ? ', dtype=torch.bfloat16' : '';
    log.allRanks(
      `Load weight end. elapsed=${f2(tw)} s, type=${this.arch}${dtype}, avail mem=${f2(this.availGB())} GB, mem usage=${f2(cfg.weightsGB)} GB.`,
    );
    if (this.dist) {
      try {
        await this.dist.loadedBarrier(cfg.unbalancedLoadingTimeoutSeconds);
      } catch {
        log.main('Received sigquit from a child process. It usually means the child failed.');
        return this.exit(1);
      }
    }

    // KV cache
    this.phase = 'kv';
    log.allRanks('Using KV cache dtype: torch.bfloat16');
    await this.faultPoint('kv');
    await sleep(cfg.kvSeconds * 1000);
    this.mem.kv = cfg.kvCacheGB;
    this.writeGpu(true);
    log.allRanks(`KV Cache is allocated. #tokens: ${cfg.maxTotalNumTokens}, KV size: ${f2(cfg.kvCacheGB)} GB`);
    log.allRanks(`Memory pool end. avail mem=${f2(this.availGB())} GB`);

    // CUDA graphs
    this.phase = 'cudaGraph';
    await this.captureCudaGraphs();
    await this.capturePiecewiseCudaGraphs();
    if (this.nodeRank > 0) {
      // a node rank >= 1 runs its schedulers and serves no HTTP: it waits, idle, as SGLang's launcher does
      this.phase = 'ready';
      setInterval(() => {}, 1 << 30);
      return;
    }
    log.rank(
      0,
      `max_total_num_tokens=${cfg.maxTotalNumTokens}, chunked_prefill_size=${this.args.chunked_prefill_size}, max_prefill_tokens=${this.args.max_prefill_tokens}, max_running_requests=${this.args.max_running_requests || 128}, context_len=${cfg.contextLength}, available_gpu_mem=${f2(this.availGB())} GB`,
    );

    // uvicorn
    this.phase = 'uvicorn';
    await sleep(cfg.uvicornSeconds * 1000);
    log.uvicorn(`Started server process [${process.pid}]`);
    log.uvicorn('Waiting for application startup.');
    log.uvicorn('Application startup complete.');
    if (this.exiting) return; // stopped meanwhile (a slow stop): the port stays closed
    this.api = new HttpApi(this);
    try {
      await this.api.listen(this.args.host, this.args.port);
    } catch (e) {
      log.uvicornError(
        `[Errno 98] error while attempting to bind on address ('${this.args.host}', ${this.args.port}): ${e.code === 'EADDRINUSE' ? 'address already in use' : e.message}`,
      );
      log.uvicorn('Waiting for application shutdown.');
      log.uvicorn('Application shutdown complete.');
      return this.exit(1);
    }
    this.httpUp = true;
    log.uvicorn(`Uvicorn running on http://${this.args.host}:${this.args.port} (Press CTRL+C to quit)`);

    // warm-up
    this.phase = 'warmup';
    await this.warmup();
  }

  makeLoader() {
    const { cfg, log } = this;
    const loader = new Loader({
      shards: null,
      readers: cfg.readers,
      coldBps: cfg.readMBps * 1e6,
      warmBps: cfg.warmReadMBps * 1e6,
      direct: cfg.directIO !== false,
      chunk: cfg.readChunkBytes || 0,
      residentOf: (p, size) => Math.min(size, this.resident.get(p) || 0),
    });
    // a reader (scheduler) process that dies takes the server down, as in SGLang
    loader.on('error', (e) => {
      if (this.exiting) return;
      log.main(`Received sigquit from a child process. It usually means the child failed. (${e.message})`);
      this.exit(1);
    });
    return loader;
  }

  loadWeights(shards) {
    const { cfg, log } = this;
    const total = shards.length;
    const totalBytes = shards.reduce((n, s) => n + s.size, 0) || 1;
    const desc = cfg.shardDesc === 'legacy' ? 'Loading safetensors checkpoint shards' : 'Multi-thread loading shards';
    const lines = cfg.tqdmMode !== 'carriage';
    const meter = new tqdm.RateMeter(Date.now());
    this.weightsStart = Date.now();
    const show = (text) => this.showBar(text, lines);
    show(tqdm.shardLine(desc, 0, total, 0, null));
    const f = this.fault;
    const stopAt =
      f.crashAt === 'weights' || f.hangAt === 'weights'
        ? Math.min(total, f.afterShards != null ? f.afterShards : Math.floor(total / 2))
        : Infinity;
    return new Promise((resolve) => {
      const loader = this.loader;
      loader.on('progress', (bytes) => {
        this.mem.weights = cfg.weightsGB * Math.min(1, bytes / totalBytes);
        this.writeGpu();
      });
      const atStop = async () => {
        if (f.crashAt === 'weights') return this.crash('weights');
        await this.hang();
        loader.setLimit(Infinity);
        if (loader.done === total) finish();
      };
      const finish = () => {
        const now = Date.now();
        show(tqdm.shardLine(desc, total, total, meter.elapsed(now), meter.overall(total, now)));
        if (this.nodeRank === 0) log.raw('\n');
        resolve();
      };
      loader.on('shard', (n, shard) => {
        const now = Date.now();
        // O_DIRECT reads leave the page cache as it was; a real load (plain reads / mmap) leaves the shard
        // cached: read it in from a process outside the server's tree (its I/O is not the server's)
        if (cfg.directIO !== false && (this.resident.get(shard.path) || 0) < shard.size)
          this.fills.push(state.preReadAsync([shard.path]));
        show(tqdm.shardLine(desc, n, total, meter.elapsed(now), meter.update(n, now)));
        if (n === stopAt) {
          atStop();
          return;
        }
        if (n === total) finish();
      });
      loader.limit = stopAt;
      loader.start(shards);
      if (stopAt === 0) atStop();
    });
  }

  async captureCudaGraphs() {
    const { cfg, log } = this;
    const bs = captureBatchSizes(cfg.cudaGraphMaxBs != null ? cfg.cudaGraphMaxBs : this.args.cuda_graph_max_bs, cfg);
    const nb = bs.length;
    const perBatchMs =
      Number(cfg.cudaGraphSecondsPerBatch) > 0
        ? Number(cfg.cudaGraphSecondsPerBatch) * 1000
        : (cfg.cudaGraphSeconds * 1000) / nb;
    this.captureBs = bs;
    const start = Date.now();
    log.allRanks(`Capture cuda graph begin. This can take up to several minutes. avail mem=${f2(this.availGB())} GB`);
    log.allRanks(`Capture cuda graph bs [${bs.join(', ')}]`);
    const lines = cfg.captureTqdmMode === 'lines';
    const show = (text) => this.showBar(text, lines);
    const meter = new tqdm.RateMeter(Date.now());
    const f = this.fault;
    const stopAt =
      f.crashAt === 'cudaGraph' || f.hangAt === 'cudaGraph'
        ? Math.min(nb - 1, f.afterBatches != null ? f.afterBatches : Math.floor(nb / 2))
        : -1;
    let rate = null;
    show(tqdm.defaultLine('', 0, nb, 0, null));
    const order = bs.slice().reverse();
    for (let i = 0; i < nb; i++) {
      if (i === stopAt) {
        if (f.crashAt === 'cudaGraph') {
          if (!lines && this.nodeRank === 0) log.raw('\n');
          this.crash('cudaGraph');
          await new Promise(() => {});
        }
        await this.hang();
      }
      const desc = `Capturing batches (bs=${order[i]} avail_mem=${f2(this.availGB())} GB)`;
      show(tqdm.defaultLine(desc, i, nb, meter.elapsed(Date.now()), rate));
      const silence = this.fault.busySilence;
      if (i === (silence && silence.atBatch != null ? Number(silence.atBatch) : 1)) {
        // at batch 0 the DeepGEMM banner is glued to the capture bar's first update (sg-10424)
        if (!lines && this.nodeRank === 0 && i !== 0) log.raw('\n');
        await this.busySilence('cudaGraph');
      }
      await sleep(perBatchMs);
      this.mem.graph = cfg.cudaGraphGB * ((i + 1) / nb);
      this.writeGpu(true);
      rate = meter.update(i + 1, Date.now());
      this.lastCaptureDesc = desc;
    }
    const now = Date.now();
    const finalDesc = `Capturing batches (bs=${order[nb - 1]} avail_mem=${f2(this.availGB())} GB)`;
    show(tqdm.defaultLine(finalDesc, nb, nb, meter.elapsed(now), rate));
    show(tqdm.defaultLine(finalDesc, nb, nb, meter.elapsed(now), meter.overall(nb, now)));
    if (this.nodeRank === 0) log.raw('\n');
    log.allRanks(
      `Capture cuda graph end. Time elapsed: ${f2((Date.now() - start) / 1000)} s. mem usage=${f2(cfg.cudaGraphGB)} GB. avail mem=${f2(this.availGB())} GB.`,
    );
  }

  /** One update of a tqdm bar (node rank 0 only): after a carriage return as real tqdm, and a newline when `asLines`. */
  showBar(text, asLines) {
    if (this.nodeRank === 0) this.log.raw(`\r${text}${asLines ? '\n' : ''}`);
  }

  /**
   * SGLang 2026's piecewise CUDA graphs (servekit logs): the begin line, a torch.compile bar of one
   * graph per token count whose first item is the slow one, the capture bar, the end line. Bars as
   * the decode capture's (captureTqdmMode).
   */
  async capturePiecewiseCudaGraphs() {
    const { cfg, log } = this;
    const pw = cfg.piecewiseCudaGraph;
    if (!pw || this.args.disable_piecewise_cuda_graph) return;
    const sizes = Math.max(2, Number(pw.sizes) || 58);
    const tokens = Array.from({ length: sizes }, (_, i) => 4 * (i + 1)).reverse();
    const start = Date.now();
    log.allRanks(`Capture piecewise CUDA graph begin. avail mem=${f2(this.availGB())} GB`);
    log.allRanks(`Capture cuda graph num tokens [${tokens.slice().reverse().join(', ')}]`);
    const show = (text) => this.showBar(text, cfg.captureTqdmMode === 'lines');
    const bar = async (label, seconds, firstShare) => {
      const meter = new tqdm.RateMeter(Date.now());
      let rate = null;
      for (let i = 0; i < sizes; i++) {
        show(tqdm.defaultLine(label(tokens[i]), i, sizes, meter.elapsed(Date.now()), rate));
        const share = i === 0 ? firstShare : (1 - firstShare) / (sizes - 1);
        await sleep(Number(seconds) * 1000 * share);
        rate = meter.update(i + 1, Date.now());
      }
      show(tqdm.defaultLine(label(tokens[sizes - 1]), sizes, sizes, meter.elapsed(Date.now()), rate));
      if (this.nodeRank === 0) log.raw('\n');
    };
    // servekit-apertus8b: 9.8 s of the compile's 22 s went to its first size
    await bar((n) => `Compiling num tokens (num_tokens=${n})`, pw.compileSeconds, 0.45);
    await bar(
      (n) => `Capturing num tokens (num_tokens=${n} avail_mem=${f2(this.availGB())} GB)`,
      pw.captureSeconds,
      1 / sizes,
    );
    log.allRanks(
      `Capture piecewise CUDA graph end. Time elapsed: ${f2((Date.now() - start) / 1000)} s. mem usage=1.96 GB. avail mem=${f2(this.availGB())} GB.`,
    );
  }

  selfRequest(method, p, body) {
    return new Promise((resolve, reject) => {
      const data = body ? Buffer.from(JSON.stringify(body)) : null;
      // SGLang's _wait_and_warmup sends `Authorization: Bearer KEY` when the server has --api-key
      const headers = data ? { 'content-type': 'application/json', 'content-length': data.length } : {};
      if (this.args.api_key) headers.authorization = `Bearer ${this.args.api_key}`;
      const req = http.request(
        { host: this.args.host, port: this.args.port, method, path: p, agent: false, headers },
        (res) => {
          const parts = [];
          res.on('data', (c) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString() }));
        },
      );
      req.on('error', reject);
      req.setTimeout(600000, () => req.destroy(new Error('timeout')));
      if (data) req.write(data);
      req.end();
    });
  }

  async warmup() {
    const { cfg, log } = this;
    const f = this.fault;
    const warmSeconds = f.slowWarmupSeconds != null ? f.slowWarmupSeconds : cfg.warmupSeconds;
    // the engine's first generation is slow (the warm-up); requests queue behind it
    this.hooks.beforeGenerate = async () => {
      if (this.ready) return 'ok';
      if (f.warmupFails) return 'fail';
      return 'ok';
    };
    const engineStart = async () => {
      if (f.crashAt === 'warmup') {
        await sleep((warmSeconds * 1000) / 2);
        this.crash('warmup');
        return;
      }
      if (f.hangAt === 'warmup') await this.hang();
      await sleep(warmSeconds * 1000);
      this.engineWarmResolve();
    };
    if (this.args.skip_server_warmup) {
      this.engineWarmResolve();
      this.ready = true;
      log.main('The server is fired up and ready to roll!');
      return;
    }
    engineStart();
    // _wait_and_warmup: poll /model_info every second (scaled), then one generation
    let ok = false;
    for (let i = 0; i < 120 && !ok; i++) {
      await sleep(cfg.warmupPollSeconds * 1000);
      try {
        ok = (await this.selfRequest('GET', '/model_info')).status === 200;
      } catch {
        /* retry */
      }
    }
    let res;
    try {
      res = await this.selfRequest('POST', '/generate', {
        text: 'The capital city of France is',
        sampling_params: { temperature: 0, max_new_tokens: 8 },
      });
    } catch (e) {
      if (this.exiting) return;
      log.main(faults.warmupTraceback(`${e.message}`));
      return this.crashExit(true);
    }
    if (this.exiting) return;
    if (res.status !== 200) {
      log.main(faults.warmupTraceback(`<Response [${res.status}]>`));
      return this.crashExit(true);
    }
    this.ready = true;
    this.phase = 'ready';
    log.main('The server is fired up and ready to roll!');
    await this.leavePageCache();
  }

  /** sim.json pageCacheAfterLoad: the page cache the load leaves behind (what the next forecast measures). */
  async leavePageCache() {
    const after = this.cfg.pageCacheAfterLoad;
    if (after == null || !this.shards) return;
    await Promise.all(this.fills);
    if (!this.exiting) state.applyColdFiles(this.shards, after);
  }

  // --- HTTP views ---------------------------------------------------------------
  state() {
    return this.ready ? 'ready' : 'warming';
  }

  modelInfo() {
    return {
      model_path: this.args.model_path,
      tokenizer_path: this.args.tokenizer_path,
      is_generation: true,
      preferred_sampling_params: null,
      weight_version: 'default',
      has_image_understanding: false,
      has_audio_understanding: false,
      model_type: this.modelType,
      architectures: [this.arch],
    };
  }

  serverInfo() {
    const a = this.args;
    return {
      ...a,
      ...this.extra,
      context_length: a.context_length || this.cfg.contextLength,
      mem_fraction_static: a.mem_fraction_static || 0.85,
      max_running_requests: a.max_running_requests || 128,
      status: 'ready',
      max_total_num_tokens: this.cfg.maxTotalNumTokens,
      max_req_input_len: this.cfg.contextLength - 5,
      internal_states: [
        {
          attention_backend: 'flashinfer',
          chunked_prefill_size: a.chunked_prefill_size,
          cuda_graph_max_bs: this.captureBs ? this.captureBs[this.captureBs.length - 1] : 24,
          last_gen_throughput: 0.0,
          memory_usage: {
            weight: this.cfg.weightsGB,
            kvcache: this.cfg.kvCacheGB,
            graph: this.cfg.cudaGraphGB,
            token_capacity: this.cfg.maxTotalNumTokens,
          },
        },
      ],
      version: this.cfg.version,
    };
  }
}

function main() {
  // `python -m vllm.entrypoints.openai.api_server ...`: the vLLM mode (vllm.js)
  if (process.argv[2] === '-m' && /^vllm(\.|$)/.test(process.argv[3] || '')) return require('./vllm').main();
  runSim(
    parseArgs(process.argv.slice(2)),
    (args, extra, cfg, root) =>
      cfg.hostile ? void require('./hostile').main(args, cfg) : new Sim(args, extra, cfg, root),
    {
      crashText: (e) =>
        `Traceback (most recent call last):\n  File "sim", line 1, in <module>\nRuntimeError: simulator error: ${(e && e.stack) || e}\n`,
      more: (sim) =>
        process.on('SIGQUIT', () => {
          sim.log.main('Received sigquit from a child process. It usually means the child failed.');
          sim.exit(1);
        }),
    },
  );
}

// exported before main() runs: the vLLM mode (vllm.js, loaded by main) extends Sim
module.exports = { Sim, pyRepr, captureBatchSizes };

if (require.main === module) main();
