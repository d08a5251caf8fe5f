import * as assert from 'node:assert/strict';
import { verificationVerdictOf, verifyParsers, type VerifierDeps } from '../../src/verify/verifier';
import { formatTable, summarize } from '../../src/present/verifyReport';
import { waitFor } from '../util/waitFor';
import { ALL_CHECKS } from '../util/checkNames';

const MODEL = '/root/models/Kimi-K2.6';
const SECTION =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';

interface Reply {
  reasoning: string | null;
  content: string;
  toolCalls?: { name: string; arguments: string }[];
  finish: string;
}

interface FakeOptions {
  /** Reasoning tokens the model spends before answering: a smaller max_tokens ends with "length". */
  reasoningTokens?: number;
  /** Each chat answer waits for this (a tick of the test's virtual clock, see Ticks). */
  answerWhen?: () => Promise<void>;
  serverInfo?: Record<string, unknown>;
}

/**
 * A virtual clock for the fake's answers: each chat request waits for the next tick, and a tick
 * answers every request in flight then. `run` ticks until the verification ends, once no more
 * requests start (the event loop settled), and counts the ticks: rounds of requests at once.
 */
class Ticks {
  private waiting: (() => void)[] = [];
  readonly wait = (): Promise<void> => new Promise<void>((resolve) => this.waiting.push(resolve));

  async run(verification: Promise<unknown>): Promise<number> {
    let ended = false;
    void verification.finally(() => (ended = true)).catch(() => undefined);
    for (let ticks = 0; ; ticks++) {
      await this.settled();
      if (ended) return ticks;
      assert.ok(this.waiting.length > 0, 'the verification neither ended nor has a request in flight');
      const answered = this.waiting;
      this.waiting = [];
      for (const answer of answered) answer();
    }
  }

  /** Turns of the event loop until three in a row start no request. */
  private async settled(): Promise<void> {
    let seen = -1;
    for (let same = 0; same < 3; ) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.waiting.length === seen) same++;
      else [seen, same] = [this.waiting.length, 0];
    }
  }
}

/** A fake SGLang: `parsers` decides the shapes, like the simulator does. */
function fakeServer(parsers: 'on' | 'off', overrides: Partial<VerifierDeps> = {}, options: FakeOptions = {}) {
  const requests: { path: string; body?: Record<string, unknown> }[] = [];
  let inFlight = 0;
  const stats = { maxInFlight: 0 };
  const reply = (body: Record<string, unknown>): Reply => {
    const thinkingOff = (body.chat_template_kwargs as { thinking?: boolean } | undefined)?.thinking === false;
    const messages = body.messages as { role: string; content?: string }[];
    const last = messages[messages.length - 1];
    if (
      !thinkingOff &&
      options.reasoningTokens !== undefined &&
      (body.max_tokens as number) < options.reasoningTokens
    ) {
      return {
        reasoning: parsers === 'on' ? 'Let me think. '.repeat(50) : null,
        content: parsers === 'on' ? '' : 'Let me think. ',
        finish: 'length',
      };
    }
    if (body.tools && last.role === 'tool') {
      return parsers === 'on'
        ? {
            reasoning: 'The tool says 18 and light rain.',
            content: 'It is 18 °C with light rain in Paris.',
            finish: 'stop',
          }
        : { reasoning: null, content: 'The tool says 18.</think>It is 18 °C in Paris.', finish: 'stop' };
    }
    if (body.tools) {
      const cities = /Tokyo/.test(last.content ?? '') ? ['Paris', 'Tokyo'] : ['Paris'];
      return parsers === 'on'
        ? {
            reasoning: 'Need the weather.',
            content: '',
            toolCalls: cities.map((c) => ({ name: 'get_weather', arguments: JSON.stringify({ city: c }) })),
            finish: 'tool_calls',
          }
        : { reasoning: null, content: `Need the weather.</think>${SECTION}`, finish: 'stop' };
    }
    if (thinkingOff) return { reasoning: null, content: '391', finish: 'stop' };
    return parsers === 'on'
      ? { reasoning: '17*23=391', content: '391', finish: 'stop' }
      : { reasoning: null, content: '17*23=391</think>391', finish: 'stop' };
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
            tool_calls: r.toolCalls
              ? r.toolCalls.map((t, i) => ({ id: `functions.${t.name}:${i}`, index: i, type: 'function', function: t }))
              : null,
          },
        },
      ],
    });
  const sse = (r: Reply): string => {
    const deltas: Record<string, unknown>[] = [{ role: 'assistant', content: '' }];
    if (r.reasoning) deltas.push({ reasoning_content: r.reasoning });
    if (r.content) deltas.push({ content: r.content });
    for (const [i, t] of (r.toolCalls ?? []).entries()) {
      deltas.push({
        tool_calls: [
          { index: i, id: `functions.${t.name}:${i}`, type: 'function', function: { name: t.name, arguments: '' } },
        ],
      });
      deltas.push({ tool_calls: [{ index: i, function: { arguments: t.arguments } }] });
    }
    const chunks: Record<string, unknown>[] = deltas.map((d) => ({
      choices: [{ index: 0, delta: d, finish_reason: null }],
    }));
    chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: r.finish }] });
    return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
  };
  const deps: VerifierDeps = {
    timeoutMs: 1000,
    getJson: async (path) => {
      requests.push({ path });
      if (path === '/v1/models')
        return {
          status: 200,
          body: {
            object: 'list',
            data: [{ id: MODEL, object: 'model', owned_by: 'sglang', root: MODEL, max_model_len: 262144 }],
          },
        };
      if (path === '/server_info') {
        const p = parsers === 'on' ? 'kimi_k2' : null;
        return {
          status: 200,
          body: {
            model_path: MODEL,
            served_model_name: MODEL,
            tp_size: 8,
            reasoning_parser: p,
            tool_call_parser: p,
            status: 'ready',
            version: '0.5.6',
            ...options.serverInfo,
          },
        };
      }
      return { status: 404, body: { detail: 'Not Found' } };
    },
    postJson: async (path, body, o) => {
      const b = body as Record<string, unknown>;
      requests.push({ path, body: b });
      assert.equal(o?.stream ?? false, b.stream === true);
      inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
      try {
        if (options.answerWhen) await options.answerWhen();
        const r = reply(b);
        return { status: 200, body: b.stream === true ? sse(r) : nonStream(r) };
      } finally {
        inFlight--;
      }
    },
    ...overrides,
  };
  return { deps, requests, stats };
}

