/**
 * The Engine interface: engineFor(argv) picks SGLang or vLLM from a command line, and each
 * engine's grammar reads its own words (and not the other's) between the rules they share.
 */
import { strict as assert } from 'node:assert';
import { engineById, engineFor, ENGINES } from '../../src/engine/engine';
import { launches } from '../conformance/engineSurface';
import { JournalReader, parseJournalLine } from '../../src/engine/logReader';
import type { JournalEvent } from '../../src/engine/events';

function read(engine: 'sglang' | 'vllm' | undefined, lines: readonly string[]): JournalEvent[] {
  const reader = new JournalReader(engine ? engineById(engine).grammar : undefined);
  return lines.flatMap((line, i) => reader.read(line, 1000 * i));
}

describe('engineFor(argv)', () => {
  const cases: Array<[string, readonly string[], 'sglang' | 'vllm' | undefined]> = [
    [
      'python -m sglang.launch_server',
      ['/usr/bin/python3', '-m', 'sglang.launch_server', '--model-path', '/m'],
      'sglang',
    ],
    [
      'sglang serve behind env',
      ['/usr/bin/env', 'CUDA_VISIBLE_DEVICES=0', 'sglang', 'serve', '--model-path', '/m'],
      'sglang',
    ],
    ['vllm serve MODEL', ['/opt/venv/bin/vllm', 'serve', '/models/Kimi', '--port', '8000'], 'vllm'],
    ['the OpenAI api_server module', ['python3', '-m', 'vllm.entrypoints.openai.api_server', '--model', '/m'], 'vllm'],
    ['the console script run by its interpreter', ['python3', '/usr/bin/vllm', 'serve', '/m'], 'vllm'],
    [
      'docker run wrapping sglang',
      ['/usr/bin/docker', 'run', '--name', 'sg', 'lmsysorg/sglang', 'python3', '-m', 'sglang.launch_server'],
      'sglang',
    ],
    ['something else', ['/usr/bin/python3', '-m', 'http.server'], undefined],
    ['nothing', [], undefined],
  ];
  for (const [what, argv, id] of cases) {
    it(`${what}: ${id ?? 'no engine'}`, () => assert.equal(engineFor(argv)?.id, id));
  }

  it('each engine detects its own command lines only, and names itself', () => {
    assert.deepEqual(
      ENGINES.map((e) => [e.id, e.label, e.defaultPort]),
      [
        ['sglang', 'SGLang', 30000],
        ['vllm', 'vLLM', 8000],
      ],
    );
    const vllm = ['vllm', 'serve', '/m'];
    assert.deepEqual(
      ENGINES.map((e) => launches(e, vllm)),
      [false, true],
    );
  });

  it('HTTP quirks and parser flags: SGLang has /server_info, vLLM needs --enable-auto-tool-choice', () => {
    assert.deepEqual(engineById('sglang').http.serverInfoPaths, ['/server_info', '/get_server_info']);
    assert.deepEqual(engineById('vllm').http.serverInfoPaths, []);
    assert.deepEqual(engineById('vllm').parsers.switches, ['--enable-auto-tool-choice']);
    assert.deepEqual(engineById('sglang').parsers.switches, []);
    assert.ok(engineById('sglang').parsers.toolCall.includes('kimi_k2'));
    assert.ok(engineById('vllm').parsers.reasoning.includes('kimi_k2'));
  });
});

describe('each engine its own log grammar', () => {
  const SGLANG = [
    '[2026-11-30 10:00:00 TP0] Load weight begin. avail mem=78.00 GB',
    '[2026-11-30 10:00:05 TP0] Loading safetensors checkpoint shards:  50% Completed | 32/64 [00:05<00:05, 6.2it/s]',
    '[2026-11-30 10:01:00] The server is fired up and ready to roll!',
  ];
  const VLLM = [
    '(EngineCore_DP0 pid=164) INFO 01-23 15:48:47 [gpu_model_runner.py:2602] Starting to load model /models/m...',
    '(EngineCore_DP0 pid=164) INFO 01-23 15:49:07 [default_loader.py:267] Loading weights took 19.87 seconds',
  ];

  it("SGLang's grammar reads SGLang's words and none of vLLM's", () => {
    assert.deepEqual(read('sglang', SGLANG), [
      { type: 'phase', phase: 'loading weights' },
      { type: 'shards', percent: 50, done: 32, total: 64 },
      { type: 'ready' },
    ]);
    assert.deepEqual(read('sglang', VLLM), []);
    const sglangOnly = SGLANG.filter((l) => !l.includes('shards'));
    assert.deepEqual(read('vllm', sglangOnly), []);
  });

  it("vLLM's grammar reads vLLM's words and none of SGLang's", () => {
    assert.deepEqual(read('vllm', VLLM), [
      { type: 'phase', phase: 'loading weights' },
      { type: 'weightsLoaded', elapsedSeconds: 19.87 },
    ]);
    // The safetensors loader's bar is drawn by both: it is a shared rule.
    assert.deepEqual(read('vllm', SGLANG), [{ type: 'shards', percent: 50, done: 32, total: 64 }]);
  });

  it('without an engine (command line not known yet) both are read, vLLM first', () => {
    assert.equal(read(undefined, [...SGLANG, ...VLLM]).length, 5);
  });

  it('the shared rules hold in both: uvicorn, a traceback and its exception, systemd', () => {
    const lines = [
      '(EngineCore_DP0 pid=164) Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:01<00:03,  1.2s/it]',
      'INFO:     Application startup complete.',
      'Traceback (most recent call last):',
      '  File "/x.py", line 1, in <module>',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB',
      'sglang.service: Main process exited, code=exited, status=1/FAILURE',
    ];
    for (const engine of ['sglang', 'vllm'] as const) {
      const events = read(engine, lines);
      assert.deepEqual(
        events.map((e) => e.type),
        ['shards', 'phase', 'httpUp', 'error', 'error', 'systemd', 'error'],
        engine,
      );
      assert.ok(
        events.some((e) => e.type === 'error' && e.fatal && /CUDA out of memory/.test(e.text)),
        engine,
      );
    }
  });

  it("vLLM's bar state lives in its stream: two readers do not share it", () => {
    const bar = (n: number) =>
      `(EngineCore_DP0 pid=1) Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): ${Math.round((n / 10) * 100)}%|██| ${n}/10 [00:01<00:00]`;
    const one = new JournalReader(engineById('vllm').grammar);
    one.read(bar(10), 0);
    const two = new JournalReader(engineById('vllm').grammar);
    assert.deepEqual(two.read(bar(4), 0), [{ type: 'cudaGraphBatches', done: 4, total: 10 }]);
  });

  it('parseJournalLine takes a grammar: an SGLang line read as vLLM says nothing', () => {
    const line = '[2026-11-30 10:00:00 TP0] Capture cuda graph begin. This can take up to several minutes.';
    assert.deepEqual(parseJournalLine(line), [{ type: 'phase', phase: 'capturing CUDA graphs' }]);
    assert.deepEqual(parseJournalLine(line, { inTraceback: false }, engineById('vllm').grammar), []);
  });
});
