'use strict';
// Fault texts: realistic Python tracebacks as SGLang's scheduler / launcher would print them;
// and the chat faults (chatFaults below): what servers and gateways got wrong in
// Kimi K2.x answers, each a switch of sim.json's "chatFaults", off by default.
const crypto = require('crypto');
const { K2 } = require('./parsers');
const { loadConfig } = require('./config');

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
    return [
      `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${alloc.toFixed(2)} GiB. GPU ${gpu} has a total capacity of 79.19 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.16 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`,
    ];
  }
  if (kind === 'cuda') {
    const l = [
      'RuntimeError: CUDA error: an illegal memory access was encountered',
      'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
      'For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
      'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
      '',
    ];
    if (phase === 'cudaGraph') {
      return [
        'Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered',
        ...cudaGraphHints(),
      ];
    }
    return l;
  }
  // generic traceback per phase
  switch (phase) {
    case 'init':
      return [
        'RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5',
      ];
    case 'weights':
      return [`safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer`];
    case 'kv':
      return ['RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.'];
    case 'cudaGraph':
      return [
        'Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.50 GiB.',
        ...cudaGraphHints(),
      ];
    default:
      return ['RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered'];
  }
}

function cudaGraphHints() {
  return [
    'Possible solutions:',
    '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
    '2. set --cuda-graph-max-bs to a smaller value (e.g., 16)',
    '3. disable torch compile by not using --enable-torch-compile',
    '4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)',
    'Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ',
    '',
  ];
}

function phaseFrames(phase) {
  switch (phase) {
    case 'init':
      return [
        `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 571, in init_torch_distributed`,
        '    initialize_model_parallel(',
        `  File "${SITE}/torch/distributed/distributed_c10d.py", line 4159, in barrier`,
        '    work = group.barrier(opts=opts)',
      ];
    case 'weights':
      return [
        `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 733, in load_model`,
        '    self.model = get_model(',
        `  File "${SITE}/sglang/srt/model_loader/loader.py", line 433, in load_model`,
        '    self.load_weights_and_postprocess(',
        `  File "${SITE}/sglang/srt/model_loader/weight_utils.py", line 530, in multi_thread_safetensors_weights_iterator`,
        '    state_dict = future.result()',
        `  File "${SITE}/sglang/srt/model_loader/weight_utils.py", line 512, in _load_file`,
        '    with safe_open(st_file, framework="pt") as f:',
      ];
    case 'kv':
      return [
        `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 1450, in init_memory_pool`,
        '    self.token_to_kv_pool = MLATokenToKVPool(',
        `  File "${SITE}/sglang/srt/mem_cache/memory_pool.py", line 830, in _create_buffers`,
        '    torch.zeros(',
      ];
    case 'cudaGraph':
      return [
        `  File "${SITE}/sglang/srt/model_executor/model_runner.py", line 1702, in init_device_graphs`,
        '    self.cuda_graph_runner = CudaGraphRunner(self)',
        `  File "${SITE}/sglang/srt/model_executor/cuda_graph_runner.py", line 375, in __init__`,
        '    raise Exception(',
      ];
    default:
      return [
        `  File "${SITE}/sglang/srt/managers/scheduler.py", line 1120, in event_loop_overlap`,
        '    batch_result = self.run_batch(batch)',
        `  File "${SITE}/sglang/srt/models/deepseek_v2.py", line 2110, in forward`,
        '    hidden_states = self.model(',
      ];
  }
}

/** full "Scheduler hit an exception" message (multi-line) */
function schedulerTraceback(phase, kind, o = {}) {
  return [
    'Scheduler hit an exception: Traceback (most recent call last):',
    ...schedulerFrames(),
    ...phaseFrames(phase),
    ...exceptionLines(phase, kind, o),
  ].join('\n');
}

/** the warm-up failure message of http_server._wait_and_warmup */
function warmupTraceback(detail) {
  return [
    'Initialization failed. warmup error: Traceback (most recent call last):',
    `  File "${SITE}/sglang/srt/entrypoints/http_server.py", line 1298, in _execute_server_warmup`,
    '    assert res.status_code == 200, f"{res}"',
    '           ^^^^^^^^^^^^^^^^^^^^^^',
    `AssertionError: ${detail}`,
    '',
  ].join('\n');
}

