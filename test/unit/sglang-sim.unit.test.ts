// Unit tests of the SGLang simulator (test/gpu-host/sglang-sim, plain CommonJS): its pure parts, plus one
// short run of the real process (port closed while loading, /health 503 then 200, SIGTERM).
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../util/freePort';
import { QUICK_SIM } from '../util/quickSim';

const SIM = '../gpu-host/sglang-sim/';
const { parseArgs } = require(SIM + 'args.js');
const { mergeConfig, loadConfig, DEFAULTS, SIM_DIR } = require(SIM + 'config.js');
const tqdm = require(SIM + 'tqdm.js');
const parsers = require(SIM + 'parsers.js');
const model = require(SIM + 'model.js');
const oa = require(SIM + 'openai.js');
const state = require(SIM + 'state.js');
const log = require(SIM + 'log.js');
const faults = require(SIM + 'faults.js');
const requestLog = require(SIM + 'requestLog.js');

const SHARD_RE =
  /(?:Multi-thread loading shards|Loading safetensors checkpoint shards):\s+(\d+)% Completed \| (\d+)\/(\d+)/;
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city'],
    },
  },
};

describe('sglang-sim: args', () => {
  it('parses a launch_server command line', () => {
    const r = parseArgs([
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/m/K2',
      '--served-model-name',
      'kimi',
      '--tp',
      '8',
      '--trust-remote-code',
      '--host',
      '127.0.0.1',
      '--port',
      '30001',
      '--tool-call-parser',
      'kimi_k2',
      '--reasoning-parser=kimi_k2',
      '--weight-loader-drop-cache-after-load',
      '--mem-fraction-static',
      '0.9',
      '--some-new-flag',
      'x',
      '--enable-foo',
    ]);
    assert.equal(r.ok, true);
    assert.equal(r.args.model_path, '/m/K2');
    assert.equal(r.args.served_model_name, 'kimi');
    assert.equal(r.args.tp_size, 8);
    assert.equal(r.args.port, 30001);
    assert.equal(r.args.trust_remote_code, true);
    assert.equal(r.args.tool_call_parser, 'kimi_k2');
    assert.equal(r.args.reasoning_parser, 'kimi_k2');
    assert.equal(r.args.weight_loader_drop_cache_after_load, true);
    assert.equal(r.args.mem_fraction_static, '0.9');
    assert.equal(r.extra.some_new_flag, 'x');
    assert.equal(r.extra.enable_foo, true);
  });

  it('accepts `sglang serve` and defaults served_model_name to the model path', () => {
    const r = parseArgs(['serve', '--model-path', '/root/models/Kimi-K2.6', '--tp-size', '2']);
    assert.equal(r.ok, true);
    assert.equal(r.args.served_model_name, '/root/models/Kimi-K2.6');
    assert.equal(r.args.tp_size, 2);
    assert.equal(r.args.reasoning_parser, null);
    assert.equal(r.args.tool_call_parser, null);
  });

  it('fails like argparse (exit 2) on a bad parser name or a missing model path', () => {
    const bad = parseArgs(['-m', 'sglang.launch_server', '--model-path', '/m', '--reasoning-parser', 'kimi-k2']);
    assert.equal(bad.ok, false);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.error, /error: argument --reasoning-parser: invalid choice: 'kimi-k2'/);
    const missing = parseArgs(['-m', 'sglang.launch_server', '--tp', '8']);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.error, /required: --model-path/);
    assert.equal(parseArgs(['--model-path', '/m', '--port', 'x']).exitCode, 2);
  });

  it('takes --api-key KEY and --api-key=KEY (no key: null); a missing value fails like argparse', () => {
    assert.equal(parseArgs(['--model-path', '/m', '--api-key', 'sk-1']).args.api_key, 'sk-1');
    assert.equal(parseArgs(['--model-path', '/m', '--api-key=sk=2']).args.api_key, 'sk=2');
    assert.equal(parseArgs(['--model-path', '/m']).args.api_key, null);
    const r = parseArgs(['--model-path', '/m', '--api-key']);
    assert.equal(r.exitCode, 2);
    assert.match(r.error, /argument --api-key: expected one argument/);
  });
});

