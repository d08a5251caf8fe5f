import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { JournalReader } from '../../src/engine/logReader';
import { activityEvents, activityLabel } from '../../src/engine/activity';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { describe as describeState } from '../../src/present/messages';
import { visibleEta } from '../../src/present/etaText';
import { serverReport } from '../../src/present/report';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import type { ServerProfile } from '../../src/config/config';
import { runningUnit } from '../util/loadFixtures';

// Lines are verbatim from the published logs of ../shared/real-logs (ids in each test's name).

const unit = runningUnit;

function started(): LoadState {
  return [{ kind: 'restartRequested', at: 0 } as Signal, { kind: 'tiedToRun', at: 500, unit: unit() } as Signal].reduce(
    reduce,
    initialState(0),
  );
}

/** Lines at the given seconds through the journal reader, each event a signal, as the watcher does. */
function feed(
  state: LoadState,
  lines: ReadonlyArray<readonly [number, string]>,
  reader = new JournalReader(),
): LoadState {
  for (const [seconds, line] of lines) {
    const at = seconds * 1000;
    for (const event of reader.read(line, at)) state = reduce(state, { kind: 'journal', at, event, text: line });
  }
  return state;
}

const DEEPGEMM_LABEL = 'compiling DeepGEMM kernels (first start; 10-20 min without a persistent cache)';

