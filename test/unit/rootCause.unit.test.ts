import { strict as assert } from 'node:assert';
import { JournalReader, parseJournalMessage } from '../../src/engine/logReader';
import { splitGlued, splitLines, stripAnsi, stripPrefix } from '../../src/engine/logGrammar';
import { causeText, classifyText, formatCause, rootCause } from '../../src/engine/rootCause';

/** The error lines a failure keeps, as the watcher records them: each journal entry through one reader. */
function errorLines(log: readonly string[]): string[] {
  const reader = new JournalReader();
  const out: string[] = [];
  log.forEach((message, i) => {
    for (const { event, text } of reader.readLines(message, 1_000 + i)) if (event.type === 'error') out.push(text);
  });
  return out;
}

const SYSTEMD_EXIT = [
  'sglang.service: Main process exited, code=exited, status=1/FAILURE',
  "sglang.service: Failed with result 'exit-code'.",
];

/** The error lines of a failure that logs `lines` and then ends as a unit that exited 1. */
const beforeExit = (...lines: string[]): string[] => errorLines([...lines, ...SYSTEMD_EXIT]);
/** The kind of cause found in such a failure. */
const kindBeforeExit = (...lines: string[]) => rootCause(beforeExit(...lines))?.kind;

describe('line grammar: colours, glued lines, prefixes', () => {
  it('drops ANSI colour codes', () => {
    assert.equal(
      stripAnsi('[aiter] \x1b[32mfinish build [module_aiter_enum], cost 7.2s \x1b[0m'),
      '[aiter] finish build [module_aiter_enum], cost 7.2s ',
    );
    assert.deepEqual(splitLines('\x1b[31mtorch.OutOfMemoryError: HIP out of memory.\x1b[0m'), [
      'torch.OutOfMemoryError: HIP out of memory.',
    ]);
  });

  it('splits a log line glued to the end of a tqdm bar', () => {
    assert.deepEqual(
      splitGlued(
        '  0%|          | 0/13 [00:00<?, ?it/s][2025-03-08 12:29:21 TP1] Capture cuda graph begin. This can take up to several minutes.',
      ),
      [
        '  0%|          | 0/13 [00:00<?, ?it/s]',
        '[2025-03-08 12:29:21 TP1] Capture cuda graph begin. This can take up to several minutes.',
      ],
    );
    assert.deepEqual(
      splitGlued(
        'Capturing batches (avail_mem=0.00 GB):   0%|    | 0/4 [00:00<?, ?it/s]2025-05-02 16:14:34,907 - INFO - flashinfer.jit: Loading JIT ops: x',
      ),
      [
        'Capturing batches (avail_mem=0.00 GB):   0%|    | 0/4 [00:00<?, ?it/s]',
        '2025-05-02 16:14:34,907 - INFO - flashinfer.jit: Loading JIT ops: x',
      ],
    );
    assert.deepEqual(
      splitGlued('Loading safetensors checkpoint shards: 100% Completed | 64/64 [03:33<00:00,  3.33s/it]'),
      ['Loading safetensors checkpoint shards: 100% Completed | 64/64 [03:33<00:00,  3.33s/it]'],
    );
    // The glued line is read: the graph capture begins.
    assert.deepEqual(
      parseJournalMessage(
        '  0%|    | 0/13 [00:00<?, ?it/s][2025-03-08 12:29:21 TP1] Capture cuda graph begin. This can take up to several minutes.',
      ),
      [{ type: 'phase', phase: 'capturing CUDA graphs' }],
    );
  });

  it('any rank tag form, none at TP1', () => {
    for (const [line, ranks] of [
      ['[2025-02-07 01:19:40 TP0] Load weight end.', 'TP0'],
      ['[2026-05-13 02:15:17 DP7 TP7] Load weight end.', 'DP7 TP7'],
      ['[2025-02-07 01:19:40 TP16] Load weight end.', 'TP16'],
      ['[2025-02-07 01:19:40 DP1 TP3 EP3] Load weight end.', 'DP1 TP3 EP3'],
      ['[2025-02-07 01:19:40 PP1 TP2] Load weight end.', 'PP1 TP2'],
    ] as const) {
      assert.deepEqual(stripPrefix(line), { text: 'Load weight end.', prefixed: true, record: true, ranks }, line);
    }
    assert.deepEqual(stripPrefix('[2025-05-02 16:14:33] Load weight end.'), {
      text: 'Load weight end.',
      prefixed: true,
      record: true,
    });
  });

  it("vLLM's process tags (with and without a logger stamp), torch's rank and glog stamps, Python logging, [aiter]", () => {
    assert.equal(
      stripPrefix(
        '(APIServer pid=1) INFO 03-18 06:57:59 [api_server.py:1428] Starting vLLM API server 0 on http://0.0.0.0:8000',
      ).text,
      'Starting vLLM API server 0 on http://0.0.0.0:8000',
    );
    assert.equal(
      stripPrefix(
        '(EngineCore_DP0 pid=165) INFO 03-18 06:55:49 [default_loader.py:308] Loading weights took 32.77 seconds',
      ).text,
      'Loading weights took 32.77 seconds',
    );
    assert.deepEqual(
      stripPrefix(
        '(VllmWorker rank=5 pid=50999) ERROR 07-07 15:19:48 [multiproc_executor.py:492] torch.OutOfMemoryError: CUDA out of memory.',
      ),
      {
        text: 'torch.OutOfMemoryError: CUDA out of memory.',
        prefixed: true,
        record: true,
        ranks: 'TP5',
      },
    );
    assert.deepEqual(stripPrefix('(EngineCore pid=548) ValueError: No available memory for the cache blocks.'), {
      text: 'ValueError: No available memory for the cache blocks.',
      prefixed: true,
      record: false,
    });
    assert.equal(
      stripPrefix('(RayWorkerWrapper pid=7781, ip=10.0.0.2) INFO 05-01 10:00:00 [worker.py:1] hello').text,
      'hello',
    );
    assert.equal(stripPrefix('(Worker pid=98743) INFO 05-01 10:00:00 [worker.py:1] hello').text, 'hello');
    assert.equal(
      stripPrefix('INFO 03-07 12:29:02 __init__.py:190] Automatically detected platform cuda.').text,
      'Automatically detected platform cuda.',
    );
    assert.deepEqual(
      stripPrefix(
        '[rank6]:[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] [Rank 6] Watchdog caught collective operation timeout',
      ),
      {
        text: '[Rank 6] Watchdog caught collective operation timeout',
        prefixed: true,
        record: true,
        ranks: 'rank6',
      },
    );
    assert.equal(
      stripPrefix(
        '(EngineCore_DP0 pid=165) [rank0]:W0318 06:57:13.573000 165 torch/_inductor/utils.py:1703] Not enough SMs',
      ).text,
      'Not enough SMs',
    );
    assert.equal(
      stripPrefix(
        '2026-03-18 06:57:26,008 - INFO - autotuner.py:256 - flashinfer.jit: [Autotuner]: Autotuning process starts ...',
      ).text,
      '[Autotuner]: Autotuning process starts ...',
    );
    assert.equal(
      stripPrefix('[aiter] import [module_quant] under /sgl-workspace/aiter/aiter/jit/module_quant.so').text,
      'import [module_quant] under /sgl-workspace/aiter/aiter/jit/module_quant.so',
    );
  });

  it('newer SGLang wordings', () => {
    assert.deepEqual(
      parseJournalMessage(
        '[2026-02-26 16:41:05 TP0] Load weight end. elapsed=605.50 s, type=KimiK25ForConditionalGeneration, dtype=torch.bfloat16, avail mem=45.63 GB, mem usage=236.76 GB.',
      ),
      [
        {
          type: 'weightsLoaded',
          elapsedSeconds: 605.5,
          memUsageGB: 236.76,
          availMemGB: 45.63,
          modelType: 'KimiK25ForConditionalGeneration',
          dtype: 'torch.bfloat16',
        },
      ],
    );
    assert.deepEqual(
      parseJournalMessage(
        '[2026-02-26 16:41:05 TP0] Capture target decode CUDA graph end. elapsed=12.20 s, mem usage=1.20 GB.',
      ),
      [{ type: 'phase', phase: 'capturing CUDA graphs' }, { type: 'graphsCaptured' }],
    );
    assert.deepEqual(
      parseJournalMessage('[2026-02-26 16:30:43 TP0] Init torch distributed ends. elapsed=1.02 s, mem usage=0.74 GB'),
      [],
    );
  });

  it('ROCm: HIP out of memory and hipError are fatal errors', () => {
    assert.deepEqual(parseJournalMessage('torch.OutOfMemoryError: HIP out of memory. Tried to allocate 12.00 GiB.'), [
      { type: 'error', text: 'torch.OutOfMemoryError: HIP out of memory. Tried to allocate 12.00 GiB.', fatal: true },
    ]);
    assert.deepEqual(
      parseJournalMessage(
        'RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!',
      ),
      [
        {
          type: 'error',
          text: 'RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!',
          fatal: true,
        },
      ],
    );
  });
});