const expected = { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' };

describe('verifier: verifyParsers', () => {
  it('parsers on: every check passes, in order, with the model from /v1/models and the budgets from its max_model_len', async () => {
    const { deps, requests } = fakeServer('on');
    const result = await verifyParsers(deps, expected);
    assert.deepEqual(
      result.checks.map((c) => [c.name, c.status]),
      ALL_CHECKS.map((n) => [n, 'pass']),
      formatTable(result),
    );
    assert.equal(result.allPassed, true);
    assert.equal(result.model, MODEL);
    assert.equal(summarize(result), 'Parsers verified for agents (16 checks)');
    assert.equal(verificationVerdictOf(result), 'verified');
    assert.deepEqual(
      { first: result.budgets?.first, retry: result.budgets?.retry, source: result.budgets?.source },
      { first: 2048, retry: 8192, source: '/v1/models max_model_len' },
    );
    const posts = requests.filter((r) => r.body);
    assert.equal(posts.length, 14, 'one request per chat check, no retries');
    assert.ok(posts.every((r) => r.body?.model === MODEL));
    assert.ok(posts.every((r) => r.body?.max_tokens === (r.body?.chat_template_kwargs ? 256 : 2048)));
    assert.deepEqual(
      posts.filter((r) => r.body?.chat_template_kwargs).map((r) => r.body?.chat_template_kwargs),
      [{ thinking: false }],
    );
    // The round trip sends the call back with its id, then the tool's result under that id.
    const second = posts.find(
      (r) => (r.body?.messages as { role: string }[]).some((m) => m.role === 'tool') && r.body?.stream === false,
    );
    const messages = second?.body?.messages as Record<string, unknown>[];
    assert.deepEqual(
      messages.map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    assert.deepEqual(messages[1].tool_calls, [
      {
        id: 'functions.get_weather:0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
    assert.equal(messages[1].reasoning_content, 'Need the weather.');
    assert.equal(messages[1].reasoning, 'Need the weather.', "vLLM's newer name too");
    assert.equal(messages[2].tool_call_id, 'functions.get_weather:0');
    // The multi-step history: an earlier finished turn (no reasoning sent, as Kimi's template drops it), then the chain.
    const carried = posts.find((r) => (r.body?.messages as unknown[]).length === 5);
    const history = carried?.body?.messages as Record<string, unknown>[];
    assert.deepEqual(
      history.map((m) => [m.role, m.reasoning_content]),
      [
        ['user', undefined],
        ['assistant', undefined],
        ['user', undefined],
        ['assistant', 'Need the weather.'],
        ['tool', undefined],
      ],
    );
    assert.equal(carried?.body?.stream, true);
    const named = posts.find((r) => typeof r.body?.tool_choice === 'object');
    assert.deepEqual(named?.body?.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.ok(posts.some((r) => r.body?.tool_choice === 'required'));
  });

  it('parsers off: every check that needs a parser fails, with what agents suffer and the request', async () => {
    const { deps } = fakeServer('off');
    const result = await verifyParsers(deps, expected);
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));
    assert.equal(byName['server flags'].status, 'fail');
    assert.match(byName['reasoning'].evidence, /content has <\/think>/);
    assert.match(byName['reasoning'].consequence ?? '', /agents treat the reasoning as the reply/);
    assert.match(
      byName['reasoning'].request ?? '',
      /^POST \/v1\/chat\/completions: user "What is 17 \* 23\?.*"; max_tokens 2048$/,
    );
    assert.match(byName['tool calling (stream)'].evidence, /raw tool-call tokens in content/);
    assert.match(byName['tool calling (stream)'].request ?? '', /, stream$/);
    assert.equal(byName['thinking off'].status, 'pass');
    assert.equal(byName['thinking off'].consequence, undefined, 'a passing check has no consequence');
    assert.equal(byName['tool round trip'].status, 'skipped');
    assert.equal(byName['tool-call ids'].status, 'skipped');
    assert.equal(result.allPassed, false);
    assert.equal(
      summarize(result),
      'Parser check failed: server flags, reasoning, reasoning (stream), tool calling, tool calling (stream), parallel tool calls, parallel tool calls (stream), tool_choice required, tool_choice required (stream), named tool choice, named tool choice (stream) (skipped: tool round trip, tool round trip (stream), reasoning carried through tool calls, tool-call ids)',
    );
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
    assert.deepEqual([...paths].sort(), ['/get_server_info', '/server_info', '/v1/models']);
    assert.ok(paths.indexOf('/server_info') < paths.indexOf('/get_server_info'));
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
        const first = (b.messages as unknown[]).length === 1 && b.tool_choice === undefined && !b.parallel_tool_calls;
        if (b.tools && first && b.stream !== true) {
          // The simulated slow server: it answers only once the verifier has given up on it (its timeout).
          const signal = options?.signal;
          await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
          signalAborted = signal?.aborted;
          slowEnded = true;
        }
        if (b.tools && first && b.stream === true) throw new Error('socket hang up');
        return base.deps.postJson(path, body, options);
      },
    };
    const result = await verifyParsers(deps, expected);
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));
    assert.equal(byName['tool calling'].status, 'skipped');
    assert.match(byName['tool calling'].evidence, /POST \/v1\/chat\/completions: no answer within 0.1 s/);
    assert.equal(byName['tool calling (stream)'].status, 'skipped');
    assert.match(byName['tool calling (stream)'].evidence, /request failed: socket hang up/);
    assert.equal(byName['tool round trip'].status, 'skipped');
    assert.match(byName['tool round trip'].evidence, /needs the call of "tool calling" \(skipped\)/);
    assert.equal(byName['reasoning (stream)'].status, 'pass');
    assert.equal(byName['parallel tool calls'].status, 'pass');
    assert.equal(result.allPassed, false);
    assert.equal(
      summarize(result),
      'Parser check incomplete, skipped: tool calling, tool calling (stream), tool round trip, tool round trip (stream), reasoning carried through tool calls',
    );
    // The verifier gave up on the slow request without waiting for it: wait for its late end.
    await waitFor(() => slowEnded, { timeoutMs: 5000, message: 'the slow request to end' });
    assert.equal(signalAborted, true);
  });

  it('no model name: chat checks skipped, server flags still checked; 503 is skipped, 400 fails', async () => {
    const base = fakeServer('on');
    const noModels: VerifierDeps = {
      ...base.deps,
      getJson: async (path, o) =>
        path === '/v1/models' ? Promise.reject(new Error('ECONNREFUSED')) : base.deps.getJson(path, o),
    };
    const r1 = await verifyParsers(noModels, expected);
    assert.equal(r1.checks[0].status, 'pass');
    const chats = r1.checks.slice(1, -1);
    assert.ok(
      chats.every(
        (c) =>
          c.status === 'skipped' && /no model name: GET \/v1\/models: request failed: ECONNREFUSED/.test(c.evidence),
      ),
      formatTable(r1),
    );
    assert.equal(r1.budgets, undefined);

    const statuses: VerifierDeps = {
      ...base.deps,
      postJson: async (_p, body) =>
        (body as { stream?: boolean }).stream
          ? { status: 503, body: '' }
          : {
              status: 400,
              body: '{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}',
            },
    };
    const r2 = await verifyParsers(statuses, expected);
    const byName = Object.fromEntries(r2.checks.map((c) => [c.name, c]));
    assert.equal(byName['reasoning'].status, 'fail');
    assert.match(byName['reasoning'].evidence, /^HTTP 400: .*"message":"bad"/);
    assert.equal(byName['reasoning (stream)'].status, 'skipped');
    assert.equal(byName['tool round trip'].status, 'skipped', 'no call to answer');
  });

  it('an answer cut by max_tokens is retried at the bigger budget, and passes there', async () => {
    const { deps, requests } = fakeServer('on', {}, { reasoningTokens: 4000 });
    const result = await verifyParsers(deps, expected);
    assert.equal(result.allPassed, true, formatTable(result));
    assert.match(result.checks[1].evidence, /^at 8192 tokens \(2048 cut the answer\): reasoning_content/);
    const budgets = requests.filter((r) => r.body && !r.body.chat_template_kwargs).map((r) => r.body?.max_tokens);
    assert.deepEqual([...new Set(budgets)].sort(), [2048, 8192]);
    assert.equal(budgets.length, 26, 'each of the 13 thinking requests twice');
  });

  it('cut at every budget: inconclusive naming the budget, never a parser failure; the summary says so', async () => {
    const { deps } = fakeServer('on', {}, { reasoningTokens: 1_000_000 });
    const result = await verifyParsers(deps, expected);
    const byName = Object.fromEntries(result.checks.map((c) => [c.name, c]));
    assert.equal(byName['reasoning'].status, 'inconclusive');
    assert.match(
      byName['reasoning'].evidence,
      /^inconclusive: the reasoning used the whole budget of 8192 tokens \(finish_reason "length", first 2048, then 8192\)/,
    );
    assert.match(byName['reasoning'].request ?? '', /max_tokens 8192$/);
    assert.equal(byName['tool round trip'].status, 'inconclusive');
    assert.equal(byName['thinking off'].status, 'pass');
    assert.equal(byName['tool-call ids'].status, 'skipped');
    assert.ok(!result.checks.some((c) => c.status === 'fail'));
    assert.equal(verificationVerdictOf(result), 'inconclusive');
    assert.match(
      summarize(result),
      /^Parser check inconclusive \(answers cut at 8192 tokens, a budget problem, not the parsers\): reasoning, reasoning \(stream\), tool calling, /,
    );
  });

  it('a small context: smaller budgets, and no retry when there is no room', async () => {
    const { deps, requests } = fakeServer('on', {}, { serverInfo: { context_length: 2048 }, reasoningTokens: 900 });
    const result = await verifyParsers(deps, expected);
    assert.deepEqual({ first: result.budgets?.first, retry: result.budgets?.retry }, { first: 512, retry: 1024 });
    assert.equal(result.budgets?.source, '/server_info context_length');
    assert.equal(result.allPassed, true, formatTable(result));
    assert.ok(requests.every((r) => !r.body || (r.body.max_tokens as number) <= 1024));
    const tiny = fakeServer('on', {}, { serverInfo: { context_length: 1100 }, reasoningTokens: 900 });
    const r2 = await verifyParsers(tiny.deps, expected);
    assert.deepEqual({ first: r2.budgets?.first, retry: r2.budgets?.retry }, { first: 38, retry: 76 });
    assert.match(
      r2.checks[1].evidence,
      /^inconclusive: the reasoning used the whole budget of 76 tokens \(finish_reason "length", first 38, then 76\)/,
    );
    const none = fakeServer('on', {}, { serverInfo: { context_length: 2 }, reasoningTokens: 900 });
    const r3 = await verifyParsers(none.deps, expected);
    assert.equal(r3.budgets?.retry, undefined);
    assert.match(
      r3.checks[1].evidence,
      /^inconclusive: the reasoning used the whole budget of 1 tokens \(finish_reason "length"; the context leaves no room for more\)/,
    );
  });

  it('an answer longer than the client reads is inconclusive, not a parser failure', async () => {
    const base = fakeServer('on');
    const deps: VerifierDeps = {
      ...base.deps,
      postJson: async (path, body, o) => {
        const r = await base.deps.postJson(path, body, o);
        return (body as { stream?: boolean }).stream ? { ...r, body: r.body.slice(0, 40), truncated: true } : r;
      },
    };
    const result = await verifyParsers(deps, expected);
    const c = result.checks.find((x) => x.name === 'reasoning (stream)')!;
    assert.equal(c.status, 'inconclusive');
    assert.equal(c.evidence, 'inconclusive: the answer is longer than the client reads (40 bytes read)');
    assert.equal(result.checks.find((x) => x.name === 'reasoning')!.status, 'pass');
  });

  it('requests run concurrently, at most 8 at once, fewer when the server allows fewer', async () => {
    const ticks = new Ticks();
    const a = fakeServer('on', {}, { answerWhen: ticks.wait });
    await ticks.run(verifyParsers(a.deps, expected));
    assert.equal(a.stats.maxInFlight, 8);
    const b = fakeServer('on', {}, { answerWhen: ticks.wait, serverInfo: { max_running_requests: 3 } });
    await ticks.run(verifyParsers(b.deps, expected));
    assert.equal(b.stats.maxInFlight, 3);
    const c = fakeServer('on', { concurrency: 1 }, { answerWhen: ticks.wait });
    const verification = verifyParsers(c.deps, expected);
    await ticks.run(verification);
    assert.equal(c.stats.maxInFlight, 1);
    assert.equal((await verification).allPassed, true);
  });
});