describe('sglang-sim: config', () => {
  it('merges sim.json over the defaults and lifts shorthand fault keys', () => {
    const c = mergeConfig({ readMBps: 5, warmupFails: true, fault: { crashAt: 'kv' } });
    assert.equal(c.readMBps, 5);
    assert.equal(c.warmReadMBps, DEFAULTS.warmReadMBps);
    assert.deepEqual(c.fault, { crashAt: 'kv', warmupFails: true });
    assert.equal(c.tqdmMode, 'lines');
  });

  it('treats a missing sim.json as defaults and reports a broken one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simcfg-'));
    try {
      assert.equal(loadConfig(dir).configError, null);
      fs.writeFileSync(path.join(dir, 'sim.json'), '{nope');
      const c = loadConfig(dir);
      assert.match(c.configError, /sim.json/);
      assert.equal(c.readMBps, DEFAULTS.readMBps);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sglang-sim: tqdm lines', () => {
  it('formats the shard bar as SGLang does, matching the reference regex', () => {
    const l = tqdm.shardLine('Multi-thread loading shards', 16, 64, 62, 0.26);
    assert.equal(l, 'Multi-thread loading shards:  25% Completed | 16/64 [01:02<03:04,  3.85s/it]');
    const m = SHARD_RE.exec(l);
    assert.ok(m);
    assert.deepEqual([m[1], m[2], m[3]], ['25', '16', '64']);
    assert.match(
      tqdm.shardLine('Loading safetensors checkpoint shards', 0, 64, 0, null),
      /^Loading safetensors checkpoint shards:\s+0% Completed \| 0\/64 \[00:00<\?, \?it\/s\]$/,
    );
    assert.match(tqdm.shardLine('x', 64, 64, 3725, 2.5), /100% Completed \| 64\/64 \[1:02:05<00:00,  2.50it\/s\]/);
  });

  it('draws the default tqdm bar of the CUDA graph capture', () => {
    const l = tqdm.defaultLine('Capturing batches (bs=24 avail_mem=4.00 GB)', 3, 7, 1, 2.9);
    assert.equal(l, 'Capturing batches (bs=24 avail_mem=4.00 GB):  43%|████▎     | 3/7 [00:01<00:01,  2.90it/s]');
    assert.equal(tqdm.bar(0), '          ');
    assert.equal(tqdm.bar(1), '██████████');
  });

  it('rounds percentages like Python format (half to even)', () => {
    assert.equal(tqdm.pct(1, 8), ' 12'); // 12.5 -> 12
    assert.equal(tqdm.pct(3, 8), ' 38'); // 37.5 -> 38
    assert.equal(tqdm.pct(1, 3), ' 33');
  });
});

describe('sglang-sim: reasoning parser', () => {
  const raw = 'I think hard.</think>The answer.';
  it('kimi_k2 splits at </think> (the template already opened <think>)', () => {
    assert.deepEqual(parsers.parseReasoning(raw, 'kimi_k2', true), {
      reasoning: 'I think hard.',
      content: 'The answer.',
    });
    assert.deepEqual(parsers.parseReasoning('<think>x</think>y', 'kimi_k2', true), { reasoning: 'x', content: 'y' });
  });
  it('kimi_k2 with thinking off leaves plain text as content', () => {
    assert.deepEqual(parsers.parseReasoning('The answer.', 'kimi_k2', false), {
      reasoning: null,
      content: 'The answer.',
    });
  });
  it('kimi_k2: output truncated before </think> is all reasoning', () => {
    assert.deepEqual(parsers.parseReasoning('I think', 'kimi_k2', true), { reasoning: 'I think', content: '' });
  });
  it('kimi (◁think▷ markers) finds nothing in K2.6 output: </think> stays in content', () => {
    assert.deepEqual(parsers.parseReasoning(raw, 'kimi', true), { reasoning: null, content: raw });
    assert.deepEqual(parsers.parseReasoning('◁think▷a◁/think▷b', 'kimi', true), { reasoning: 'a', content: 'b' });
  });
  it('no parser: everything is content', () => {
    assert.deepEqual(parsers.parseReasoning(raw, null, true), { reasoning: null, content: raw });
  });
});

