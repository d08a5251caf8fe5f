import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  finishReasonOf,
  idFormatOf,
  judgeParallelCalls,
  judgeCarriedReasoning,
  judgeRoundTrip,
  judgeToolIds,
  toolCallsOf,
} from '../../src/verify/agentJudges';
import { chooseBudgets, contextLengthOf } from '../../src/verify/budget';
import { budgetWords } from '../../src/present/words/verifyProgressWords';
import {
  carriedReasoningRequest,
  CHECKS,
  CHECK_PROMPTS,
  roundTripRequest,
  TOOL_RESULT_WORDS,
  WEATHER_TOOL,
} from '../../src/verify/checks';
import { judgeReasoning, judgeThinkingOff, judgeToolCall } from '../../src/verify/judges';
import { Limiter } from '../../src/verify/limiter';
import { readySummary, summarize } from '../../src/present/verifyReport';
import { verificationVerdictOf } from '../../src/verify/verdict';
import type { CheckResult } from '../../src/verify/verifier';
import { sleep } from '../util/waitFor';
import { ev } from '../util/evidence';
import { checkWords } from '../../src/present/words/checkWords';

const K2 = {
  begin: '<|tool_calls_section_begin|>',
  call: '<|tool_call_begin|>',
  arg: '<|tool_call_argument_begin|>',
  end: '<|tool_call_end|>',
  sectionEnd: '<|tool_calls_section_end|>',
};

function completion(message: Record<string, unknown>, finish_reason: string | null = 'stop'): unknown {
  return {
    id: 'x',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', tool_calls: null, ...message }, finish_reason }],
  };
}

const call = (city: string, i: number, id = `functions.get_weather:${i}`) => ({
  id,
  index: i,
  type: 'function',
  function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
});

describe('agent judges: the turn after a tool result', () => {
  it('an answer that uses the result, reasoning separated: pass', () => {
    const j = judgeRoundTrip(
      completion({ content: 'It is 18 °C with light rain in Paris.', reasoning_content: 'The tool says 18 and rain.' }),
      TOOL_RESULT_WORDS,
    );
    assert.equal(j.status, 'pass', ev(j));
    assert.match(ev(j), /^reasoning_content \(26 chars\) separated; content: "It is 18/);
    assert.match(
      ev(judgeRoundTrip(completion({ content: 'Light rain, 18 °C.', reasoning_content: null }), TOOL_RESULT_WORDS)),
      /^no reasoning on this turn/,
    );
  });

  it('reasoning and </think> in content after the tool message (dynamo#11653): fail, the leak quoted', () => {
    const j = judgeRoundTrip(
      completion({ content: 'The tool returned 18.</think>It is 18 °C in Paris.', reasoning_content: null }),
      TOOL_RESULT_WORDS,
    );
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /^reasoning leaked into content after the tool result \(<\/think> in content\); reasoning_content null \| content ".*18\.<\/think>It is/,
    );
  });

  it('an empty follow-up (sglang#25358, Kimi-K2#128): fail, naming finish_reason', () => {
    const j = judgeRoundTrip(
      completion({ content: '', reasoning_content: 'The tool returned a result.' }),
      TOOL_RESULT_WORDS,
    );
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /^the follow-up turn came back empty: finish_reason "stop", no content, no tool calls; reasoning_content "The tool/,
    );
  });

  it('a new call instead of an answer, raw markup, an answer that ignores the result, an error body: fail', () => {
    assert.match(
      ev(judgeRoundTrip(completion({ content: '', tool_calls: [call('Paris', 1)] }, 'tool_calls'), TOOL_RESULT_WORDS)),
      /^called a tool again instead of answering: get_weather/,
    );
    assert.match(
      ev(
        judgeRoundTrip(
          completion({ content: `${K2.begin}${K2.call}functions.get_weather:1${K2.arg}{}${K2.end}${K2.sectionEnd}` }),
          TOOL_RESULT_WORDS,
        ),
      ),
      /^raw tool-call tokens in content/,
    );
    assert.match(
      ev(judgeRoundTrip(completion({ content: 'I cannot tell.' }), TOOL_RESULT_WORDS)),
      /^the answer does not use the tool's result \(none of "18", "rain"\)/,
    );
    assert.match(
      ev(judgeRoundTrip({ object: 'error', message: 'bad', code: 400 }, TOOL_RESULT_WORDS)),
      /^error 400: bad/,
    );
  });
});

