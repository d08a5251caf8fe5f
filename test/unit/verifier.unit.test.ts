import * as assert from 'node:assert/strict';
import { formatTable, summarize, verifyParsers, type VerifierDeps } from '../../src/verify/verifier';
import { sleep, waitFor } from '../util/waitFor';

const MODEL = '/root/models/Kimi-K2.6';
const SECTION =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';

interface Reply {
  reasoning: string | null;
  content: string;
  toolCalls?: { name: string; arguments: string }[];
  finish: string;
}

/** A fake SGLang: `parsers` decides the shapes, like the simulator does. */
function fakeServer(parsers: 'on' | 'off', overrides: Partial<VerifierDeps> = {}) {
  const requests: { path: string; body?: Record<string, unknown> }[] = [];
  const reply = (body: Record<string, unknown>): Reply => {
    const thinkingOff = (body.chat_template_kwargs as { thinking?: boolean } | undefined)?.thinking === false;
    if (body.tools) {
      return parsers === 'on'
        ? { reasoning: 'Need the weather.', content: '', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }], finish: 'tool_calls' }
        : { reasoning: null, content: `Need the weather.</think>${SECTION}`, finish: 'stop' };
    }
    if (thinkingOff) return { reasoning: null, content: '391', finish: 'stop' };
    return parsers === 'on' ? { reasoning: '17*23=391', content: '391', finish: 'stop' } : { reasoning: null, content: '17*23=391</think>391', finish: 'stop' };
  };
  const nonStream = (r: Reply): string =>
    JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      model: MODEL,
      choices: [
        {
          index: 0,
          finish_reason: r.finish,
          matched_stop: null,
          message: {
            role: 'assistant',
            content: r.content,
            reasoning_content: r.reasoning,
            tool_calls: r.toolCalls ? r.toolCalls.map((t, i) => ({ id: `functions.${t.name}:${i}`, index: i, type: 'function', function: t })) : null,
          },
        },
      ],
    });
  const sse = (r: Reply): string => {
    const deltas: Record<string, unknown>[] = [{ role: 'assistant', content: '' }];
    if (r.reasoning) deltas.push({ reasoning_content: r.reasoning });
    if (r.content) deltas.push({ content: r.content });
    for (const [i, t] of (r.toolCalls ?? []).entries()) {
      deltas.push({ tool_calls: [{ index: i, id: `functions.${t.name}:${i}`, type: 'function', function: { name: t.name, arguments: '' } }] });
      deltas.push({ tool_calls: [{ index: i, function: { arguments: t.arguments } }] });
    }
    const chunks: Record<string, unknown>[] = deltas.map((d) => ({ choices: [{ index: 0, delta: d, finish_reason: null }] }));
    chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: r.finish }] });
    return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
  };
  const deps: VerifierDeps = {
    timeoutMs: 200,
    getJson: async (path) => {
      requests.push({ path });
      if (path === '/v1/models') return { status: 200, body: { object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'sglang', root: MODEL, max_model_len: 262144 }] } };
      if (path === '/server_info') {
        const p = parsers === 'on' ? 'kimi_k2' : null;
        return { status: 200, body: { model_path: MODEL, served_model_name: MODEL, tp_size: 8, reasoning_parser: p, tool_call_parser: p, status: 'ready', version: '0.5.6' } };
      }
      return { status: 404, body: { detail: 'Not Found' } };
    },
    postJson: async (path, body, options) => {
      const b = body as Record<string, unknown>;
      requests.push({ path, body: b });
      assert.equal(options?.stream ?? false, b.stream === true);
      const r = reply(b);
      return { status: 200, body: b.stream === true ? sse(r) : nonStream(r) };
    },
    ...overrides,
  };
  return { deps, requests };
}

