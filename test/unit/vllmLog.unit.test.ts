import { strict as assert } from 'node:assert';
import type { JournalEvent } from '../../src/engine/events';
import { JournalReader, parseJournalLine, parseJournalMessage } from '../../src/engine/logReader';
import { stripPrefix } from '../../src/engine/logGrammar';
import { type LineContext as JournalContext } from '../../src/engine/logRules';
import { stripVllmPrefix } from '../../src/engine/vllm/vllmLog';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import { causeLine } from '../../src/present/report';

// A real vLLM 0.11.0 start (published log, docs/vllm-server.md §2), in order.
const E = '(EngineCore_DP0 pid=164) ';
const A = '(APIServer pid=1) ';
const REAL_START: Array<[string, JournalEvent[]]> = [
  [
    `${A}INFO 01-23 15:48:29 [api_server.py:1842] vLLM API server version 0.11.0+582e4e37.nv25.11`,
    [{ type: 'phase', phase: 'starting' }],
  ],
  [`${A}INFO 01-23 15:48:33 [model.py:1510] Using max model len 32768`, []],
  [
    `${E}INFO 01-23 15:48:36 [core.py:77] Initializing a V1 LLM engine (v0.11.0+582e4e37.nv25.11) with config: model='/models/mistral-7b', speculative_config=None`,
    [{ type: 'phase', phase: 'starting' }],
  ],
  [
    `${E}INFO 01-23 15:48:47 [gpu_model_runner.py:2602] Starting to load model /models/mistral-7b...`,
    [{ type: 'phase', phase: 'loading weights' }],
  ],
  [
    'Loading safetensors checkpoint shards:   0% Completed | 0/1 [00:00<?, ?it/s]',
    [{ type: 'shards', percent: 0, done: 0, total: 1 }],
  ],
  [
    'Loading safetensors checkpoint shards: 100% Completed | 1/1 [00:19<00:00, 19.47s/it]',
    [{ type: 'shards', percent: 100, done: 1, total: 1 }],
  ],
  [
    `${E}INFO 01-23 15:49:07 [default_loader.py:267] Loading weights took 19.62 seconds`,
    [{ type: 'weightsLoaded', elapsedSeconds: 19.62 }],
  ],
  [
    `${E}INFO 01-23 15:49:08 [gpu_model_runner.py:2653] Model loading took 3.8844 GiB and 20.442057 seconds`,
    [{ type: 'weightsLoaded', memUsageGB: 3.8844, elapsedSeconds: 20.442057 }],
  ],
  [
    `${E}INFO 01-23 15:49:11 [backends.py:559] Dynamo bytecode transform time: 3.29 s`,
    [{ type: 'phase', phase: 'allocating KV cache' }],
  ],
  [
    `${E}INFO 01-23 15:49:41 [monitor.py:34] torch.compile takes 13.29 s in total`,
    [{ type: 'phase', phase: 'allocating KV cache' }],
  ],
  [
    `${E}INFO 01-23 15:50:05 [gpu_worker.py:298] Available KV cache memory: 102.56 GiB`,
    [
      { type: 'phase', phase: 'allocating KV cache' },
      { type: 'kvCache', sizeGB: 102.56 },
    ],
  ],
  [
    `${E}INFO 01-23 15:50:06 [kv_cache_utils.py:1087] GPU KV cache size: 840,160 tokens`,
    [
      { type: 'phase', phase: 'allocating KV cache' },
      { type: 'kvCache', tokens: 840160 },
    ],
  ],
  [
    'Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  40%|████      | 27/67 [00:05<00:07,  5.43it/s]',
    [{ type: 'cudaGraphBatches', done: 27, total: 67 }],
  ],
  [
    'Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:12<00:00,  5.43it/s]',
    [{ type: 'cudaGraphBatches', done: 67, total: 67 }],
  ],
  // the second bar adds to the first: one progress over both
  [
    'Capturing CUDA graphs (decode, FULL):  20%|██        | 7/35 [00:01<00:04,  6.23it/s]',
    [{ type: 'cudaGraphBatches', done: 74, total: 102 }],
  ],
  [
    'Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:05<00:00,  6.23it/s]',
    [{ type: 'cudaGraphBatches', done: 102, total: 102 }],
  ],
  [
    `${E}INFO 01-23 15:50:29 [gpu_model_runner.py:3480] Graph capturing finished in 18 secs, took -0.03 GiB`,
    [
      { type: 'phase', phase: 'capturing CUDA graphs' },
      { type: 'cudaGraphBatches', done: 102, total: 102 },
    ],
  ],
  [`${E}INFO 01-23 15:50:29 [core.py:210] init engine (profile, create kv cache, warmup model) took 81.30 seconds`, []],
  [
    `${A}INFO 01-23 15:50:32 [api_server.py:1915] Starting vLLM API server 0 on http://0.0.0.0:8000`,
    [
      { type: 'phase', phase: 'warming up' },
      { type: 'httpUp', url: 'http://0.0.0.0:8000' },
    ],
  ],
  [`${A}INFO 01-23 15:50:32 [launcher.py:42] Route: /health, Methods: GET`, []],
  [`${A}INFO:     Started server process [1]`, []],
  [`${A}INFO:     Application startup complete.`, [{ type: 'phase', phase: 'warming up' }, { type: 'httpUp' }]],
  [`${A}INFO:     127.0.0.1:33050 - "GET /health HTTP/1.1" 200 OK`, []],
];