describe('agent judges: two calls in one answer', () => {
  const cities = ['Paris', 'Tokyo'];

  it('a call per city, own ids: pass', () => {
    const j = judgeParallelCalls(
      completion({ content: '', tool_calls: [call('Paris', 0), call('Tokyo', 1)] }, 'tool_calls'),
      WEATHER_TOOL,
      cities,
    );
    assert.equal(j.status, 'pass', ev(j));
    assert.equal(
      ev(j),
      'get_weather({"city":"Paris"}) id=functions.get_weather:0, get_weather({"city":"Tokyo"}) id=functions.get_weather:1',
    );
  });

  it('merged into one, the first swallowed into the id (vllm#24478): fail, both named', () => {
    const merged = {
      ...call('Tokyo', 0),
      id: `functions.get_weather:0${K2.arg}{"city":"Paris"}${K2.end}${K2.call}functions.get_weather:1`,
    };
    const j = judgeParallelCalls(completion({ content: '', tool_calls: [merged] }, 'tool_calls'), WEATHER_TOOL, cities);
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /^1 tool call for 2 cities \(Paris, Tokyo\), finish_reason "tool_calls"; a call swallowed into the id of another: id "functions\.get_weather:0<\|tool_call_argument_begin\|>/,
    );
  });

  it('one call only, a shared id, a missing city, bad arguments, raw markup: fail', () => {
    assert.match(
      ev(judgeParallelCalls(completion({ tool_calls: [call('Paris', 0)] }, 'tool_calls'), WEATHER_TOOL, cities)),
      /^1 tool call for 2 cities.*no call for Tokyo/,
    );
    assert.match(
      ev(
        judgeParallelCalls(
          completion({ tool_calls: [call('Paris', 0, 'a'), call('Tokyo', 1, 'a')] }, 'tool_calls'),
          WEATHER_TOOL,
          cities,
        ),
      ),
      /^two calls share an id: \["a","a"\]/,
    );
    assert.match(
      ev(
        judgeParallelCalls(
          completion({ tool_calls: [call('Paris', 0), call('Paris', 1)] }, 'tool_calls'),
          WEATHER_TOOL,
          cities,
        ),
      ),
      /^no call for Tokyo/,
    );
    const bad = { ...call('Tokyo', 1), function: { name: 'get_weather', arguments: '{"town":"Tokyo"}' } };
    assert.match(
      ev(judgeParallelCalls(completion({ tool_calls: [call('Paris', 0), bad] }, 'tool_calls'), WEATHER_TOOL, cities)),
      /tool_calls\[1\]: arguments do not match the schema/,
    );
    assert.match(
      ev(judgeParallelCalls(completion({ content: `${K2.begin}x` }), WEATHER_TOOL, cities)),
      /^0 tool calls for 2 cities.*raw tool-call tokens in content/,
    );
    assert.match(
      ev(
        judgeParallelCalls(
          completion({ tool_calls: [call('Paris', 0), call('Tokyo', 1)] }, 'stop'),
          WEATHER_TOOL,
          cities,
        ),
      ),
      /finish_reason "stop", expected "tool_calls"/,
    );
  });
});

