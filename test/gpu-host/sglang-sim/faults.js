'use strict';
// Fault texts: realistic Python tracebacks as SGLang's scheduler / launcher would print them.

const SITE = '/opt/sglang/lib/python3.12/site-packages';

function schedulerFrames() {
  return [
    `  File "${SITE}/sglang/srt/managers/scheduler.py", line 2702, in run_scheduler_process`,
    '    scheduler = Scheduler(',
    '                ^^^^^^^^^^',
    `  File "${SITE}/sglang/srt/managers/scheduler.py", line 320, in __init__`,
    '    self.tp_worker = TpWorkerClass(',
    '                     ^^^^^^^^^^^^^^',
    `  File "${SITE}/sglang/srt/managers/tp_worker.py", line 94, in __init__`,
    '    self.model_runner = ModelRunner(',
    '                        ^^^^^^^^^^^^',
    `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 250, in __init__`,
    '    self.initialize(min_per_gpu_memory)',
  ];
}

/** lines of the error (exception) at a phase, by kind */
function exceptionLines(phase, kind, o = {}) {
  const gpu = o.rank || 0;
  if (kind === 'oom') {
    const alloc = o.allocGiB || (phase === 'kv' ? 17.16 : 2.0);
    return [`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${alloc.toFixed(2)} GiB. GPU ${gpu} has a total capacity of 79.19 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.16 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`];
  }
  if (kind === 'cuda') {
    const l = ['RuntimeError: CUDA error: an illegal memory access was encountered',
      'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
      'For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
      'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.', ''];
    if (phase === 'cudaGraph') {
      return ['Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered', ...cudaGraphHints()];
    }
    return l;
  }
  // generic traceback per phase
  switch (phase) {
    case 'init': return ['RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5'];
    case 'weights': return [`safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer`];
    case 'kv': return ['RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.'];
    case 'cudaGraph': return ['Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.50 GiB.', ...cudaGraphHints()];
    default: return ['RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered'];
  }
}

function cudaGraphHints() {
  return ['Possible solutions:',
    '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
    '2. set --cuda-graph-max-bs to a smaller value (e.g., 16)',
    '3. disable torch compile by not using --enable-torch-compile',
    '4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)',
    'Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ', ''];
}

function phaseFrames(phase) {
  switch (phase) {
    case 'init': return [`  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 571, in init_torch_distributed`,
      '    initialize_model_parallel(', `  File "${SITE}/torch/distributed/distributed_c10d.py", line 4159, in barrier`, '    work = group.barrier(opts=opts)'];
    case 'weights': return [`  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 733, in load_model`,
      '    self.model = get_model(', `  File "${SITE}/sglang/srt/model_loader/loader.py", line 433, in load_model`,
      '    self.load_weights_and_postprocess(', `  File "${SITE}/sglang/srt/model_loader/weight_utils.py", line 530, in multi_thread_safetensors_weights_iterator`,
      '    state_dict = future.result()', `  File "${SITE}/sglang/srt/model_loader/weight_utils.py", line 512, in _load_file`,
      '    with safe_open(st_file, framework="pt") as f:'];
    case 'kv': return [`  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 1450, in init_memory_pool`,
      '    self.token_to_kv_pool = MLATokenToKVPool(', `  File "${SITE}/sglang/srt/mem_cache/memory_pool.py", line 830, in _create_buffers`,
      '    torch.zeros(', ];
    case 'cudaGraph': return [`  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 1702, in init_device_graphs`,
      '    self.cuda_graph_runner = CudaGraphRunner(self)', `  File "${SITE}/sglang/srt/model_executor/cuda_graph_runner.py", line 375, in __init__`,
      '    raise Exception('];
    default: return [`  File "${SITE}/sglang/srt/managers/scheduler.py", line 1120, in event_loop_overlap`, '    batch_result = self.run_batch(batch)',
      `  File "${SITE}/sglang/srt/models/deepseek_v2.py", line 2110, in forward`, '    hidden_states = self.model('];
  }
}

/** full "Scheduler hit an exception" message (multi-line) */
function schedulerTraceback(phase, kind, o = {}) {
  return ['Scheduler hit an exception: Traceback (most recent call last):', ...schedulerFrames(), ...phaseFrames(phase),
    ...exceptionLines(phase, kind, o)].join('\n');
}

/** the warm-up failure message of http_server._wait_and_warmup */
function warmupTraceback(detail) {
  return ['Initialization failed. warmup error: Traceback (most recent call last):',
    `  File "${SITE}/sglang/srt/entrypoints/http_server.py", line 1298, in _execute_server_warmup`,
    '    assert res.status_code == 200, f"{res}"',
    '           ^^^^^^^^^^^^^^^^^^^^^^',
    `AssertionError: ${detail}`, ''].join('\n');
}

module.exports = { schedulerTraceback, warmupTraceback, exceptionLines };