describe('vllmLog: a real vLLM start, line by line', () => {
  it('maps every line to the expected events, in order', () => {
    const ctx: JournalContext = { inTraceback: false };
    for (const [line, expected] of REAL_START) assert.deepEqual(parseJournalLine(line, ctx), expected, line);
  });

  it('reads older formats: no process tag, `file.py:N]` without `[`, GB instead of GiB, the old graph bar', () => {
    const ctx: JournalContext = { inTraceback: false };
    assert.deepEqual(
      parseJournalLine('INFO 02-23 21:38:46 model_runner.py:1008] Loading model weights took 14.9926 GB', ctx),
      [{ type: 'weightsLoaded', memUsageGB: 14.9926 }],
    );
    assert.deepEqual(
      parseJournalLine('INFO 04-30 17:52:43 [api_server.py:1090] Starting vLLM API server on http://0.0.0.0:8000', ctx),
      [
        { type: 'phase', phase: 'warming up' },
        { type: 'httpUp', url: 'http://0.0.0.0:8000' },
      ],
    );
    assert.deepEqual(
      parseJournalLine('Capturing CUDA graph shapes:  50%|█████     | 33/67 [00:12<00:12,  2.65it/s]', ctx),
      [{ type: 'cudaGraphBatches', done: 33, total: 67 }],
    );
  });

  it('strips the process tag and the logger prefix, and names the rank of a worker', () => {
    assert.deepEqual(
      stripVllmPrefix(
        '(Worker_TP3 pid=98743) INFO 04-30 19:50:08 [gpu_worker.py:298] Available KV cache memory: 5.0 GiB',
      ),
      {
        text: 'Available KV cache memory: 5.0 GiB',
        process: 'Worker_TP3',
        ranks: 'TP3',
        level: 'INFO',
      },
    );
    assert.equal(stripVllmPrefix('(VllmWorker rank=2 pid=12) INFO 04-30 19:50:08 [x.py:1] hi')?.ranks, 'TP2');
    assert.equal(stripVllmPrefix('[2026-11-30 05:40:12 TP0] Load weight begin.'), undefined);
    assert.equal(stripPrefix('(Worker_TP1 pid=5) INFO 04-30 19:50:08 [x.py:1] hi').ranks, 'TP1');
  });

  it('counts a line that every TP worker prints once', () => {
    const reader = new JournalReader();
    const events = [0, 1, 2, 3].flatMap((r) =>
      reader.read(
        `(Worker_TP${r} pid=${100 + r}) INFO 04-30 19:50:08 [gpu_worker.py:298] Available KV cache memory: 5.03 GiB`,
        1000 + r,
      ),
    );
    assert.deepEqual(events, [
      { type: 'phase', phase: 'allocating KV cache' },
      { type: 'kvCache', sizeGB: 5.03 },
    ]);
  });
});