describe('root cause: what a failure shows, before the echoes of its end', () => {
  it('an argparse error, one line, without usage: every program name', () => {
    for (const line of [
      'launch_server.py: error: unrecognized arguments: --reasoning_parser kimi_k2',
      "vllm serve: error: argument --tool-call-parser: invalid choice: 'glm45' (choose from 'kimi_k2')",
      'vllm: error: unrecognized arguments: --foo',
      "api_server.py: error: argument --port: invalid int value: 'x'",
    ]) {
      const lines = beforeExit(line);
      assert.equal(lines[0], line, 'the line is an error line');
      const cause = rootCause(lines);
      assert.equal(cause?.cause, line);
      assert.equal(cause?.kind, 'argparse');
    }
  });

  it('an NCCL watchdog timeout alone, without the [E...] prefix and without the word Error', () => {
    const line =
      '[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.';
    const cause = rootCause(beforeExit(line));
    assert.equal(cause?.kind, 'distributed');
    assert.equal(cause?.cause, line);
    assert.equal(
      kindBeforeExit(
        "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
      ),
      'distributed',
    );
  });

  it('an exception whose message is empty: the "Possible solutions" block that follows', () => {
    const lines = beforeExit(
      '[2025-04-10 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 269, in __init__',
      '    raise Exception(',
      'Exception: Capture cuda graph failed: ',
      'Possible solutions:',
      '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
      '2. set --cuda-graph-max-bs to a smaller value (e.g., 16)',
      'Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ',
      '',
      '[2025-04-10 10:00:00] Received sigquit from a child process. It usually means the child failed.',
    );
    const cause = rootCause(lines)!;
    assert.equal(cause.cause, 'Exception: Capture cuda graph failed:');
    assert.deepEqual(cause.detail.slice(0, 2), [
      'Possible solutions:',
      '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
    ]);
    assert.deepEqual(cause.after, ['Received sigquit from a child process. It usually means the child failed.']);
    assert.match(
      formatCause(cause),
      /^Exception: Capture cuda graph failed: Possible solutions: 1\. set --mem-fraction-static/,
    );
  });

  it('a bare AssertionError: the line that raised it; the generic RuntimeError about the OOM killer comes after', () => {
    const lines = beforeExit(
      '[2026-05-13 02:15:18 DP3 TP3] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl-workspace/sglang/python/sglang/srt/mem_cache/deepseekv4_memory_pool.py", line 144, in create_buffer',
      '    assert self.store_dtype == torch.uint8',
      '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      'AssertionError',
      '',
      'Traceback (most recent call last):',
      '    raise EOFError',
      'EOFError',
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '    raise _scheduler_died_error(i, scheduler_procs[i])',
      'RuntimeError: Rank 0 scheduler died during initialization (exit code: -3). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer.',
    );
    assert.equal(causeText(lines), 'AssertionError (assert self.store_dtype == torch.uint8)');
    assert.match(rootCause(lines)!.after.join(' | '), /Rank 0 scheduler died/);
  });

  it('of chained exceptions, the one raised last (unless it only says that something died)', () => {
    const lines = errorLines([
      'Traceback (most recent call last):',
      "KeyError: 'glm_moe_dsa'",
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      'ValueError: The checkpoint you are trying to load has model type `glm_moe_dsa` but Transformers does not recognize this architecture.',
    ]);
    assert.match(causeText(lines) ?? '', /^ValueError: .*does not recognize this architecture/);
  });

  it("a vLLM worker's OOM comes before EngineCore failed to start and its traceback", () => {
    const lines = beforeExit(
      '(VllmWorker rank=5 pid=50999) ERROR 07-07 15:19:48 [multiproc_executor.py:492] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.',
      'ERROR 07-07 15:19:51 [core.py:515] EngineCore failed to start.',
      'ERROR 07-07 15:19:51 [core.py:515] Traceback (most recent call last):',
    );
    const cause = rootCause(lines)!;
    assert.equal(cause.cause, 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.');
    assert.deepEqual(cause.after, ['EngineCore failed to start.']);
  });

  it('the first failing rank wins over the echoes of the others: sigquit between per-rank tracebacks', () => {
    const rank = (n: number) => [
      `[2026-02-26 05:35:13 TP${n}] Scheduler hit an exception: Traceback (most recent call last):`,
      '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 1, in capture_one_batch_size',
      'TypeError: cannot unpack non-iterable ForwardMetadata object',
      '',
      '[2026-02-26 05:35:13] Received sigquit from a child process. It usually means the child failed.',
    ];
    const cause = rootCause(beforeExit(...rank(7), ...rank(6), ...rank(1)))!;
    assert.equal(cause.cause, 'TypeError: cannot unpack non-iterable ForwardMetadata object');
    assert.equal(cause.kind, 'exception');
  });

  it('a port in use, uvicorn or Python wording', () => {
    assert.equal(
      kindBeforeExit(
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
      ),
      'address-in-use',
    );
    assert.equal(
      kindBeforeExit('Traceback (most recent call last):', 'OSError: [Errno 98] Address already in use'),
      'address-in-use',
    );
    assert.equal(
      kindBeforeExit(
        'Traceback (most recent call last):',
        "ValueError: metrics_port at 40290 is not available in 30 seconds. metrics_port is used by a process already. process.name()='sglang'",
      ),
      'address-in-use',
    );
  });

  it('a warm-up failure after HTTP was up: the header, then its exception', () => {
    const lines = errorLines([
      '[2024-12-13 01:47:34] Initialization failed. warmup error: Traceback (most recent call last):',
      '    assert res.status_code == 200, f"{res=}, {res.text=}"',
      "AssertionError: res=<Response [502]>, res.text=''",
      '',
      'Killed',
    ]);
    assert.equal(
      causeText(lines),
      "Initialization failed. warmup error (AssertionError: res=<Response [502]>, res.text='')",
    );
  });

  it('only echoes of an end: no cause (the summary says how it ended)', () => {
    assert.equal(rootCause(SYSTEMD_EXIT), undefined);
    assert.equal(rootCause(['Traceback (most recent call last):', ...SYSTEMD_EXIT]), undefined);
    assert.equal(rootCause([]), undefined);
    // The engine's own words that it ended are the best there is when nothing else is told.
    assert.equal(
      rootCause(['ERROR 05-07 02:14:18 [core.py:396] EngineCore failed to start.', ...SYSTEMD_EXIT])?.cause,
      'EngineCore failed to start.',
    );
  });

  it('classifies the echoes and the causes', () => {
    assert.equal(classifyText('Received sigquit from a child process. It usually means the child failed.'), 'echo');
    assert.equal(classifyText('Scheduler hit an exception: Traceback (most recent call last):'), 'engine-end');
    assert.equal(
      classifyText(
        'RuntimeError: Rank 0 scheduler died during initialization (exit code: -3). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer.',
      ),
      'engine-end',
    );
    assert.equal(classifyText('sglang.service: Main process exited, code=exited, status=1/FAILURE'), 'echo');
    assert.equal(classifyText('Fatal Python error: Segmentation fault'), 'cause');
    assert.equal(
      classifyText('SafetensorError: Error while deserializing header: MetadataIncompleteBuffer'),
      'exception',
    );
    assert.equal(
      classifyText('Failed to import amdsmi with ModuleNotFoundError("No module named \'amdsmi\'")'),
      undefined,
    );
  });
});
