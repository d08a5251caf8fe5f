// The simulator's vLLM mode, its pure parts: vLLM's command-line checks and its kimi_k2 post-processing
// (vllm/reasoning/kimi_k2_reasoning_parser.py, vllm/tool_parsers/kimi_k2_tool_parser.py).
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { waitFor } from '../util/waitFor';
import { freePort } from '../util/freePort';

const SIM = '../gpu-host/sglang-sim/';
const { parseVllmArgs } = require(SIM + 'vllm-args.js');
const vo = require(SIM + 'vllm-openai.js');

const SECTION =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';

describe('simulator, vLLM mode: command line', () => {
  it('reads `serve MODEL` and the flags, served name defaulting to the model', () => {
    const r = parseVllmArgs([
      'serve',
      '/m',
      '--port',
      '8001',
      '-tp',
      '8',
      '--tool-call-parser',
      'kimi_k2',
      '--enable-auto-tool-choice',
    ]);
    assert.equal(r.ok, true);
    assert.equal(r.args.model, '/m');
    assert.equal(r.args.served_model_name, '/m');
    assert.equal(r.args.port, 8001);
    assert.equal(r.args.tensor_parallel_size, 8);
    assert.equal(r.args.enable_auto_tool_choice, true);
    assert.equal(parseVllmArgs(['-m', 'vllm.entrypoints.openai.api_server', '--model=/x']).args.model, '/x');
  });

  it('refuses what vLLM refuses before the engine starts', () => {
    const auto = parseVllmArgs(['serve', '/m', '--enable-auto-tool-choice']);
    assert.equal(auto.ok, false);
    assert.match(auto.error, /TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser$/);
    assert.match(
      parseVllmArgs(['serve', '/m', '--tool-call-parser', 'kimi_k9']).error,
      /KeyError: 'invalid tool call parser: kimi_k9/,
    );
    assert.match(
      parseVllmArgs(['serve', '/m', '--reasoning-parser', 'deepseek-r1']).error,
      /invalid reasoning parser: deepseek-r1/,
    );
    const bad = parseVllmArgs(['serve', '/m', '--port', 'x']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.error, /vllm serve: error: argument --port: invalid int value: 'x'/);
  });
});

describe('simulator, vLLM mode: kimi_k2 parsers as vLLM applies them', () => {
  it('reasoning: up to </think>; content null when nothing follows; identity when thinking is off', () => {
    assert.deepEqual(vo.kimiK2Reasoning('think</think>answer', true), ['think', 'answer']);
    assert.deepEqual(vo.kimiK2Reasoning('<think>think</think>', true), ['think', null]);
    assert.deepEqual(vo.kimiK2Reasoning('still thinking', true), ['still thinking', null]);
    assert.deepEqual(vo.kimiK2Reasoning(`think${SECTION}`, true), ['think', SECTION]);
    assert.deepEqual(vo.kimiK2Reasoning('answer', false), [null, 'answer']);
  });

  it("tool calls: the model's id kept, content before the section or null", () => {
    const t = vo.kimiK2ToolCalls(SECTION);
    assert.equal(t.called, true);
    assert.equal(t.content, null);
    assert.deepEqual(t.calls, [
      {
        id: 'functions.get_weather:0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
  });

  it('a chat answer: `reasoning`, both fields, or `reasoning_content` by version; tool_calls [] when none', () => {
    const r = vo.postProcess(`think</think>${SECTION}`, {
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
      autoTools: true,
      thinking: true,
      finishReason: 'stop',
    });
    assert.equal(r.finishReason, 'tool_calls');
    const meta = { model: 'm', promptTokens: 1, completionTokens: 2 };
    const msg = (field: string) => vo.chatCompletion(r, { ...meta, reasoningField: field }).choices[0].message;
    assert.equal(msg('reasoning').reasoning, 'think');
    assert.equal(msg('reasoning').reasoning_content, undefined);
    assert.equal(msg('both').reasoning_content, 'think');
    assert.equal(msg('reasoning_content').reasoning, undefined);
    const plain = vo.postProcess('hello', {
      reasoningParser: null,
      toolCallParser: null,
      autoTools: false,
      thinking: true,
      finishReason: 'stop',
    });
    assert.deepEqual(
      vo.chatCompletion(plain, { ...meta, reasoningField: 'reasoning' }).choices[0].message.tool_calls,
      [],
    );
  });
});

function get(
  port: number,
  p: string,
  headers: Record<string, string> = {},
): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, agent: false, headers }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => resolve({ status: res.statusCode, body: b }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code }));
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('simulator, vLLM mode: one real run as `python -m vllm.entrypoints.openai.api_server`', function () {
  this.timeout(30_000);
  let proc: ChildProcess | undefined;
  let dir = '';
  after(() => {
    proc?.kill('SIGKILL');
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("port closed while loading, then /health 200, vLLM's model list, no /server_info, --api-key on /v1 only; SIGTERM ends it", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-vllm-sim-'));
    fs.mkdirSync(path.join(dir, 'model'));
    fs.mkdirSync(path.join(dir, 'root'));
    for (let i = 1; i <= 2; i++)
      fs.writeFileSync(path.join(dir, 'model', `model-0000${i}-of-00002.safetensors`), Buffer.alloc(512 * 1024, i));
    fs.writeFileSync(
      path.join(dir, 'root', 'sim.json'),
      JSON.stringify({
        readMBps: 0.5,
        coldFiles: 'all',
        tokenDelayMs: 0,
        fault: { hangAt: 'weights', afterShards: 1, resumeAfterSeconds: 3 },
      }),
    );
    const port = await freePort();
    let stderr = '';
    proc = spawn(
      process.execPath,
      [
        path.join(__dirname, '..', 'gpu-host', 'sglang-sim', 'main.js'),
        '-m',
        'vllm.entrypoints.openai.api_server',
        '--model',
        path.join(dir, 'model'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--api-key',
        'k',
      ],
      { env: { ...process.env, KIMI_SIM_ROOT: path.join(dir, 'root') } },
    );
    proc.stderr!.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => proc!.on('exit', (code) => resolve(code)));
    await waitFor(() => /Starting to load model/.test(stderr), { timeoutMs: 10_000, message: 'the load started' });
    assert.equal((await get(port, '/health')).error, 'ECONNREFUSED', 'the port is closed while the engine loads');
    await waitFor(async () => (await get(port, '/health')).status === 200, {
      timeoutMs: 20_000,
      message: '/health 200',
    });
    assert.match(stderr, /Loading safetensors checkpoint shards: 100% Completed \| 2\/2/);
    assert.match(stderr, /\(APIServer pid=\d+\) INFO:     Application startup complete\./);
    assert.equal((await get(port, '/v1/models')).status, 401);
    const models = await get(port, '/v1/models', { authorization: 'Bearer k' });
    assert.equal(JSON.parse(models.body ?? '{}').data[0].owned_by, 'vllm');
    assert.equal((await get(port, '/server_info')).status, 404);
    proc.kill('SIGTERM');
    assert.equal(await exited, 0);
    proc = undefined;
  });
});