describe('sglang-sim: kimi_k2 tool-call parser', () => {
  const section =
    '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|>' +
    '<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{"tz":"UTC"}<|tool_call_end|><|tool_calls_section_end|>';
  it('extracts every call and keeps the text before the section', () => {
    const r = parsers.parseKimiK2ToolCalls(`Let me check. ${section}`);
    assert.equal(r.content, 'Let me check.');
    assert.deepEqual(
      r.calls.map((c: any) => [c.name, c.arguments, c.index]),
      [
        ['get_weather', '{"city":"Paris"}', 0],
        ['get_time', '{"tz":"UTC"}', 1],
      ],
    );
  });

  const base = { hasTools: true, thinking: true, finishReason: 'stop' };
  const rawOut = `Thinking.</think>${section}`;
  it('both parsers: reasoning separated, structured tool calls, finish_reason tool_calls', () => {
    const r = parsers.postProcessChat(rawOut, {
      ...base,
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
      historyToolCalls: 2,
    });
    assert.equal(r.reasoning, 'Thinking.');
    assert.equal(r.content, '');
    assert.equal(r.finishReason, 'tool_calls');
    assert.deepEqual(r.toolCalls[0], {
      id: 'functions.get_weather:2',
      index: 0,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    assert.equal(r.toolCalls[1].id, 'functions.get_time:3');
  });
  it('no tool parser: raw tokens stay in content, finish_reason stop', () => {
    const r = parsers.postProcessChat(rawOut, { ...base, reasoningParser: 'kimi_k2', toolCallParser: null });
    assert.equal(r.toolCalls, null);
    assert.equal(r.finishReason, 'stop');
    assert.ok(r.content.startsWith('<|tool_calls_section_begin|>'));
  });
  it('tool parser on but no tools in the request: not parsed', () => {
    const r = parsers.postProcessChat(rawOut, {
      ...base,
      hasTools: false,
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(r.toolCalls, null);
  });
  it('a tool call inside the reasoning is lost to reasoning_content', () => {
    const r = parsers.postProcessChat(`Thinking.${section}</think>`, {
      ...base,
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
    });
    assert.equal(r.toolCalls, null);
    assert.equal(r.content, '');
    assert.ok(r.reasoning.includes('<|tool_call_begin|>'));
    assert.equal(r.finishReason, 'stop');
  });
});

describe('sglang-sim: the model', () => {
  const req = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL] };
  it('thinks by default and calls the tool with schema-valid arguments', () => {
    const raw = model.chatRawOutput(req);
    const m =
      /^(.*)<\/think><\|tool_calls_section_begin\|><\|tool_call_begin\|>functions\.get_weather:0<\|tool_call_argument_begin\|>(\{.*\})<\|tool_call_end\|><\|tool_calls_section_end\|>$/s.exec(
        raw,
      );
    assert.ok(m, raw);
    assert.ok(m[1].length > 0);
    assert.deepEqual(JSON.parse(m[2]), { city: 'Paris' });
  });
  it('thinking: false -> no think markers at all', () => {
    const raw = model.chatRawOutput({
      messages: [{ role: 'user', content: 'hi' }],
      chat_template_kwargs: { thinking: false },
    });
    assert.ok(!raw.includes('think'), raw);
    // enable_thinking is not Kimi K2.6's switch
    assert.ok(
      model
        .chatRawOutput({
          messages: [{ role: 'user', content: 'hi' }],
          chat_template_kwargs: { enable_thinking: false },
        })
        .includes('</think>'),
    );
  });
  it('faults move the tool section before </think> or drop </think>', () => {
    const inR = model.chatRawOutput(req, { toolCallInReasoning: true });
    assert.ok(inR.indexOf('<|tool_calls_section_begin|>') < inR.indexOf('</think>'));
    assert.ok(!model.chatRawOutput(req, { missingThinkEnd: true }).includes('</think>'));
  });
  it('answers with text after a tool result, and respects tool_choice none', () => {
    const after = model.chatRawOutput({
      ...req,
      messages: [
        ...req.messages,
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'functions.get_weather:0', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', content: 'sunny, 22 C' },
      ],
    });
    assert.ok(!after.includes('<|tool_calls_section_begin|>'));
    assert.ok(after.includes('sunny'));
    assert.ok(!model.chatRawOutput({ ...req, tool_choice: 'none' }).includes('<|tool_call'));
  });
  it('builds sample values from JSON schemas', () => {
    assert.deepEqual(
      model.sampleForSchema({
        type: 'object',
        properties: {
          n: { type: 'integer' },
          x: { type: 'number' },
          b: { type: 'boolean' },
          u: { type: 'string', enum: ['c', 'f'] },
          o: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
          skip: { type: 'string' },
        },
        required: ['n', 'x', 'b', 'u', 'o'],
      }),
      { n: 1, x: 1, b: true, u: 'c', o: { location: 'Paris, France' } },
    );
  });
  it('tokenizes special tokens whole and truncates at max tokens', () => {
    assert.deepEqual(model.tokenize('a b</think><|tool_call_end|>'), ['a', ' b', '</think>', '<|tool_call_end|>']);
    const t = model.truncateTokens(' one two three four', 3);
    assert.deepEqual(t, { text: ' one two three', tokens: 3, truncated: true });
    assert.equal(model.truncateTokens(' one', 3).truncated, false);
  });
});

describe('sglang-sim: OpenAI-shaped bodies', () => {
  const meta = { model: 'kimi', promptTokens: 5, completionTokens: 7 };
  it('chat completion: content never null, null reasoning/tool_calls when absent', () => {
    const b = oa.chatCompletion({ reasoning: null, content: '', toolCalls: null, finishReason: 'stop' }, meta);
    assert.equal(b.object, 'chat.completion');
    assert.deepEqual(b.choices[0].message, {
      role: 'assistant',
      content: '',
      reasoning_content: null,
      tool_calls: null,
    });
    assert.equal(b.choices[0].matched_stop, oa.EOS_ID);
    assert.equal(b.usage.total_tokens, 12);
  });
  it('text completion with max_tokens reached: finish_reason length', () => {
    const b = oa.completion(' I am', 'length', meta);
    assert.equal(b.object, 'text_completion');
    assert.deepEqual(b.choices[0], {
      index: 0,
      text: ' I am',
      logprobs: null,
      finish_reason: 'length',
      matched_stop: null,
    });
  });
  it('error body: OpenAI route shape with the status as code', () => {
    assert.deepEqual(oa.errorBody('bad'), {
      object: 'error',
      message: 'bad',
      type: 'BadRequestError',
      param: null,
      code: 400,
    });
    assert.equal(oa.errorBody('The model `x` does not exist.', 404).code, 404);
  });

  const r = {
    reasoning: 'Think.',
    content: 'Hi there',
    toolCalls: [
      {
        id: 'functions.get_weather:0',
        index: 0,
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ],
    finishReason: 'tool_calls',
  };
  it('stream chunks: role, reasoning, content, tool call, finish; null keys omitted', () => {
    const ch = oa.chatStreamChunks(r, meta, {});
    const deltas = ch.map((c: any) => c.choices[0].delta);
    assert.deepEqual(deltas[0], { role: 'assistant', content: '' });
    const joined = (key: string) =>
      deltas
        .map((d: any) => d[key])
        .filter(Boolean)
        .join('');
    assert.equal(joined('reasoning_content'), 'Think.');
    assert.equal(joined('content'), 'Hi there');
    const tc = deltas.filter((d: any) => d.tool_calls).map((d: any) => d.tool_calls[0]);
    assert.deepEqual(tc[0], {
      id: 'functions.get_weather:0',
      index: 0,
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    assert.equal(tc.map((t: any) => t.function.arguments).join(''), '{"city":"Paris"}');
    assert.ok(tc.slice(1).every((t: any) => !('id' in t) && !('name' in t.function)));
    const last = ch[ch.length - 1].choices[0];
    assert.deepEqual(last.delta, {});
    assert.equal(last.finish_reason, 'tool_calls');
    assert.ok(ch.slice(0, -1).every((c: any) => c.choices[0].finish_reason === null));
  });
  it('stream chunks with streamNullKeys: every delta has all keys', () => {
    const ch = oa.chatStreamChunks(r, meta, { nullKeys: true });
    for (const c of ch)
      assert.deepEqual(Object.keys(c.choices[0].delta).sort(), ['content', 'reasoning_content', 'role', 'tool_calls']);
    assert.equal(ch[1].choices[0].delta.content, null);
  });
  it('include_usage adds a usage chunk with no choices', () => {
    const ch = oa.chatStreamChunks(r, { ...meta, includeUsage: true }, {});
    assert.deepEqual(ch[ch.length - 1].choices, []);
    assert.equal(ch[ch.length - 1].usage.completion_tokens, 7);
  });
});

describe('sglang-sim: state files', () => {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simstate-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('page cache: the real one, measured with fincore, evicted with dd, filled by coldFiles "none"', function () {
    if (!fs.readdirSync('/usr/bin').includes('fincore')) this.skip();
    const files = ['a', 'b'].map((n) => path.join(dir, `${n}.safetensors`));
    for (const f of files) {
      const fd = fs.openSync(f, 'w');
      fs.writeSync(fd, Buffer.alloc(256 * 1024, 7));
      fs.fsyncSync(fd);
      fs.closeSync(fd);
    }
    const model = files.map((p) => ({ path: p, size: 256 * 1024 }));
    const cold = state.applyColdFiles(model, 'all');
    assert.deepEqual([...cold].sort(), files);
    assert.deepEqual([...state.measureResidency(files).values()], [0, 0]);
    assert.equal(state.applyColdFiles(model, 'none').size, 0);
    assert.deepEqual([...state.measureResidency(files).values()], [256 * 1024, 256 * 1024]);
    assert.deepEqual([...state.applyColdFiles(model, ['b.safetensors'])], [files[1]]);
    assert.deepEqual([...state.measureResidency(files).values()], [256 * 1024, 0]);
    assert.equal(state.applyColdFiles(model, null).size, 0);
  });

  it('gpu.json has the pid and one entry per GPU, with its utilisation (what nvidia-smi utilization.gpu reads)', () => {
    state.writeGpu(dir, 1234, [100.4, 200.6], 81920);
    const j = JSON.parse(fs.readFileSync(path.join(dir, 'gpu.json'), 'utf8'));
    assert.equal(j.pid, 1234);
    assert.deepEqual(j.gpus, [
      { index: 0, memoryUsedMiB: 100, memoryTotalMiB: 81920, utilizationGpu: 0 },
      { index: 1, memoryUsedMiB: 201, memoryTotalMiB: 81920, utilizationGpu: 0 },
    ]);
    state.writeGpu(dir, 1234, [100], 81920, 85);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'gpu.json'), 'utf8')).gpus[0].utilizationGpu, 85);
  });
});

describe('sglang-sim: log lines and tracebacks', () => {
  it('prefixes per-rank and main-process lines', () => {
    const d = new Date(2025, 6, 15, 9, 5, 3);
    assert.equal(log.prefix(3, d), '[2025-07-15 09:05:03 TP3] ');
    assert.equal(log.prefix(null, d), '[2025-07-15 09:05:03] ');
    const out: string[] = [];
    const l = new log.Logger({ tp: 2, err: (s: string) => out.push(s), out: (s: string) => out.push(s) });
    l.allRanks('Init torch distributed begin.');
    l.access('127.0.0.1:33050', 'GET', '/model_info', 200);
    assert.match(out[0], /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d TP0\] Init torch distributed begin\.\n$/);
    assert.match(out[1], / TP1\] /);
    assert.equal(out[2], 'INFO:     127.0.0.1:33050 - "GET /model_info HTTP/1.1" 200 OK\n');
  });
  it('crash texts carry the error lines the extension must surface', () => {
    assert.match(
      faults.schedulerTraceback('kv', 'oom'),
      /^Scheduler hit an exception: Traceback \(most recent call last\):\n[\s\S]*torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate/,
    );
    assert.match(
      faults.schedulerTraceback('weights', 'cuda'),
      /RuntimeError: CUDA error: an illegal memory access was encountered/,
    );
    assert.match(faults.warmupTraceback('<Response [500]>'), /^Initialization failed\. warmup error: Traceback/);
  });
});