describe('agent judges: tool-call ids', () => {
  it('functions.NAME:IDX for kimi_k2: pass; call_<hex> or another name: fail with the id', () => {
    const ok = judgeToolIds(
      [
        { from: 'tool calling', calls: [call('Paris', 0)] },
        { from: 'parallel tool calls', calls: [call('Paris', 0), call('Tokyo', 1)] },
      ],
      'kimi_k2',
    );
    assert.equal(ok.status, 'pass', ev(ok));
    assert.equal(
      ev(ok),
      'functions.NAME:IDX: tool calling: functions.get_weather:0; parallel tool calls: functions.get_weather:0, functions.get_weather:1',
    );
    const foreign = judgeToolIds([{ from: 'tool calling', calls: [call('Paris', 0, 'call_0a1b2c3d4e5f')] }], 'kimi_k2');
    assert.equal(foreign.status, 'fail');
    assert.equal(ev(foreign), 'tool calling: id "call_0a1b2c3d4e5f" is not functions.NAME:IDX');
    assert.match(
      ev(judgeToolIds([{ from: 'x', calls: [call('Paris', 0, 'functions.get_time:0')] }], 'kimi_k2')),
      /names another function than get_weather/,
    );
    assert.match(
      ev(judgeToolIds([{ from: 'x', calls: [call('Paris', 0, '')] }], 'kimi_k2')),
      /tool_calls\[0\] has no id/,
    );
  });

  it('another parser: any unique ids pass, repeated ones fail; no calls at all: skipped', () => {
    assert.equal(idFormatOf('qwen3_coder'), undefined);
    assert.equal(
      judgeToolIds([{ from: 'x', calls: [call('Paris', 0, 'call_1'), call('Tokyo', 1, 'call_2')] }], 'qwen3_coder')
        .status,
      'pass',
    );
    assert.match(
      ev(judgeToolIds([{ from: 'x', calls: [call('Paris', 0, 'c'), call('Tokyo', 1, 'c')] }], 'qwen3_coder')),
      /^x: ids repeat/,
    );
    assert.equal(judgeToolIds([{ from: 'x', calls: [] }], 'kimi_k2').status, 'skipped');
  });

  it('finish_reason and tool calls of an answer; none of an error body', () => {
    const resp = completion({ tool_calls: [call('Paris', 0)] }, 'length');
    assert.equal(finishReasonOf(resp), 'length');
    assert.equal(toolCallsOf(resp).length, 1);
    assert.equal(finishReasonOf({ object: 'error', message: 'x' }), undefined);
    assert.deepEqual(toolCallsOf({ object: 'error', message: 'x' }), []);
  });
});

describe('judges: forced tool choice and reasoning without an answer', () => {
  it('a forced choice may end with "stop"; auto may not', () => {
    const resp = completion({ content: '', tool_calls: [call('Paris', 0)] }, 'stop');
    assert.equal(judgeToolCall(resp, WEATHER_TOOL, { forced: true }).status, 'pass');
    assert.match(ev(judgeToolCall(resp, WEATHER_TOOL)), /finish_reason "stop", expected "tool_calls"/);
  });

  it('a call with the reasoning left in content is still a call: the "reasoning" check is the one that fails', () => {
    const j = judgeToolCall(
      completion(
        { content: 'I should call it.</think>', reasoning_content: null, tool_calls: [call('Paris', 0)] },
        'tool_calls',
      ),
      WEATHER_TOOL,
    );
    assert.equal(j.status, 'pass', ev(j));
    assert.match(
      ev(judgeReasoning(completion({ content: 'I should call it.</think>ok', reasoning_content: null }))),
      /content has <\/think>/,
    );
  });

  it('the end marker inside reasoning_content (the parser did not stop there): fail', () => {
    const j = judgeReasoning(completion({ content: '', reasoning_content: '17*23=391</think>391' }));
    assert.equal(j.status, 'fail');
    assert.match(ev(j), /^reasoning_content has <\/think>: the parser did not stop at the end of the reasoning/);
  });

  it('thinking off with nothing in content: fail', () => {
    assert.match(
      ev(judgeThinkingOff(completion({ content: '', reasoning_content: null }))),
      /^no answer: content empty, reasoning_content null, finish_reason "stop"/,
    );
  });

  it('reasoning with an empty content is no proof the parser found its end: fail', () => {
    const j = judgeReasoning(completion({ content: '', reasoning_content: 'thinking...' }, 'length'));
    assert.equal(j.status, 'fail');
    assert.match(ev(j), /^no answer after the reasoning: content empty, finish_reason "length"/);
  });
});