describe('named quiet steps: the engines\u2019 own lines', () => {
  it('recognises DeepGEMM, torch.compile, flashinfer JIT and autotuning wordings (old and new), and nothing else', () => {
    const cases: Array<[string, string | undefined]> = [
      [
        'Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.',
        'deepgemm start',
      ],
      [
        'Entering DeepGEMM JIT Pre-Complie session. And it may takes a long time(Typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. ',
        'deepgemm start',
      ],
      [
        'Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have run `python3 -m sglang.compile_deep_gemm`. ',
        'deepgemm start',
      ],
      ['DeepGEMM warmup:  45%|████▌     | 7373/16384 [00:10<00:12, 700.00it/s]', 'deepgemm progress 7373/16384'],
      [
        'DeepGemm(fp8_gemm_nt) warmup (W=torch.Size([7168, 2048])):  10%|█         | 1638/16384 [00:02<00:20, 730.12it/s]',
        'deepgemm progress 1638/16384',
      ],
      [
        "Using cache directory: /root/.cache/vllm/torch_compile_cache/564663590f/rank_0_0/backbone for vLLM's torch.compile",
        'torch-compile start',
      ],
      ['Dynamo bytecode transform time: 1.81 s', 'torch-compile start'],
      ['Compiling a graph for compile range (1, 2048) takes 90.39 s', 'torch-compile start'],
      ['torch.compile takes 92.20 s in total', 'torch-compile end'],
      [
        '2025-05-02 16:14:57,224 - INFO - flashinfer.jit: Finished loading JIT ops: batch_decode_with_kv_cache_dtype_q_bf16',
        'flashinfer-jit end',
      ],
      [
        'Capturing batches (avail_mem=0.00 GB):   0%|          | 0/4 [00:00<?, ?it/s]2025-05-02 16:14:34,907 - INFO - flashinfer.jit: Loading JIT ops: batch_decode_with_kv',
        'flashinfer-jit start',
      ],
      [
        '2026-03-18 06:57:26,008 - INFO - autotuner.py:256 - flashinfer.jit: [Autotuner]: Autotuning process starts ...',
        'autotune start',
      ],
      [
        '2026-03-18 06:57:33,420 - INFO - autotuner.py:262 - flashinfer.jit: [Autotuner]: Autotuning process ends',
        'autotune end',
      ],
      ['[2026-07-28 12:00:00 TP0] Capture piecewise CUDA graph begin. avail mem=13.32 GB', 'piecewise-graphs start'],
      [
        'Compiling num tokens (num_tokens=7680):   3%|▎         | 2/58 [00:09<03:50,  4.12s/it]',
        'piecewise-graphs progress 2/116',
      ],
      [
        'Capturing num tokens (num_tokens=416 avail_mem=11.51 GB):  55%|█████▌    | 32/58 [00:07<00:05,  4.56it/s]',
        'piecewise-graphs progress 90/116',
      ],
      [
        '[2026-07-28 12:00:37 TP0] Capture piecewise CUDA graph end. Time elapsed: 36.89 s. mem usage=1.96 GB. avail mem=11.36 GB.',
        'piecewise-graphs end',
      ],
      ['2025-02-21 21:52:50,289 - INFO - flashinfer.jit: Prebuilt kernels not found, using JIT backend', undefined],
      ['Capture cuda graph begin. This can take up to several minutes. avail mem=8.04 GB', undefined],
      [
        'Load weight end. elapsed=228.09 s, type=GlmMoeDsaForCausalLM, dtype=torch.bfloat16, avail mem=194.04 GB, mem usage=89.58 GB.',
        undefined,
      ],
    ];
    for (const [line, expected] of cases) {
      const events = activityEvents(line);
      const got =
        events
          .map((e) =>
            e.type === 'activity'
              ? `${e.activity} ${e.edge}${e.done !== undefined ? ` ${e.done}/${e.total}` : ''}`
              : e.type,
          )
          .join(',') || undefined;
      assert.equal(got, expected, line);
    }
  });

  it('sg-amdissues-glm5-graph: 100 % shards then minutes of silence is "processing weights after the last shard", not done; the ETA grows with it', () => {
    let state = feed(started(), [
      [1, '[2026-02-26 05:20:21 TP0] Load weight begin. avail mem=283.50 GB'],
      [5, 'Loading safetensors checkpoint shards:  50% Completed | 71/142 [00:05<00:04, 14.21it/s]'],
      [9, 'Loading safetensors checkpoint shards: 100% Completed | 142/142 [00:09<00:00, 15.36it/s]'],
    ]);
    state = reduce(state, { kind: 'prior', at: 9500, prior: { afterWeightsMs: 30_000, totalBytes: 1e9, loads: 3 } });
    assert.equal(state.activity, undefined, 'a hand-over of seconds is no step of its own');
    state = reduce(state, { kind: 'tick', at: 20_000, stallMs: 600_000 });
    assert.equal(state.phase, 'loading weights');
    assert.equal(state.activity?.kind, 'post-shards');
    assert.equal(state.activity?.since, 9000);
    assert.match(
      describeState(state),
      /^loading 90% \(loading weights, 142\/142 shards, processing weights after the last shard\)$/,
    );
    assert.ok(state.eta, 'an ETA in this step too (history: 30 s after the weights)');
    // Minutes later, the step still silent: not "0s left", an estimate that grew, and the tooltip says why.
    const quiet = reduce(state, { kind: 'cpu', at: 120_000, cpuSeconds: 100 });
    assert.ok(quiet.eta && quiet.eta.readyAt - 120_000 >= 60_000, JSON.stringify(quiet.eta));
    assert.match(
      quiet.eta.reason ?? '',
      /processing weights after the last shard: no bar, and not in the previous loads to time it/,
    );
    state = feed(state, [
      [
        237,
        '[2026-02-26 05:24:09 TP4] Load weight end. elapsed=228.09 s, type=GlmMoeDsaForCausalLM, dtype=torch.bfloat16, avail mem=194.04 GB, mem usage=89.58 GB.',
      ],
    ]);
    assert.equal(activityLabel(state.activity!), 'processing weights after the last shard (some ranks are done)');
    assert.equal(state.activity?.since, 9000, 'the same step, since the bar reached 100 %');
    assert.equal(state.lastProgressAt, 237_000, 'a rank ending its weights is progress');
    state = feed(state, [[900, '[2026-02-26 05:35:09 TP0] KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB']]);
    assert.equal(state.activity, undefined);
  });

  it('a DeepGEMM JIT compile during graph capture is named so (it was "capturing CUDA graphs" with "30s left")', () => {
    let state = feed(started(), [
      [10, 'Load weight end. elapsed=9.00 s, type=DeepseekV3ForCausalLM, avail mem=14.93 GB, mem usage=68.76 GB.'],
      [11, 'KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB'],
    ]);
    state = reduce(state, { kind: 'prior', at: 11_500, prior: { afterWeightsMs: 60_000, loads: 4 } });
    state = feed(state, [
      [
        12,
        '[2026-03-01 10:00:12 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=8.04 GB',
      ],
      [12, '[2026-03-01 10:00:12 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24]'],
    ]);
    assert.ok(state.eta !== undefined, 'before the compile: the history ETA');
    state = feed(state, [
      [
        13,
        '[2026-03-01 10:00:13 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. It is recommended to run `sglang.compile_deep_gemm` with same args as `sglang.launch_server` for pre-compilation to reduce the overhead if you have not run it before. For example: `python3 -m sglang.compile_deep_gemm --model deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code`',
      ],
      [
        13,
        '[2026-03-01 10:00:13 TP0] Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have run `python3 -m sglang.compile_deep_gemm`. ',
      ],
      [40, 'DeepGEMM warmup:  45%|████▌     | 7373/16384 [00:27<00:33, 270.00it/s]'],
    ]);
    assert.equal(state.phase, 'capturing CUDA graphs');
    assert.equal(state.activity?.kind, 'deepgemm');
    assert.equal(state.activity?.since, 13_000);
    assert.equal(
      describeState(state),
      `loading 92% (capturing CUDA graphs, 0/7 batches, ${DEEPGEMM_LABEL} 7373/16384)`,
    );
    // At the rate of its own bar: 7373 of 16384 in 27 s, about 33 s to go (not history's "30s left" of the whole).
    const left = visibleEta(state.eta, 40_000)!;
    assert.ok(left > 30_000 && left < 60_000, `${left}`);
    assert.match(state.eta?.reason ?? '', /DeepGEMM.*at the rate of its bar/);
    const snapshot = {
      server: { name: 'gpu1', unit: 'sglang.service', host: 'gpu1' } as ServerProfile,
      state,
      watching: true,
      loading: true,
    } as unknown as ServerSnapshot;
    const report = serverReport(snapshot, 40_000);
    assert.equal(report.activity, `${DEEPGEMM_LABEL} 7373/16384`);
    assert.ok(report.etaSeconds !== null && report.etaSeconds > 30);
    state = feed(state, [
      [200, 'Capturing batches (bs=24 avail_mem=4.00 GB):  14%|█▍        | 1/7 [00:01<00:06,  1.00it/s]'],
    ]);
    assert.equal(state.activity, undefined, 'the capture moves on: the compile is over');
  });

  it('servekit-apertus8b-tp4-gh200-piecewise-ready: the piecewise CUDA graphs after the decode graphs are one step, counted over both bars, torch.compile inside it', () => {
    let state = feed(started(), [
      [
        0,
        '[2026-07-28 11:59:30 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=13.85 GB',
      ],
      [
        30,
        '[2026-07-28 12:00:00 TP0] Capture cuda graph end. Time elapsed: 30.14 s. mem usage=0.53 GB. avail mem=13.32 GB.',
      ],
      [30, '[2026-07-28 12:00:00 TP0] Capture piecewise CUDA graph begin. avail mem=13.32 GB'],
    ]);
    assert.equal(state.phase, 'capturing CUDA graphs');
    assert.equal(state.activity?.kind, 'piecewise-graphs');
    assert.equal(state.activity?.since, 30_000);
    state = feed(state, [
      [
        30,
        'Compiling num tokens (num_tokens=8192):   0%|          | 0/58 [00:00<?, ?it/s][2026-07-28 12:00:08 TP1] Compiling a graph for dynamic shape takes 2.02 s',
      ],
      [39, 'Compiling num tokens (num_tokens=8192):   2%|▏         | 1/58 [00:09<09:17,  9.78s/it]'],
      [39, '[2026-07-28 12:00:09 TP0] Compiling a graph for dynamic shape takes 2.14 s'],
    ]);
    assert.equal(state.activity?.kind, 'piecewise-graphs', "SGLang's torch.compile lines inside it are the same step");
    assert.equal(state.activity?.since, 30_000);
    assert.deepEqual([state.activity?.done, state.activity?.total], [1, 116]);
    state = feed(state, [
      [52, 'Compiling num tokens (num_tokens=4): 100%|██████████| 58/58 [00:22<00:00,  2.54it/s]'],
      [53, 'Capturing num tokens (num_tokens=8192 avail_mem=11.93 GB):   2%|▏         | 1/58 [00:00<00:18,  3.13it/s]'],
    ]);
    assert.deepEqual(
      [state.activity?.done, state.activity?.total],
      [59, 116],
      'the capture bar goes on from the compile',
    );
    assert.match(describeState(state), /piecewise CUDA graphs/);
    assert.ok(visibleEta(state.eta, 53_000) !== undefined, 'an ETA during the step');
    state = feed(state, [
      [
        67,
        '[2026-07-28 12:00:37 TP0] Capture piecewise CUDA graph end. Time elapsed: 36.89 s. mem usage=1.96 GB. avail mem=11.36 GB.',
      ],
    ]);
    assert.equal(state.activity, undefined);
  });

  it('vllm-dgxspark-nemotron4b-ready: 92 s of torch.compile with one warning line', () => {
    let state = feed(started(), [
      [17, 'Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:08<00:08,  8.96s/it]'],
      [41, 'Loading safetensors checkpoint shards: 100% Completed | 2/2 [00:32<00:00, 17.38s/it]'],
    ]);
    state = reduce(state, { kind: 'tick', at: 48_000, stallMs: 600_000 });
    assert.equal(state.activity, undefined, 'the 8 s until "Loading weights took" are a hand-over, no step');
    state = feed(state, [
      [49, '(EngineCore_DP0 pid=165) INFO 03-18 06:55:49 [default_loader.py:308] Loading weights took 32.77 seconds'],
    ]);
    assert.equal(state.activity, undefined, "vLLM's one line says every worker is done");
    state = feed(state, [
      [
        51,
        "(EngineCore_DP0 pid=165) INFO 03-18 06:55:51 [backends.py:643] Using cache directory: /root/.cache/vllm/torch_compile_cache/564663590f/rank_0_0/backbone for vLLM's torch.compile",
      ],
      [51, '(EngineCore_DP0 pid=165) INFO 03-18 06:55:51 [backends.py:703] Dynamo bytecode transform time: 1.81 s'],
      [
        53,
        '(EngineCore_DP0 pid=165) INFO 03-18 06:55:53 [backends.py:261] Cache the graph of compile range (1, 2048) for later use',
      ],
      [
        133,
        '(EngineCore_DP0 pid=165) [rank0]:W0318 06:57:13.573000 165 torch/_inductor/utils.py:1703] Not enough SMs to use max_autotune_gemm mode',
      ],
    ]);
    assert.equal(state.activity?.kind, 'torch-compile');
    assert.equal(state.activity?.since, 51_000);
    assert.match(describeState(state), /torch\.compile/);
    state = feed(state, [
      [
        143,
        '(EngineCore_DP0 pid=165) INFO 03-18 06:57:23 [backends.py:278] Compiling a graph for compile range (1, 2048) takes 90.39 s',
      ],
      [143, '(EngineCore_DP0 pid=165) INFO 03-18 06:57:23 [monitor.py:34] torch.compile takes 92.20 s in total'],
    ]);
    assert.equal(state.activity, undefined);
    state = feed(state, [
      [
        146,
        '(EngineCore_DP0 pid=165) 2026-03-18 06:57:26,008 - INFO - autotuner.py:256 - flashinfer.jit: [Autotuner]: Autotuning process starts ...',
      ],
    ]);
    assert.equal(state.activity?.kind, 'autotune');
    state = feed(state, [
      [
        153,
        '(EngineCore_DP0 pid=165) 2026-03-18 06:57:33,420 - INFO - autotuner.py:262 - flashinfer.jit: [Autotuner]: Autotuning process ends',
      ],
    ]);
    assert.equal(state.activity, undefined);
  });

  it('sg-zhdoc-qwen3-06b-ready: flashinfer JIT inside graph capture (glued to the bar) and inside warm-up', () => {
    let state = feed(started(), [
      [33, '[2025-05-02 16:14:33] Capture cuda graph begin. This can take up to several minutes. avail mem=0.00 GB'],
      [33, '[2025-05-02 16:14:33] Capture cuda graph bs [1, 2, 4, 8]'],
      [
        34,
        'Capturing batches (avail_mem=0.00 GB):   0%|                                                      | 0/4 [00:00<?, ?it/s]2025-05-02 16:14:34,907 - INFO - flashinfer.jit: Loading JIT ops: batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf',
      ],
    ]);
    assert.equal(state.activity?.kind, 'flashinfer-jit');
    assert.match(
      describeState(state),
      /^loading 92% \(capturing CUDA graphs, 0\/4 batches, compiling flashinfer kernels \(JIT: a first start only\)\)$/,
    );
    state = feed(state, [
      [
        57,
        '2025-05-02 16:14:57,224 - INFO - flashinfer.jit: Finished loading JIT ops: batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False',
      ],
    ]);
    assert.equal(state.activity, undefined);
    state = feed(state, [
      [59, '[2025-05-02 16:14:59] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)'],
      [
        63,
        '2025-05-02 16:15:03,610 - INFO - flashinfer.jit: Loading JIT ops: batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False',
      ],
    ]);
    assert.equal(state.verdict, 'warming up');
    assert.equal(state.activity?.kind, 'flashinfer-jit');
    assert.match(describeState(state), /^warming up \(compiling flashinfer kernels/);
  });
});

describe('named quiet steps in whole published logs (test/fixtures/real-logs)', () => {
  const fixture = (id: string): string =>
    fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'real-logs', `${id}.log`), 'utf8');

  /** Every line at its own time (SGLang's prefix), else 10 ms after the last; the states after each line. */
  function replay(id: string): LoadState[] {
    let state = started();
    const reader = new JournalReader();
    const states: LoadState[] = [];
    let at = 1000;
    for (const line of fixture(id).split('\n')) {
      const stamp = /^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)/.exec(line)?.[1];
      at = stamp ? Math.max(at, Date.parse(`${stamp.replace(' ', 'T')}Z`)) : at + 10;
      for (const event of reader.read(line, at)) state = reduce(state, { kind: 'journal', at, event, text: line });
      states.push(state);
    }
    return states;
  }

  it('slurmv4-dsr1-2node-decode-deepgemm-ready: the DeepGEMM compile inside graph capture is named, counted, with an ETA throughout; nothing named once it serves', () => {
    const states = replay('slurmv4-dsr1-2node-decode-deepgemm-ready');
    const compiling = states.filter((s) => s.activity?.kind === 'deepgemm');
    assert.ok(compiling.length > 0);
    assert.ok(
      compiling.every((s) => s.phase === 'capturing CUDA graphs'),
      [...new Set(compiling.map((s) => s.phase))].join(),
    );
    assert.ok(
      compiling.some((s) => s.activity?.done === 16384 && s.activity.total === 16384),
      'its own bar is read',
    );
    assert.ok(compiling.every((s) => s.eta !== undefined));
    assert.ok(
      states.some((s) => s.activity?.kind === 'post-shards'),
      'the weights after the last shard too',
    );
    assert.equal(states[states.length - 1]!.activity, undefined, 'nothing named once it serves');
  });

  for (const [id, seconds] of [
    ['servekit-apertus8b-tp4-gh200-piecewise-ready', 37],
    ['servekit-llama70b-tp4-gh200-piecewise-ready', 46],
  ] as const) {
    it(`${id}: the ${seconds} s of piecewise CUDA graphs are one named step after the decode graphs, counted up, with an ETA throughout`, () => {
      const states = replay(id);
      const step = states.filter((s) => s.activity?.kind === 'piecewise-graphs');
      assert.ok(step.length > 100, `${step.length} states in the step`);
      assert.ok(
        step.every(
          (s) => s.phase === 'capturing CUDA graphs' && s.cudaGraphBatches?.done === s.cudaGraphBatches?.total,
        ),
        'after the decode capture, inside its phase',
      );
      const counts = step.filter((s) => s.activity!.done !== undefined).map((s) => s.activity!.done!);
      assert.deepEqual(
        [...counts].sort((a, b) => a - b),
        counts,
        'the count only grows, over the compile bar then the capture bar',
      );
      assert.equal(Math.max(...counts), 116, 'both bars of 58 token sizes');
      const span = (step[step.length - 1]!.activity!.since - step[0]!.activity!.since) / 1000;
      assert.equal(span, 0, 'one step: it never restarts');
      assert.ok(
        step.every((s) => s.eta !== undefined),
        'an ETA in every state of the step',
      );
      const last = states[states.length - 1]!;
      assert.ok(last.readyAt !== undefined || last.phase === 'warming up', last.phase);
      assert.equal(last.activity, undefined, 'nothing named once it serves');
    });
  }

  it('sg-15891-deepgemm-warmup-bars: the warmup bars are the compile, not a phase of their own', () => {
    const states = replay('sg-15891-deepgemm-warmup-bars');
    const counts = states
      .filter((s) => s.activity?.kind === 'deepgemm' && s.activity.done !== undefined)
      .map((s) => s.activity!.done!);
    assert.ok(counts.length >= 2, `${counts}`);
    assert.deepEqual(
      [...counts].sort((a, b) => a - b),
      counts,
      'the count only grows within a kernel',
    );
  });
});