// --- one real run of the simulator process ----------------------------------------------------------------
function get(port: number, p: string, body?: unknown): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: body ? 'POST' : 'GET',
        agent: false,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let b = '';
        res.on('data', (c) => {
          b += c;
        });
        res.on('end', () => resolve({ status: res.statusCode, body: b }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code }));
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    if (body) req.write(JSON.stringify(body));
    req.end();
  });
}

function request(
  port: number,
  p: string,
  o: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status?: number; body?: string; contentType?: string; error?: string }> {
  return new Promise((resolve) => {
    const data = o.body !== undefined ? JSON.stringify(o.body) : undefined;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: o.method ?? (data ? 'POST' : 'GET'),
        agent: false,
        headers: { ...(data ? { 'content-type': 'application/json' } : {}), ...o.headers },
      },
      (res) => {
        let b = '';
        res.on('data', (c) => {
          b += c;
        });
        res.on('end', () => resolve({ status: res.statusCode, body: b, contentType: res.headers['content-type'] }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code }));
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    if (data) req.write(data);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sglang-sim: chat faults', () => {
  const weather = {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };
  const calls = [
    {
      id: 'functions.get_weather:0',
      index: 0,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    },
    {
      id: 'functions.get_weather:1',
      index: 1,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' },
    },
  ];

  it('off by default: the switches read as none, calls and streams unchanged', () => {
    assert.deepEqual(faults.chatFaults({ cfg: mergeConfig({}) }), {});
    assert.equal(faults.faultyCalls({}, calls, 'sglang'), calls);
    const r = { content: '', toolCalls: calls, finishReason: 'tool_calls' };
    assert.equal(faults.streamedResult({}, r), r);
    assert.equal(faults.separatesReasoning({}, { messages: [{ role: 'tool', content: 'x' }] }), true);
    assert.equal(faults.parserThinking({}, false), false);
  });

  it('each switch: merged calls, foreign ids, calls left as text when streamed, reasoning kept in content, thinking forced', () => {
    const merged = faults.faultyCalls({ mergeParallelCalls: true }, calls, 'vllm');
    assert.equal(merged.length, 1);
    assert.equal(
      merged[0].id,
      'functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1',
    );
    assert.match(faults.faultyCalls({ callIds: true }, calls, 'sglang')[0].id, /^call_[0-9a-f]{24}$/);
    assert.match(faults.faultyCalls({ callIds: true }, calls, 'vllm')[1].id, /^chatcmpl-tool-[0-9a-f]{32}$/);
    const text = faults.streamedResult(
      { streamToolCallsAsContent: true },
      { content: '', toolCalls: calls, finishReason: 'tool_calls' },
    );
    assert.equal(text.finishReason, 'stop');
    assert.deepEqual(text.toolCalls, []);
    assert.match(
      text.content,
      /^<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions\.get_weather:0<\|tool_call_argument_begin\|>\{"city":"Paris"\}/,
    );
    assert.equal(
      faults.separatesReasoning({ thinkPrefilled: true }, { messages: [{ role: 'user', content: 'x' }] }),
      false,
    );
    assert.equal(
      faults.separatesReasoning({ reasoningLeakAfterTool: true }, { messages: [{ role: 'user', content: 'x' }] }),
      true,
    );
    assert.equal(
      faults.separatesReasoning({ reasoningLeakAfterTool: true }, { messages: [{ role: 'tool', content: 'x' }] }),
      false,
    );
    assert.equal(faults.parserThinking({ thinkingIgnored: true }, false), true);
  });

  it('the model: a call per city named, nothing after foreign ids in its history, reasoning as long as asked', () => {
    const two = model.chatRawOutput({
      messages: [{ role: 'user', content: 'Weather in Paris and in Tokyo?' }],
      tools: [weather],
    });
    assert.match(
      two,
      /functions\.get_weather:0<\|tool_call_argument_begin\|>\{"city":"Paris"\}<\|tool_call_end\|><\|tool_call_begin\|>functions\.get_weather:1<\|tool_call_argument_begin\|>\{"city":"Tokyo"\}/,
    );
    const history = (id: string) => [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: id, content: '{"temperature_c":18}' },
    ];
    assert.match(
      model.chatRawOutput({ messages: history('functions.get_weather:0'), tools: [weather] }),
      /<\/think>According to the tool: \{"temperature_c":18\}$/,
    );
    assert.match(model.chatRawOutput({ messages: history('call_0a1b2c'), tools: [weather] }), /<\/think>$/);
    const long = model.chatRawOutput({ messages: [{ role: 'user', content: 'hi' }] }, { longReasoningTokens: 500 });
    assert.ok(model.tokenize(long.slice(0, long.indexOf('</think>'))).length >= 500);
  });

  it('needsReasoningBack: a tool chain whose call message lacks its reasoning gets an answer that ignores the result; earlier turns do not count', () => {
    const toolCall = (id: string, reasoning?: string) => ({
      role: 'assistant',
      content: '',
      tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      ...(reasoning ? { reasoning_content: reasoning } : {}),
    });
    const chain = (reasoning?: string) => [
      { role: 'user', content: 'Weather in Paris?' },
      toolCall('functions.get_weather:0', reasoning),
      { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '{"temperature_c":18}' },
    ];
    const on = { needsReasoningBack: true };
    assert.match(
      model.chatRawOutput({ messages: chain(), tools: [weather] }, on),
      /<\/think>I could not find that information\.$/,
    );
    assert.match(
      model.chatRawOutput({ messages: chain('Call the tool.'), tools: [weather] }, on),
      /According to the tool: \{"temperature_c":18\}$/,
    );
    assert.match(
      model.chatRawOutput({ messages: chain(), tools: [weather] }),
      /According to the tool/,
      'off by default',
    );
    // vLLM's newer field counts too; a call of a finished earlier turn without reasoning does not.
    const vllm = chain();
    (vllm[1] as Record<string, unknown>).reasoning = 'Call the tool.';
    assert.match(model.chatRawOutput({ messages: vllm, tools: [weather] }, on), /According to the tool/);
    const later = [
      ...chain(),
      { role: 'assistant', content: 'It is 18 °C.' },
      { role: 'user', content: 'And now?' },
      toolCall('functions.get_weather:1', 'Again.'),
      { role: 'tool', tool_call_id: 'functions.get_weather:1', content: '{"temperature_c":19}' },
    ];
    assert.match(
      model.chatRawOutput({ messages: later, tools: [weather] }, on),
      /According to the tool: \{"temperature_c":19\}$/,
    );
    // Thinking off: nothing to carry.
    assert.match(
      model.chatRawOutput({ messages: chain(), tools: [weather], chat_template_kwargs: { thinking: false } }, on),
      /^According to the tool/,
    );
  });

  it('the request log: one line per chat body, with what each tool-call message carried back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simlog-'));
    try {
      const body = {
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: 'functions.f:0', function: { name: 'f', arguments: '{}' } }],
            reasoning_content: 'abc',
            reasoning: 'abc',
          },
          { role: 'tool', tool_call_id: 'functions.f:0', content: 'r' },
          { role: 'assistant', content: 'done' },
          { role: 'assistant', content: '', tool_calls: [{ id: 'functions.f:1' }] },
        ],
      };
      requestLog.logChatRequest(dir, body);
      requestLog.logChatRequest(null, body);
      const lines = fs.readFileSync(path.join(dir, requestLog.FILE), 'utf8').trim().split('\n');
      assert.equal(lines.length, 1);
      const entry = JSON.parse(lines[0]!);
      assert.deepEqual(entry.body, body);
      assert.deepEqual(entry.toolCallMessages, [
        {
          index: 1,
          ids: ['functions.f:0'],
          reasoningChars: 3,
          reasoningContentChars: 3,
          reasoningFieldChars: 3,
          inCurrentChain: false,
        },
        {
          index: 4,
          ids: ['functions.f:1'],
          reasoningChars: 0,
          reasoningContentChars: 0,
          reasoningFieldChars: 0,
          inCurrentChain: true,
        },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sglang-sim: the process', function () {
  this.timeout(30000);
  let dir = '';
  let proc: ChildProcess | null = null;
  afterEach(() => {
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    proc = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('closed port while loading, 503 while warming up, 200 once fired up, clean SIGTERM', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simproc-'));
    const modelDir = path.join(dir, 'model');
    const root = path.join(dir, 'state');
    fs.mkdirSync(modelDir);
    fs.mkdirSync(root);
    for (let i = 1; i <= 8; i++)
      fs.writeFileSync(path.join(modelDir, `model-0000${i}-of-00008.safetensors`), Buffer.alloc(256 * 1024, i));
    fs.writeFileSync(
      path.join(root, 'sim.json'),
      JSON.stringify({
        readMBps: 2,
        initSeconds: 0.1,
        kvSeconds: 0.05,
        cudaGraphSeconds: 0.1,
        uvicornSeconds: 0.05,
        warmupSeconds: 1.5,
        warmupPollSeconds: 0.05,
        coldFiles: 'all',
      }),
    );
    const port = await freePort();
    proc = spawn(
      process.execPath,
      [
        path.join(SIM_DIR, 'main.js'),
        '-m',
        'sglang.launch_server',
        '--model-path',
        modelDir,
        '--tp',
        '2',
        '--port',
        String(port),
        '--reasoning-parser',
        'kimi_k2',
        '--tool-call-parser',
        'kimi_k2',
      ],
      { env: { ...process.env, KIMI_SIM_ROOT: root } },
    );
    let err = '';
    let out = '';
    proc.stderr!.on('data', (d) => {
      err += d;
    });
    proc.stdout!.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<[number | null, string | null]>((resolve) =>
      proc!.on('exit', (c, s) => resolve([c, s])),
    );

    // loading: shard lines appear, the port refuses, GPU memory grows, a reader child does the reads
    while (!/loading shards:\s+\d+% Completed \| [1-9]\/8/.test(err)) await sleep(50);
    assert.equal((await get(port, '/v1/models')).error, 'ECONNREFUSED');
    const gpu = JSON.parse(fs.readFileSync(path.join(root, 'gpu.json'), 'utf8'));
    assert.equal(gpu.pid, proc.pid);
    assert.equal(gpu.gpus.length, 2);
    assert.ok(gpu.gpus[0].memoryUsedMiB > 0);

    // warming up: models answer, health does not
    while (!err.includes('Uvicorn running on')) await sleep(20);
    assert.equal((await get(port, '/v1/models')).status, 200);
    assert.equal((await get(port, '/health')).status, 503);
    const info = JSON.parse((await get(port, '/server_info')).body!);
    assert.equal(info.reasoning_parser, 'kimi_k2');
    assert.equal(info.tp_size, 2);
    assert.ok(!err.includes('fired up'));

    while (!err.includes('The server is fired up and ready to roll!')) await sleep(20);
    assert.equal((await get(port, '/health')).status, 200);
    const chat = JSON.parse(
      (
        await get(port, '/v1/chat/completions', {
          model: modelDir,
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
          tools: [WEATHER_TOOL],
        })
      ).body!,
    );
    assert.equal(chat.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(JSON.parse(chat.choices[0].message.tool_calls[0].function.arguments), { city: 'Paris' });
    assert.equal((await get(port, '/v1/completions', { model: 'nope', prompt: 'hi' })).status, 404);

    // the order of the log, each line once per rank where SGLang logs per rank
    const order = [
      'Init torch distributed begin.',
      'Load weight begin.',
      '100% Completed | 8/8',
      'Load weight end.',
      'KV Cache is allocated.',
      'Capture cuda graph begin.',
      'Capture cuda graph end.',
      'max_total_num_tokens=',
      'Uvicorn running on',
      'The server is fired up',
    ];
    let at = -1;
    for (const s of order) {
      const i = err.indexOf(s);
      assert.ok(i > at, `${s} out of order`);
      at = i;
    }
    assert.equal((err.match(/TP1\] Load weight end\./g) || []).length, 1);
    assert.match(out, /"GET \/model_info HTTP\/1\.1" 200 OK/);
    assert.match(out, /"POST \/generate HTTP\/1\.1" 200 OK/);
    // the cold load read the shards through the page cache: they are resident now
    const shardFiles = fs.readdirSync(modelDir).map((n) => path.join(modelDir, n));
    assert.deepEqual(
      [...state.measureResidency(shardFiles).values()],
      shardFiles.map(() => 256 * 1024),
    );

    const t0 = Date.now();
    proc.kill('SIGTERM');
    const [code] = await exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - t0 < 1000);
    assert.match(err, /INFO: {5}Finished server process/);
    assert.equal((await get(port, '/health')).error, 'ECONNREFUSED');
    const after = JSON.parse(fs.readFileSync(path.join(root, 'gpu.json'), 'utf8'));
    assert.ok(after.gpus.every((g: { memoryUsedMiB: number }) => g.memoryUsedMiB === 0));
  });

  /** A fast simulator process on a fresh model folder; resolves once `until` is in its stderr. */

  async function startSim(extraArgs: string[], sim: Record<string, unknown>, until: string, shards = 1) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simproc-'));
    const modelDir = path.join(dir, 'model');
    fs.mkdirSync(modelDir);
    for (let i = 1; i <= shards; i++)
      fs.writeFileSync(path.join(modelDir, `model-0000${i}-of-0000${shards}.safetensors`), Buffer.alloc(64 * 1024));
    fs.writeFileSync(path.join(dir, 'sim.json'), JSON.stringify({ ...QUICK_SIM, ...sim }));
    const port = await freePort();
    const p = spawn(
      process.execPath,
      [path.join(SIM_DIR, 'main.js'), '--model-path', modelDir, '--tp', '1', '--port', String(port), ...extraArgs],
      { env: { ...process.env, KIMI_SIM_ROOT: dir } },
    );
    proc = p;
    const io = { err: '', out: '' };
    p.stderr!.on('data', (d) => {
      io.err += d;
    });
    p.stdout!.on('data', (d) => {
      io.out += d;
    });
    const exited = new Promise<[number | null, string | null]>((resolve) => p.on('exit', (c, s) => resolve([c, s])));
    const end = Date.now() + 20000;
    while (!io.err.includes(until)) {
      if (p.exitCode !== null || Date.now() > end) throw new Error(`simulator did not get to "${until}":\n${io.err}`);
      await sleep(20);
    }
    return { p, port, io, exited };
  }

  it('--api-key: 401 {"error":"Unauthorized"} without `Authorization: Bearer KEY`, /health* and /metrics* open, warm-up sends the key', async () => {
    const key = 'sk-sim-secret';
    const { port, io } = await startSim(['--api-key', key], {}, 'The server is fired up and ready to roll!');
    // SGLang's own warm-up (GET /model_info, POST /generate) got through with the key
    assert.match(io.out, /"POST \/generate HTTP\/1\.1" 200 OK/);
    const no = await request(port, '/v1/models');
    assert.equal(no.status, 401);
    assert.equal(no.body, '{"error":"Unauthorized"}');
    assert.equal(no.contentType, 'application/json');
    assert.equal((await request(port, '/v1/models', { headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await request(port, '/v1/models', { headers: { authorization: key } })).status, 401, 'no scheme');
    assert.equal((await request(port, '/v1/models', { headers: { authorization: `Basic ${key}` } })).status, 401);
    assert.equal((await request(port, '/v1/models', { headers: { authorization: `Bearer ${key}` } })).status, 200);
    assert.equal(
      (await request(port, '/v1/models', { headers: { authorization: `bearer ${key}` } })).status,
      200,
      'the scheme is case-insensitive',
    );
    assert.equal((await request(port, '/nope')).status, 401, 'the middleware runs before routing');
    assert.equal((await request(port, '/nope', { headers: { authorization: `Bearer ${key}` } })).status, 404);
    assert.equal((await request(port, '/v1/models', { method: 'OPTIONS' })).status !== 401, true, 'OPTIONS passes');
    for (const open of ['/health', '/health_generate']) assert.equal((await request(port, open)).status, 200, open);
    assert.equal(
      (await request(port, '/metrics')).status,
      404,
      '/metrics passes the middleware (no metrics without --enable-metrics)',
    );
    const chat = { model: path.join(dir, 'model'), messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 };
    assert.equal((await request(port, '/v1/chat/completions', { body: chat })).status, 401);
    const ok = await request(port, '/v1/chat/completions', { body: chat, headers: { authorization: `Bearer ${key}` } });
    assert.equal(ok.status, 200);
    assert.ok(JSON.parse(ok.body!).choices.length > 0);
    assert.match(io.out, /"GET \/v1\/models HTTP\/1\.1" 401 Unauthorized/);
    assert.ok(io.err.includes(`api_key='${key}'`), 'the server_args line has the key in clear, as SGLang logs it');
  });

  it('fault hangAt untilCleared: the load halts after its shards until sim.json has no hangAt, then goes on to ready', async () => {
    const hang = { hangAt: 'weights', afterShards: 1, untilCleared: true };
    const { io } = await startSim([], { fault: hang }, '| 1/2 [', 2);
    // Held: nothing more comes while the sim looks at sim.json five times and finds the fault still
    // there (each look is far longer than a shard read of 64 KiB).
    const beats = path.join(dir, 'hold.beats');
    const heldUntil = Date.now() + 20000;
    while (!(fs.existsSync(beats) && Number(fs.readFileSync(beats, 'utf8')) >= 5)) {
      assert.ok(Date.now() < heldUntil, `the hold never looked at sim.json five times:\n${io.err.slice(-500)}`);
      await sleep(20);
    }
    assert.ok(!io.err.includes('| 2/2 ['), io.err.slice(-500));
    fs.writeFileSync(path.join(dir, 'sim.json'), JSON.stringify({ ...QUICK_SIM, fault: {} }));
    const end = Date.now() + 20000;
    while (!io.err.includes('The server is fired up and ready to roll!')) {
      assert.ok(Date.now() < end, `not ready after the fault was cleared:\n${io.err.slice(-500)}`);
      await sleep(20);
    }
    assert.ok(io.err.includes('| 2/2 ['));
  });

  it('stopDelayMs: SIGTERM closes the port at once, the process lives on that long (more SIGTERMs change nothing), then exits 0', async () => {
    const { p, port, exited } = await startSim([], { stopDelayMs: 60000 }, 'The server is fired up and ready to roll!');
    // read again at the signal: what sim.json says now counts
    fs.writeFileSync(path.join(dir, 'sim.json'), JSON.stringify({ stopDelayMs: 1500 }));
    const t0 = Date.now();
    p.kill('SIGTERM');
    let refused = false;
    while (!refused && Date.now() - t0 < 1000) refused = (await request(port, '/health')).error === 'ECONNREFUSED';
    assert.ok(refused, 'the port closes at once');
    assert.equal(p.exitCode, null, 'still alive');
    p.kill('SIGTERM');
    const [code] = await exited;
    const took = Date.now() - t0;
    assert.equal(code, 0);
    assert.ok(took >= 1400 && took < 10000, `exited after ${took} ms`);
  });

  it('crash at the KV cache: OOM traceback on stderr, exit status 1', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simproc-'));
    fs.mkdirSync(path.join(dir, 'model'));
    fs.writeFileSync(path.join(dir, 'model', 'model-00001-of-00001.safetensors'), Buffer.alloc(64 * 1024));
    fs.writeFileSync(
      path.join(dir, 'sim.json'),
      JSON.stringify({ initSeconds: 0.05, kvSeconds: 0.05, fault: { crashAt: 'kv', kind: 'oom' } }),
    );
    proc = spawn(
      process.execPath,
      [
        path.join(SIM_DIR, 'main.js'),
        '--model-path',
        path.join(dir, 'model'),
        '--tp',
        '8',
        '--port',
        String(await freePort()),
      ],
      { env: { ...process.env, KIMI_SIM_ROOT: dir } },
    );
    let err = '';
    proc.stderr!.on('data', (d) => {
      err += d;
    });
    const [code] = await new Promise<[number | null, string | null]>((resolve) =>
      proc!.on('exit', (c, s) => resolve([c, s])),
    );
    assert.equal(code, 1);
    assert.match(err, /torch\.OutOfMemoryError: CUDA out of memory/);
    assert.match(err, /Received sigquit from a child process/);
    assert.ok(!err.includes('KV Cache is allocated'));
  });
});