const expected = { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' };

describe('verifier: verifyParsers', () => {
  it('parsers on: every check passes, in order, with the model from /v1/models', async () => {
    const { deps, requests } = fakeServer('on');
    const result = await verifyParsers(deps, expected);
    assert.deepEqual(
      result.checks.map((c) => [c.name, c.status]),
      [
        ['server flags', 'pass'],
        ['reasoning', 'pass'],
        ['thinking off', 'pass'],
        ['tool calling', 'pass'],
        ['reasoning (stream)', 'pass'],
        ['tool calling (stream)', 'pass'],
      ],
      JSON.stringify(result, null, 1),
    );
    assert.equal(result.allPassed, true);
    assert.equal(result.model, MODEL);
    assert.equal(summarize(result), 'Parsers verified');
    const posts = requests.filter((r) => r.body);
    assert.ok(posts.every((r) => r.body?.model === MODEL));
    assert.deepEqual(posts[1].body?.chat_template_kwargs, { thinking: false });
    assert.equal(requests[0].path, '/v1/models');
  });

  it('parsers off: reasoning and tool calling fail (both modes), thinking off passes', async () => {
    const { deps } = fakeServer('off');
    const result = await verifyParsers(deps, expected);
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));
    assert.equal(byName['server flags'].status, 'fail');
    assert.match(byName['reasoning'].evidence, /content has <\/think>/);
    assert.match(byName['tool calling (stream)'].evidence, /raw tool-call tokens in content/);
    assert.equal(byName['thinking off'].status, 'pass');
    assert.equal(result.allPassed, false);
    assert.equal(summarize(result), 'Parser check failed: server flags, reasoning, tool calling, reasoning (stream), tool calling (stream)');
  });

  it('falls back to /get_server_info on 404', async () => {
    const base = fakeServer('on');
    const paths: string[] = [];
    const deps: VerifierDeps = {
      ...base.deps,
      getJson: async (path, o) => {
        paths.push(path);
        if (path === '/server_info') return { status: 404, body: '{"detail":"Not Found"}' };
        return base.deps.getJson(path === '/get_server_info' ? '/server_info' : path, o);
      },
    };
    const result = await verifyParsers(deps, expected);
    assert.deepEqual(paths, ['/v1/models', '/server_info', '/get_server_info']);
    assert.equal(result.checks[0].status, 'pass');
  });

  it('a slow answer or a network error is skipped with the reason, the other checks still run', async () => {
    const base = fakeServer('on');
    let signalAborted: boolean | undefined;
    let slowEnded = false;
    const deps: VerifierDeps = {
      ...base.deps,
      timeoutMs: 50,
      postJson: async (path, body, options) => {
        const b = body as Record<string, unknown>;
        if (b.tools && b.stream !== true) {
          // The simulated slow server: it answers 150 ms late, well after the 50 ms timeout.
          await sleep(150);
          signalAborted = options?.signal?.aborted;
          slowEnded = true;
        }
        if (b.tools && b.stream === true) throw new Error('socket hang up');
        return base.deps.postJson(path, body, options);
      },
    };
    const result = await verifyParsers(deps, expected);
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));
    assert.equal(byName['tool calling'].status, 'skipped');
    assert.match(byName['tool calling'].evidence, /POST \/v1\/chat\/completions: no answer within 0.1 s/);
    assert.equal(byName['tool calling (stream)'].status, 'skipped');
    assert.match(byName['tool calling (stream)'].evidence, /request failed: socket hang up/);
    assert.equal(byName['reasoning (stream)'].status, 'pass');
    assert.equal(result.allPassed, false);
    assert.equal(summarize(result), 'Parser check incomplete, skipped: tool calling, tool calling (stream)');
    // The verifier gave up on the slow request without waiting for it: wait for its late end.
    await waitFor(() => slowEnded, { timeoutMs: 5000, message: 'the slow request to end' });
    assert.equal(signalAborted, true);
  });

  it('no model name: chat checks skipped, server flags still checked; 503 is skipped, 400 fails', async () => {
    const base = fakeServer('on');
    const noModels: VerifierDeps = {
      ...base.deps,
      getJson: async (path, o) => (path === '/v1/models' ? Promise.reject(new Error('ECONNREFUSED')) : base.deps.getJson(path, o)),
    };
    const r1 = await verifyParsers(noModels, expected);
    assert.equal(r1.checks[0].status, 'pass');
    assert.ok(r1.checks.slice(1).every((c) => c.status === 'skipped' && /no model name: GET \/v1\/models: request failed: ECONNREFUSED/.test(c.evidence)));

    const statuses: VerifierDeps = {
      ...base.deps,
      postJson: async (_p, body) =>
        (body as { stream?: boolean }).stream
          ? { status: 503, body: '' }
          : { status: 400, body: '{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}' },
    };
    const r2 = await verifyParsers(statuses, expected);
    assert.deepEqual(r2.checks.map((c) => c.status), ['pass', 'fail', 'fail', 'fail', 'skipped', 'skipped']);
    assert.match(r2.checks[1].evidence, /^HTTP 400: .*"message":"bad"/);
  });
});

describe('verifier: formatTable', () => {
  it('prints a fixed-width table', () => {
    const table = formatTable({
      allPassed: false,
      model: MODEL,
      checks: [
        { name: 'server flags', status: 'pass', evidence: 'reasoning_parser="kimi_k2" tool_call_parser="kimi_k2"' },
        { name: 'tool calling (stream)', status: 'fail', evidence: 'x'.repeat(300) },
      ],
    });
    const lines = table.split('\n');
    assert.equal(lines[0], 'check                  result   evidence');
    assert.equal(lines[2], 'server flags           pass     reasoning_parser="kimi_k2" tool_call_parser="kimi_k2"');
    assert.ok(lines[3].startsWith('tool calling (stream)  fail     xxx'));
    assert.ok(lines[3].length <= 23 + 9 + 120);
    assert.equal(lines[4], `model: ${MODEL}`);
  });
});