// The KV-cache failure as vLLM prints it (kv_cache_utils.py, core.py run_engine_core, utils.py wait_for_engine_startup).
const KV_FAILURE = [
  `${E}INFO 09-18 21:38:01 [gpu_worker.py:298] Available KV cache memory: -0.49 GiB`,
  `${E}ERROR 09-18 21:38:02 [core.py:708] EngineCore failed to start.`,
  `${E}ERROR 09-18 21:38:02 [core.py:708] Traceback (most recent call last):`,
  `${E}ERROR 09-18 21:38:02 [core.py:708]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core`,
  `${E}ERROR 09-18 21:38:02 [core.py:708]     raise ValueError(`,
  `${E}ERROR 09-18 21:38:02 [core.py:708] ValueError: No available memory for the cache blocks. Try increasing \`gpu_memory_utilization\` when initializing the engine.`,
  `${A}Traceback (most recent call last):`,
  `${A}  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/utils.py", line 1010, in wait_for_engine_startup`,
  `${A}    raise RuntimeError(`,
  `${A}RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}`,
];

describe('vllmLog: failures', () => {
  it('reads a KV-cache failure as fatal, and the cause line is the real cause, not the wrapper', () => {
    const ctx: JournalContext = { inTraceback: false };
    const events = KV_FAILURE.flatMap((l) => parseJournalLine(l, ctx).map((e) => ({ e, l })));
    const errors = events.filter(({ e }) => e.type === 'error');
    assert.ok(
      errors.some(({ e, l }) => e.type === 'error' && e.fatal && /No available memory for the cache blocks/.test(l)),
    );
    assert.ok(errors.some(({ e }) => e.type === 'error' && e.fatal && /EngineCore failed to start/.test(e.text)));
    assert.ok(
      errors.some(({ e }) => e.type === 'error' && !e.fatal && /Available KV cache memory: -0.49 GiB/.test(e.text)),
    );
    assert.match(causeLine(errors.map(({ l }) => l)) ?? '', /ValueError: No available memory for the cache blocks/);
  });

  it('reads the start-up refusals as fatal', () => {
    for (const line of [
      "ValueError: To serve at least one request with the model's max seq len (262144), (7.17 GiB KV cache is needed, which is larger than the available KV cache memory (6.74 GiB).",
      'ValueError: Free memory on device (6.9/8.0 GiB) on startup is less than desired GPU memory utilization (0.9, 7.2 GiB).',
      'TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser',
      "vllm serve: error: argument --tool-call-parser: invalid choice: 'kimi_k9'",
      `${E}ERROR 01-01 00:00:00 [core.py:1] EngineCore encountered a fatal error.`,
      `${A}ERROR 01-01 00:00:00 [async_llm.py:1] AsyncLLM output_handler failed. vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.`,
    ]) {
      const events = parseJournalMessage(line);
      assert.ok(
        events.some((e) => e.type === 'error' && e.fatal),
        line,
      );
    }
  });

  it('folds a real start into the load state: phases in order, shard progress, graphs, HTTP up', () => {
    let state = initialState(0);
    const ctx: JournalContext = { inTraceback: false };
    let at = 1000;
    const seen: string[] = [];
    for (const [line] of REAL_START) {
      for (const event of parseJournalLine(line, ctx))
        state = reduce(state, { kind: 'journal', at: (at += 10), event, text: line });
      if (state.phase && seen[seen.length - 1] !== state.phase) seen.push(state.phase);
    }
    assert.deepEqual(seen, [
      'starting',
      'loading weights',
      'allocating KV cache',
      'capturing CUDA graphs',
      'warming up',
    ]);
    assert.deepEqual(state.shards, { done: 1, total: 1 });
    assert.deepEqual(
      { done: state.cudaGraphBatches?.done, total: state.cudaGraphBatches?.total },
      { done: 102, total: 102 },
    );
  });
});