describe('checks: the table and the round-trip request', () => {
  it('every check names its request, what passes and what an agent suffers; streamed twins say so', () => {
    assert.equal(CHECKS.length, 16);
    assert.equal(new Set(CHECKS.map((c) => c.name)).size, 16);
    for (const c of CHECKS) {
      const w = checkWords(c.name, CHECK_PROMPTS);
      assert.ok(w.sent && w.passes && w.consequence, c.name);
      if (c.name.endsWith('(stream)')) {
        assert.match(w.consequence, /agents stream/);
        assert.match(w.sent, /, streamed \(SSE\)$/);
      }
    }
    assert.match(
      checkWords('tool-call ids', CHECK_PROMPTS).consequence,
      /^the follow-up turn may come back empty: agents stall after the first tool call/,
    );
    assert.equal(
      checkWords('reasoning', CHECK_PROMPTS).sent,
      '"What is 17 * 23? Think it through, then answer with the number only."',
    );
  });

  it('docs/verification.md lists every check with what an agent suffers, word for word', () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'verification.md'), 'utf8');
    for (const c of CHECKS.filter((x) => !x.name.endsWith('(stream)'))) {
      assert.ok(doc.includes(`| \`${c.name}\` |`), `no row for ${c.name}`);
      assert.ok(doc.includes(checkWords(c.name, CHECK_PROMPTS).consequence), `the consequence of ${c.name} differs`);
    }
  });

  it('sends back the call with its id and reasoning, then the result under that id; no call: says why', () => {
    const first = completion({ content: '', reasoning_content: 'r', tool_calls: [call('Paris', 0)] }, 'tool_calls');
    const body = roundTripRequest('m', first, true, 100) as Record<string, unknown>;
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 100);
    assert.deepEqual(body.messages, [
      { role: 'user', content: 'What is the weather in Paris right now? Use the get_weather tool.' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'functions.get_weather:0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
        reasoning_content: 'r',
        reasoning: 'r',
      },
      {
        role: 'tool',
        tool_call_id: 'functions.get_weather:0',
        content: '{"city":"Paris","temperature_c":18,"conditions":"light rain"}',
      },
    ]);
    assert.equal(roundTripRequest('m', completion({ content: 'no call' }), false), 'noToolCall');
  });

  it('reasoning carried through tool calls: an earlier finished turn without reasoning, then the chain with it; none to carry: says why', () => {
    const first = completion({ content: '', reasoning: 'vLLM says r', tool_calls: [call('Paris', 0)] }, 'tool_calls');
    const body = carriedReasoningRequest('m', first) as { messages: Record<string, unknown>[]; stream: boolean };
    assert.equal(body.stream, true);
    assert.deepEqual(
      body.messages.map((m) => [m.role, m.reasoning_content, m.reasoning]),
      [
        ['user', undefined, undefined],
        ['assistant', undefined, undefined],
        ['user', undefined, undefined],
        ['assistant', 'vLLM says r', 'vLLM says r'],
        ['tool', undefined, undefined],
      ],
    );
    assert.equal(
      carriedReasoningRequest('m', completion({ content: '', tool_calls: [call('Paris', 0)] }, 'tool_calls')),
      'noReasoning',
    );
    const leak = judgeCarriedReasoning(completion({ content: 'I will summarise.</think>According to the tool: 18' }), [
      '18',
    ]);
    assert.equal(leak.status, 'fail');
    assert.equal(leak.fault, 'reasoningInContent', 'a fault the chat model repairs');
    const ignored = judgeCarriedReasoning(completion({ content: 'I could not find that information.' }), [
      '18',
      'rain',
    ]);
    assert.match(ev(ignored), /^the answer does not use the tool's result/);
    assert.match(
      ev(judgeCarriedReasoning(completion({ content: '18 °C' }), ['18'])),
      /^history with the reasoning accepted; /,
    );
  });
});