describe('verifier: how long it takes', () => {
  it('every answer as long as its whole budget: the 14 requests end in two rounds (2 × 10.2 s at 200 token/s, under 30 s)', async () => {
    // One tick of the virtual clock stands for 2048 tokens at 200 token/s (10.24 s): a round of requests at once.
    const ticks = new Ticks();
    const { deps, requests } = fakeServer('on', {}, { answerWhen: ticks.wait });
    const verification = verifyParsers(deps, expected);
    assert.equal(await ticks.run(verification), 2);
    assert.equal((await verification).allPassed, true);
    assert.equal(requests.filter((r) => r.path === '/v1/chat/completions').length, 14);
  });
});

describe('verifier: formatTable', () => {
  it('prints a fixed-width table; under a check that did not pass, what agents suffer and the request', () => {
    const table = formatTable({
      allPassed: false,
      model: MODEL,
      budgets: {
        first: 2048,
        retry: 8192,
        thinkingOff: 256,
        contextLength: 262144,
        source: '/server_info context_length',
      },
      checks: [
        { name: 'server flags', status: 'pass', evidence: 'reasoning_parser="kimi_k2" tool_call_parser="kimi_k2"' },
        {
          name: 'tool calling (stream)',
          status: 'fail',
          evidence: 'x'.repeat(300),
          consequence: 'agents get no tool call',
          request: 'POST /v1/chat/completions: user "hi"; max_tokens 2048, stream',
        },
        {
          name: 'reasoning',
          status: 'inconclusive',
          evidence: 'inconclusive: the reasoning used the whole budget of 8192 tokens',
          consequence: 'c',
        },
      ],
    });
    const lines = table.split('\n');
    assert.equal(lines[0], 'check                  result        evidence');
    assert.equal(
      lines[2],
      'server flags           pass          reasoning_parser="kimi_k2" tool_call_parser="kimi_k2"',
    );
    assert.ok(lines[3].startsWith('tool calling (stream)  fail          xxx'));
    assert.ok(lines[3].length <= 23 + 14 + 120);
    assert.equal(lines[4], `${' '.repeat(37)}for agents: agents get no tool call`);
    assert.equal(lines[5], `${' '.repeat(37)}request: POST /v1/chat/completions: user "hi"; max_tokens 2048, stream`);
    assert.equal(
      lines[6],
      'reasoning              inconclusive  inconclusive: the reasoning used the whole budget of 8192 tokens',
    );
    assert.equal(
      lines[8],
      'budgets: 2048 tokens per answer, 8192 on retry of a cut answer, 256 with thinking off; context length 262144 from /server_info context_length',
    );
    assert.equal(lines[9], `model: ${MODEL}`);
  });
});