/**
 * sim.json "chatFaults", read again at each chat request (so a test can switch them on a running
 * server); each switch is off unless set:
 *   thinkingIgnored          chat_template_kwargs {thinking:false} ignored: the answer lands in reasoning_content, content empty (ik_llama.cpp#1685)
 *   thinkPrefilled           the template prefills <think>: the parser never sees it, reasoning and </think> stay in content (smg#1873)
 *   streamToolCallsAsContent streamed tool calls arrive as content deltas with finish_reason "stop" (sglang#23363)
 *   reasoningLeakAfterTool   on the turn after a role "tool" message, reasoning and </think> stay in content (dynamo#11653)
 *   callIds                  ids call_<hex> (vLLM: chatcmpl-tool-<hex>) instead of functions.NAME:IDX (sglang#25358); the
 *                            model (model.js) then answers the next turn with nothing, as Kimi K2.6 does (Kimi-K2#128)
 *   mergeParallelCalls       two calls come back as one, the first swallowed into its id (vllm#24478)
 *   needsReasoningBack       the model behaves as a Kimi K2 thinking model that needs its reasoning back: when an
 *                            assistant tool-call message of the tool chain in progress (after the last assistant
 *                            message without calls) comes without reasoning_content/reasoning, the answer after
 *                            the tool result ignores the result (the stand-in for "answers worse", llxprt-code#679)
 *   longReasoningTokens      N: the model reasons N tokens before answering, so a smaller max_tokens ends with
 *                            finish_reason "length" and nothing in content (gonka#1202); a budget above N fits
 *   slowReasoningMs          N: the reasoning uses the whole token budget, slowly: one reasoning token every N ms
 *                            (streamed as they come; a plain answer waits for all of them), so that a check waits
 *                            longer than usual for an answer that never leaves the reasoning
 */
function chatFaults(sim) {
  let source = sim.cfg;
  if (sim.root) {
    const now = loadConfig(sim.root);
    if (!now.configError) source = now;
  }
  const f = source.chatFaults;
  return f && typeof f === 'object' && !Array.isArray(f) ? f : {};
}

/** slowReasoningMs: the reasoning grown past the request's budget (unless longReasoningTokens says how long). */
function slowReasoning(f, maxTokens) {
  if (!(f.slowReasoningMs > 0) || f.longReasoningTokens > 0) return {};
  return { longReasoningTokens: (Number.isInteger(maxTokens) ? maxTokens : 2048) + 1 };
}

/** How long each reasoning token takes: slowReasoningMs, else 0 (the usual tokenDelayMs). */
function reasoningTokenMs(f) {
  return f.slowReasoningMs > 0 ? f.slowReasoningMs : 0;
}

/** The thinking switch the reasoning parser acts on. */
function parserThinking(f, thinking) {
  return f.thinkingIgnored ? true : thinking;
}

/** false when a fault keeps reasoning in content for this request. */
function separatesReasoning(f, body) {
  if (f.thinkPrefilled) return false;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  return !(f.reasoningLeakAfterTool && last && last.role === 'tool');
}

function hex(n) {
  return crypto.randomBytes(n).toString('hex');
}

/** Markup of calls as the model writes it. */
function callsMarkup(calls) {
  const one = (c) => `${K2.callBegin}${c.id}${K2.argBegin}${c.function.arguments}${K2.callEnd}`;
  return `${K2.sectionBegin}${calls.map(one).join('')}${K2.sectionEnd}`;
}

/**
 * The parsed tool calls as a faulty server returns them. `engine` "vllm" names ids its way.
 * @param {object[]} calls [{id, index?, type, function:{name, arguments}}]
 */
function faultyCalls(f, calls, engine) {
  let out = calls;
  if (f.mergeParallelCalls && out.length >= 2) {
    // The id pattern ran past the first call's end: its name, arguments and the next call's id became one id.
    const [a, b, ...rest] = out;
    const merged = {
      ...b,
      index: 0,
      id: `${a.id}${K2.argBegin}${a.function.arguments}${K2.callEnd}${K2.callBegin}${b.id}`,
    };
    out = [merged, ...rest.map((c, i) => ({ ...c, index: i + 1 }))];
  }
  if (f.callIds)
    out = out.map((c) => ({ ...c, id: engine === 'vllm' ? `chatcmpl-tool-${hex(16)}` : `call_${hex(12)}` }));
  return out;
}

/** A streamed answer whose calls the server left as text: the markup in content, finish_reason "stop". */
function streamedResult(f, r) {
  if (!f.streamToolCallsAsContent || !r.toolCalls || !r.toolCalls.length) return r;
  return { ...r, content: `${r.content || ''}${callsMarkup(r.toolCalls)}`, toolCalls: [], finishReason: 'stop' };
}

module.exports = {
  schedulerTraceback,
  warmupTraceback,
  exceptionLines,
  chatFaults,
  slowReasoning,
  reasoningTokenMs,
  parserThinking,
  separatesReasoning,
  faultyCalls,
  streamedResult,
  callsMarkup,
};