describe('budgets', () => {
  it('from the context length: 2048 then 8192, smaller on a small context; defaults without one', () => {
    assert.deepEqual(chooseBudgets(262144, 's'), {
      first: 2048,
      retry: 8192,
      thinkingOff: 256,
      contextLength: 262144,
      source: 's',
    });
    assert.deepEqual(chooseBudgets(4096, 's'), {
      first: 1536,
      retry: 3072,
      thinkingOff: 256,
      contextLength: 4096,
      source: 's',
    });
    assert.deepEqual(chooseBudgets(undefined, 'none'), {
      first: 2048,
      retry: 8192,
      thinkingOff: 256,
      contextLength: undefined,
      source: 'none',
    });
    assert.equal(chooseBudgets(2, 's').retry, undefined);
    assert.equal(
      budgetWords(chooseBudgets(262144, '/v1/models max_model_len')),
      'budgets: 2048 tokens per answer, 8192 on retry of a cut answer, 256 with thinking off; context length 262144 from /v1/models max_model_len',
    );
  });

  it('reads context_length and max_model_len; nothing from junk', () => {
    assert.equal(contextLengthOf({ context_length: 131072 }, 'context_length'), 131072);
    assert.equal(contextLengthOf({ data: [{ id: 'm', max_model_len: 65536 }] }, 'max_model_len'), 65536);
    assert.equal(contextLengthOf({ context_length: '4096' }, 'context_length'), undefined);
    assert.equal(contextLengthOf(null, 'context_length'), undefined);
  });
});

describe('limiter', () => {
  it('runs at most `limit` tasks at once, in the order asked, and passes errors through', async () => {
    const limiter = new Limiter(2);
    let active = 0;
    let max = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      active++;
      max = Math.max(max, active);
      order.push(i);
      await sleep(5);
      active--;
      return i;
    };
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => limiter.run(task(i))));
    assert.deepEqual(results, [1, 2, 3, 4, 5]);
    assert.deepEqual(order, [1, 2, 3, 4, 5]);
    assert.equal(max, 2);
    await assert.rejects(
      limiter.run(async () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await limiter.run(async () => 'after'), 'after', 'a failed task gives its slot back');
  });
});

describe('report: the verdict in one line', () => {
  const r = (...statuses: CheckResult['status'][]) => ({
    allPassed: statuses.every((s) => s === 'pass'),
    budgets: chooseBudgets(262144, 's'),
    checks: statuses.map((status, i) => ({
      name: (['reasoning', 'tool calling', 'tool round trip'] as const)[i],
      status,
      evidence: '',
    })),
  });

  it('verified, failed, inconclusive, incomplete', () => {
    assert.equal(summarize(r('pass', 'pass', 'pass')), 'Parsers verified for agents (3 checks)');
    assert.equal(verificationVerdictOf(r('pass', 'pass', 'pass')), 'verified');
    assert.equal(
      summarize(r('fail', 'inconclusive', 'skipped')),
      'Parser check failed: reasoning (inconclusive: tool calling; skipped: tool round trip)',
    );
    assert.equal(verificationVerdictOf(r('fail', 'inconclusive', 'skipped')), 'failed');
    assert.equal(
      summarize(r('pass', 'inconclusive', 'skipped')),
      'Parser check inconclusive (answers cut at 8192 tokens, a budget problem, not the parsers): tool calling (skipped: tool round trip)',
    );
    assert.equal(verificationVerdictOf(r('pass', 'inconclusive', 'pass')), 'inconclusive');
    assert.equal(summarize(r('pass', 'skipped', 'pass')), 'Parser check incomplete, skipped: tool calling');
    assert.equal(verificationVerdictOf(r('pass', 'skipped', 'pass')), 'incomplete');
  });

  it('after a load: "ready, parsers verified for agents (N checks)"', () => {
    assert.equal(
      readySummary('Parsers verified for agents (15 checks)'),
      'ready, parsers verified for agents (15 checks)',
    );
    assert.equal(readySummary('Parser check failed: reasoning'), 'ready, parser check failed: reasoning');
  });
});
