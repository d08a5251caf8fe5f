#!/usr/bin/env node
'use strict';
/*
 * vLLM mode of the simulator (docs/vllm-server.md): run as `vllm serve MODEL [flags]` (the harness's
 * `vllm` stand-in) or `... -m vllm.entrypoints.openai.api_server --model MODEL [flags]`.
 * Reuses the SGLang simulator's real weight reads (page cache, block I/O, gpu.json) and prints what
 * vLLM prints, in vLLM's order and format: `(APIServer pid=N) INFO MM-DD HH:MM:SS [file.py:N] msg`,
 * `(EngineCore_DP0 pid=N) ...`, per-worker lines `(Worker_TP<r> pid=N) ...` when TP > 1, the
 * `Loading safetensors checkpoint shards` bar, the two CUDA-graph bars. The port opens only after the
 * engine is up (no warm-up afterwards); /health is 200 from then on, 503 once the engine is dead.
 *
 * Flags read: MODEL (or --model), --served-model-name, --host, --port (8000), --tensor-parallel-size/-tp,
 *   --reasoning-parser, --tool-call-parser, --enable-auto-tool-choice, --api-key, --max-model-len, --enforce-eager.
 *   Refused at start like vLLM: --enable-auto-tool-choice without --tool-call-parser (TypeError), unknown parser
 *   names (KeyError), bad flags (argparse, exit 2).
 * sim.json: the SGLang keys for timings/rates/memory (initSeconds, readMBps, kvSeconds, cudaGraphSeconds,
 *   cudaGraphBatches, uvicornSeconds, tokenDelayMs, weightsGB, kvCacheGB, ...), and
 *   vllmVersion "0.16.0", vllmReasoningField "reasoning" | "both" | "reasoning_content" (the message field, by version),
 *   fault: crashAt "init"|"weights"|"kv"|"cudaGraph" with kind "oom" (torch CUDA OOM) | "kv" (no memory left for the
 *     KV cache: negative "Available KV cache memory", then "No available memory for the cache blocks") |
 *     "kvTooSmall" (max seq len does not fit) | "traceback"; afterShards / afterBatches as in SGLang mode;
 *     hangAt the same phases; engineDiesAfterSeconds N: N s after ready the engine core dies (CUDA error),
 *     /health answers 503 and generation 500 for deadLingerSeconds (1), then the server exits 1.
 */
const fs = require('fs');
const { Logger } = require('./log');
const { Sim } = require('./main');
const { listShards } = require('./loader');
const tqdm = require('./tqdm');
const faults = require('./faults');
const { parseVllmArgs } = require('./vllm-args');
const { VllmHttpApi } = require('./vllm-http');
const { runSim } = require('./run');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const f2 = (x) => x.toFixed(2);
const SITE = '/usr/local/lib/python3.12/dist-packages/vllm';

function vts(d = new Date()) {
  const p = (n) => String(n).padStart(2, '0');
  return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** vLLM's line format: the process tag on every line, the logger's prefix on every line of a message. */
class VllmLogger extends Logger {
  constructor(o) {
    super(o);
    this.pid = process.pid;
  }
  tag(proc, pid = this.pid) {
    return `(${proc} pid=${pid}) `;
  }
  line(proc, level, site, msg, pid) {
    const head = `${this.tag(proc, pid)}${level} ${vts()} [${site}] `;
    this.err(
      String(msg)
        .split('\n')
        .map((l) => head + l)
        .join('\n') + '\n',
    );
  }
  api(site, msg, level = 'INFO') {
    this.line('APIServer', level, site, msg);
  }
  engine(site, msg, level = 'INFO') {
    this.line('EngineCore_DP0', level, site, msg, this.pid + 1);
  }
  /** per worker with TP > 1 (one line each), else the engine core's own line */
  workers(site, msg, level = 'INFO') {
    if (this.tp <= 1) return this.engine(site, msg, level);
    for (let r = 0; r < this.tp; r++)
      this.line(`Worker_TP${r}`, level, site, typeof msg === 'function' ? msg(r) : msg, this.pid + 2 + r);
  }
  raw(s) {
    this.err(s);
  }
  // what the SGLang base class calls
  main(msg) {
    this.api('launcher.py:99', msg);
  }
  rank(r, msg) {
    this.engine('core.py:99', msg);
  }
  allRanks(msg) {
    this.workers('gpu_worker.py:99', msg);
  }
  uvicorn(msg) {
    this.err(`${this.tag('APIServer')}INFO:     ${msg}\n`);
  }
  uvicornError(msg) {
    this.err(`${this.tag('APIServer')}ERROR:    ${msg}\n`);
  }
  access(client, method, url, status) {
    this.out(
      `${this.tag('APIServer')}INFO:     ${client} - "${method} ${url} HTTP/1.1" ${status} ${status === 200 ? 'OK' : ''}\n`,
    );
  }
}

/** The exception line of a start-up failure, per phase and kind (vLLM's own messages). */
function exceptionOf(phase, kind, sim) {
  if (kind === 'oom') return faults.exceptionLines(phase === 'kv' ? 'kv' : phase, 'oom')[0];
  if (phase === 'kv' && kind === 'kvTooSmall') {
    const max = sim.maxModelLen();
    return `ValueError: To serve at least one request with the model's max seq len (${max}), (17.16 GiB KV cache is needed, which is larger than the available KV cache memory (${f2(sim.cfg.kvCacheGB)} GiB). Based on the available memory, the estimated maximum model length is ${Math.floor((max * sim.cfg.kvCacheGB) / 17.16)}. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine.`;
  }
  if (phase === 'kv')
    return 'ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.';
  if (phase === 'weights')
    return 'safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer';
  if (phase === 'cudaGraph') return 'RuntimeError: CUDA error: an illegal memory access was encountered';
  return 'RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)';
}

class VllmSim extends Sim {
  constructor(args, extra, cfg, root) {
    super(
      { ...args, model_path: args.model, tokenizer_path: args.model, tp_size: args.tensor_parallel_size },
      extra,
      cfg,
      root,
    );
    this.cfg = {
      ...cfg,
      shardDesc: 'legacy',
      vllmVersion: cfg.vllmVersion || '0.16.0',
      vllmReasoningField: cfg.vllmReasoningField || 'reasoning',
    };
    this.log = new VllmLogger({ tp: this.tp });
    this.engineDead = false;
  }

  maxModelLen() {
    return this.args.max_model_len || this.cfg.contextLength;
  }
  state() {
    return 'ready';
  }
  serverInfo() {
    return null;
  }

  /** EngineCore's "failed to start" with its traceback, then the API server's wrapper; exit 1. */
  crash(phase, kind) {
    if (this.exiting) return;
    const k = kind || this.fault.kind || (phase === 'kv' ? 'kv' : 'traceback');
    const log = this.log;
    if (phase === 'kv' && k === 'kv') log.workers('gpu_worker.py:298', 'Available KV cache memory: -2.31 GiB');
    const exception = exceptionOf(phase, k, this);
    log.engine(
      'core.py:708',
      [
        'EngineCore failed to start.',
        'Traceback (most recent call last):',
        `  File "${SITE}/v1/engine/core.py", line 699, in run_engine_core`,
        '    engine_core = EngineCoreProc(*args, **kwargs)',
        `  File "${SITE}/v1/engine/core.py", line 505, in __init__`,
        '    super().__init__(vllm_config, executor_class, log_stats,',
        `  File "${SITE}/v1/engine/core.py", line 91, in __init__`,
        '    self._initialize_kv_caches(vllm_config)',
        exception,
      ].join('\n'),
      'ERROR',
    );
    const api = this.log.tag('APIServer');
    log.raw(
      [
        `${api}Traceback (most recent call last):`,
        `${api}  File "/usr/local/bin/vllm", line 10, in <module>`,
        `${api}    sys.exit(main())`,
        `${api}  File "${SITE}/v1/engine/utils.py", line 1010, in wait_for_engine_startup`,
        `${api}    raise RuntimeError(`,
        `${api}RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}`,
      ].join('\n') + '\n',
    );
    return this.crashExit(false);
  }

  async run() {
    const { cfg, log, args } = this;
    const ver = cfg.vllmVersion;
    this.writeGpu(true);
    if (cfg.configError) log.api('api_server.py:1', `sim.json: ${cfg.configError}`, 'WARNING');
    log.api('api_server.py:1842', `vLLM API server version ${ver}`);
    const nonDefault = {
      model_tag: args.model,
      model: args.model,
      host: args.host,
      port: args.port,
      tensor_parallel_size: this.tp,
      served_model_name: [args.served_model_name],
      reasoning_parser: args.reasoning_parser,
      tool_call_parser: args.tool_call_parser,
      enable_auto_tool_choice: args.enable_auto_tool_choice || undefined,
    };
    log.api(
      'utils.py:233',
      `non-default args: {${Object.entries(nonDefault)
        .filter(([, v]) => v != null)
        .map(([k, v]) => `'${k}': ${JSON.stringify(v).replace(/"/g, "'")}`)
        .join(', ')}}`,
    );
    log.api('model.py:547', `Resolved architecture: ${this.arch}`);
    log.api('model.py:1510', `Using max model len ${this.maxModelLen()}`);

    // engine core start
    const t0 = Date.now();
    log.engine('core.py:644', 'Waiting for init message from front-end.');
    log.engine(
      'core.py:77',
      `Initializing a V1 LLM engine (v${ver}) with config: model='${args.model}', speculative_config=None, tokenizer='${args.model}', dtype=torch.bfloat16, max_seq_len=${this.maxModelLen()}, load_format=auto, tensor_parallel_size=${this.tp}, enforce_eager=${args.enforce_eager ? 'True' : 'False'}, served_model_name=${args.served_model_name}`,
    );
    this.loader = this.makeLoader();
    this.loader.spawn();
    await this.faultPoint('init');
    await Promise.all([sleep(cfg.initSeconds * 1000), this.loader.ready]);
    this.mem.init = cfg.initGB;
    this.writeGpu(true);
    log.workers(
      'parallel_state.py:1208',
      (r) => `rank ${r} in world size ${this.tp} is assigned as DP rank 0, PP rank 0, TP rank ${r}, EP rank ${r}`,
    );

    // weights
    this.phase = 'weights';
    log.workers('gpu_model_runner.py:2602', `Starting to load model ${args.model}...`);
    let shards = [];
    try {
      if (fs.statSync(args.model).isDirectory()) shards = listShards(args.model);
    } catch {
      /* below */
    }
    if (!shards.length) {
      this.fault = { ...this.fault, kind: 'noWeights' };
      log.engine(
        'core.py:708',
        [
          'EngineCore failed to start.',
          'Traceback (most recent call last):',
          `  File "${SITE}/model_executor/model_loader/default_loader.py", line 266, in _prepare_weights`,
          '    raise RuntimeError(',
          `RuntimeError: Cannot find any model weights with \`${args.model}\``,
        ].join('\n'),
        'ERROR',
      );
      log.raw(
        `${log.tag('APIServer')}RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}\n`,
      );
      return this.exit(1);
    }
    this.measurePageCache(shards);
    await this.loadWeights(shards);
    this.mem.weights = cfg.weightsGB;
    this.writeGpu(true);
    this.loader.bytesByFile.clear();
    const tw = (Date.now() - this.weightsStart) / 1000;
    log.workers('default_loader.py:267', `Loading weights took ${f2(tw)} seconds`);
    log.workers(
      'gpu_model_runner.py:2653',
      `Model loading took ${cfg.weightsGB.toFixed(4)} GiB and ${((Date.now() - t0) / 1000).toFixed(6)} seconds`,
    );

    // profile run (torch.compile) and the KV cache
    this.phase = 'kv';
    const tk = Date.now();
    if (!args.enforce_eager) {
      log.workers(
        'backends.py:548',
        (r) =>
          `Using cache directory: /root/.cache/vllm/torch_compile_cache/d865434b5b/rank_${r}_0/backbone for vLLM's torch.compile`,
      );
      log.workers('backends.py:559', `Dynamo bytecode transform time: ${f2(cfg.kvSeconds / 3)} s`);
    }
    await this.faultPoint('kv');
    await sleep(cfg.kvSeconds * 1000);
    if (!args.enforce_eager) log.workers('monitor.py:34', `torch.compile takes ${f2(cfg.kvSeconds / 2)} s in total`);
    this.mem.kv = cfg.kvCacheGB;
    this.writeGpu(true);
    log.workers('gpu_worker.py:298', `Available KV cache memory: ${f2(cfg.kvCacheGB)} GiB`);
    const tokens = cfg.maxTotalNumTokens;
    log.engine('kv_cache_utils.py:1087', `GPU KV cache size: ${tokens.toLocaleString('en-US')} tokens`);
    log.engine(
      'kv_cache_utils.py:1091',
      `Maximum concurrency for ${this.maxModelLen().toLocaleString('en-US')} tokens per request: ${f2(tokens / this.maxModelLen())}x`,
    );

    // CUDA graphs
    if (!args.enforce_eager) {
      this.phase = 'cudaGraph';
      const tg = Date.now();
      await this.captureVllmGraphs();
      log.workers(
        'gpu_model_runner.py:3480',
        `Graph capturing finished in ${Math.round((Date.now() - tg) / 1000)} secs, took ${f2(cfg.cudaGraphGB)} GiB`,
      );
    }
    log.engine(
      'core.py:210',
      `init engine (profile, create kv cache, warmup model) took ${f2((Date.now() - tk) / 1000)} seconds`,
    );

    // API server: the port opens now
    this.phase = 'uvicorn';
    await sleep(cfg.uvicornSeconds * 1000);
    log.api('api_server.py:1637', "Supported_tasks: ['generate']");
    const host = args.host || '0.0.0.0';
    log.api('api_server.py:1915', `Starting vLLM API server 0 on http://${host}:${args.port}`);
    log.api('launcher.py:34', 'Available routes are:');
    for (const [route, methods] of [
      ['/health', 'GET'],
      ['/ping', 'GET'],
      ['/v1/models', 'GET'],
      ['/version', 'GET'],
      ['/v1/chat/completions', 'POST'],
      ['/v1/completions', 'POST'],
    ]) {
      log.api('launcher.py:42', `Route: ${route}, Methods: ${methods}`);
    }
    if (this.exiting) return;
    this.api = new VllmHttpApi(this);
    try {
      await this.api.listen(host === '0.0.0.0' ? '0.0.0.0' : host, args.port);
    } catch (e) {
      log.raw(`${log.tag('APIServer')}OSError: [Errno 98] Address already in use (${e.code || e.message})\n`);
      return this.exit(1);
    }
    this.httpUp = true;
    log.uvicorn(`Started server process [${process.pid}]`);
    log.uvicorn('Waiting for application startup.');
    log.uvicorn('Application startup complete.');
    this.engineWarmResolve();
    this.ready = true;
    this.phase = 'ready';
    if (this.fault.engineDiesAfterSeconds != null) this.engineDiesLater(this.fault.engineDiesAfterSeconds);
  }

  async captureVllmGraphs() {
    const { cfg, log } = this;
    const first = Math.max(1, cfg.cudaGraphBatches);
    const bars = [
      ['Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)', first],
      ['Capturing CUDA graphs (decode, FULL)', Math.max(1, Math.ceil(first / 2))],
    ];
    const all = first + bars[1][1];
    const f = this.fault;
    const stopAt =
      f.crashAt === 'cudaGraph' || f.hangAt === 'cudaGraph'
        ? Math.min(all - 1, f.afterBatches != null ? f.afterBatches : Math.floor(all / 2))
        : -1;
    let done = 0;
    for (const [desc, n] of bars) {
      const meter = new tqdm.RateMeter(Date.now());
      let rate = null;
      log.raw(`\r${tqdm.defaultLine(desc, 0, n, 0, null)}`);
      for (let i = 0; i < n; i++, done++) {
        if (done === stopAt) {
          log.raw('\n');
          if (f.crashAt === 'cudaGraph') {
            this.crash('cudaGraph');
            await new Promise(() => {});
          }
          await this.hang();
        }
        await sleep((cfg.cudaGraphSeconds * 1000) / all);
        this.mem.graph = cfg.cudaGraphGB * ((done + 1) / all);
        this.writeGpu(true);
        rate = meter.update(i + 1, Date.now());
        log.raw(`\r${tqdm.defaultLine(desc, i + 1, n, meter.elapsed(Date.now()), rate)}`);
      }
      log.raw('\n');
    }
  }

  /** The engine core dies after ready: its fatal error, the API server's EngineDeadError, 503s, then exit. */
  engineDiesLater(seconds) {
    setTimeout(() => {
      if (this.exiting) return;
      this.engineDead = true;
      const log = this.log;
      log.engine(
        'core.py:789',
        [
          'EngineCore encountered a fatal error.',
          'Traceback (most recent call last):',
          `  File "${SITE}/v1/engine/core.py", line 780, in run_engine_core`,
          '    engine_core.run_busy_loop()',
          'RuntimeError: CUDA error: an illegal memory access was encountered',
        ].join('\n'),
        'ERROR',
      );
      log.api(
        'async_llm.py:480',
        'AsyncLLM output_handler failed.\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.',
        'ERROR',
      );
      const linger = Number(this.fault.deadLingerSeconds ?? 1);
      setTimeout(() => {
        if (this.exiting) return;
        log.uvicorn('Shutting down');
        this.exit(1);
      }, linger * 1000);
    }, seconds * 1000);
  }
}

function main() {
  runSim(parseVllmArgs(process.argv.slice(2)), (args, extra, cfg, root) => new VllmSim(args, extra, cfg, root), {
    crashText: (e) => `RuntimeError: simulator error: ${(e && e.stack) || e}\n`,
  });
}

if (require.main === module) main();

module.exports = { VllmSim, VllmLogger, main };
