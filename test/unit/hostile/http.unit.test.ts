import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
import { parseCurlOutput } from '../../../src/transport/curlFetch';
import { judgeCompletion, parseModels, parseObject } from '../../../src/engine/httpAnswers';
import { readCapped } from '../../../src/engine/serverHttp';
import { Readable } from 'node:stream';
import {
  judgeReasoning,
  judgeServerInfo,
  judgeThinkingOff,
  judgeToolCall,
  type Judgement,
  type ToolDefinition,
} from '../../../src/verify/judges';
import { assembleStream, judgeStream } from '../../../src/verify/streamJudge';
import { check, deepArray, junk, timed, wordSoup } from './hostileInputs';
import { ev } from '../../util/evidence';

const TOOL: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
function messageOf(resp: unknown): Record<string, unknown> | undefined {
  const choices = (resp as { choices?: unknown } | null)?.choices;
  const m = Array.isArray(choices) ? (choices[0] as { message?: unknown } | null)?.message : undefined;
  return typeof m === 'object' && m !== null ? (m as Record<string, unknown>) : undefined;
}

/**
 * Answers each judge is asked about, right and nearly right: its own field names, the values it
 * looks for and their near misses (another tool, arguments that are no JSON or lack the city, a
 * parser of another name, reasoning left in the content). So each judge passes some of them,
 * and a judge that passes without the answer meets a response that lacks it.
 */
/** The value a judge looks for (most often), else one of its near misses. */
const mostly = <T>(right: T, ...misses: T[]): fc.Arbitrary<T> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: fc.constantFrom(...misses) });
const choiceOf = (message: fc.Arbitrary<unknown>) =>
  fc
    .record({ finish_reason: mostly<unknown>('tool_calls', 'stop', 'length', null), message })
    .map((c) => ({ choices: [c] }));
const nearReasoning = choiceOf(
  fc.record({
    content: mostly<unknown>('Paris.', '', ' ', null, '<think>x</think>Paris.', 'Paris.</think>', '◁think▷x'),
    reasoning_content: mostly<unknown>('The user asks for a capital.', '', '  ', null, 'x</think>Paris.', 7),
    reasoning: mostly<unknown>('The user asks for a capital.', '', null),
  }),
);
const nearToolCall = choiceOf(
  fc.record({
    content: mostly<unknown>(null, '', 'Calling get_weather.'),
    tool_calls: fc
      .oneof(
        { weight: 5, arbitrary: fc.tuple(fc.constant(0)) },
        { weight: 1, arbitrary: fc.array(fc.constant(0), { maxLength: 2 }) },
      )
      .chain((slots) =>
        fc.tuple(
          ...slots.map(() =>
            fc.record({
              id: mostly<unknown>('call_1', '', null),
              type: mostly<unknown>('function', 'fn', null),
              function: fc.record({
                name: mostly<unknown>('get_weather', 'get_weathe', 'GET_WEATHER', 'get_weather ', '', null),
                arguments: mostly<unknown>(
                  '{"city":"Paris"}',
                  '{"city":""}',
                  '{"city":5}',
                  '{"town":"Paris"}',
                  '{}',
                  '{"city":"Paris"',
                  'Paris',
                  '',
                  { city: 'Paris' },
                ),
              }),
            }),
          ),
        ),
      ),
  }),
);
const parserName = mostly<unknown>('kimi_k2', 'kimi', 'KIMI_K2', 'kimi_k2 ', 'deepseek-r1', '', null);
const parsers = fc.record({ reasoning_parser: parserName, tool_call_parser: parserName });
const nearServerInfo = fc.oneof(
  parsers,
  fc.tuple(parsers, parsers).map(([nested, flat]) => ({ server_args: nested, ...flat })),
);

/** Each judge, and what a response must hold for it to pass (undefined: no claim). */
const JUDGES: ReadonlyArray<
  [string, (resp: unknown) => Judgement, ((resp: unknown) => boolean) | undefined, fc.Arbitrary<unknown>]
> = [
  [
    'reasoning',
    judgeReasoning,
    // reasoning_content, or vLLM's newer `reasoning`, holds the reasoning; content the answer, no think markers in it
    (r) => {
      const m = messageOf(r);
      const content = m?.['content'];
      return (
        [m?.['reasoning_content'], m?.['reasoning']].some((t) => typeof t === 'string' && t.trim() !== '') &&
        typeof content === 'string' &&
        content.trim() !== '' &&
        !/<\/?think>/.test(content)
      );
    },
    nearReasoning,
  ],
  ['thinking off', judgeThinkingOff, undefined, nearReasoning],
  [
    'tool call',
    (r) => judgeToolCall(r, TOOL),
    (r) => {
      const call = (
        messageOf(r)?.['tool_calls'] as { function?: { name?: unknown; arguments?: unknown } }[] | undefined
      )?.[0];
      try {
        const choice = (r as { choices?: { finish_reason?: unknown }[] } | null)?.choices?.[0];
        return (
          choice?.finish_reason === 'tool_calls' &&
          (call as { type?: unknown } | undefined)?.type === 'function' &&
          call?.function?.name === 'get_weather' &&
          typeof (JSON.parse(String(call.function.arguments)) as { city?: unknown }).city === 'string'
        );
      } catch {
        return false;
      }
    },
    nearToolCall,
  ],
  [
    'server info',
    (r) => judgeServerInfo(r, { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' }),
    (r) => {
      const o = r as Record<string, Record<string, unknown>>;
      const args =
        typeof o?.['server_args'] === 'object' && o['server_args'] !== null && !Array.isArray(o['server_args'])
          ? o['server_args']
          : (o as Record<string, unknown>);
      return args?.['reasoning_parser'] === 'kimi_k2' && args['tool_call_parser'] === 'kimi_k2';
    },
    nearServerInfo,
  ],
];

/** Bodies shaped like OpenAI answers with any value anywhere (null entries, deep arrays, numbers for strings). */
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constant(null),
  fc.constant(JSON.parse(deepArray(2_000)) as unknown),
);
/** Up to three tool calls of any shape; `extra` adds the fields of a streamed delta's call (its index). */
const anyToolCalls = (extra: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    anyValue,
    fc.array(
      fc.oneof(
        anyValue,
        fc.record(
          {
            ...extra,
            id: anyValue,
            type: anyValue,
            function: fc.oneof(anyValue, fc.record({ name: anyValue, arguments: anyValue }, { requiredKeys: [] })),
          },
          { requiredKeys: [] },
        ),
      ),
      { maxLength: 3 },
    ),
  );
const shaped = fc.record(
  {
    object: fc.oneof(fc.constant('error'), anyValue),
    code: anyValue,
    message: anyValue,
    error: fc.oneof(anyValue, fc.record({ message: anyValue, code: anyValue }, { requiredKeys: [] })),
    choices: fc.oneof(
      anyValue,
      fc.array(
        fc.oneof(
          anyValue,
          fc.record(
            {
              finish_reason: anyValue,
              text: anyValue,
              delta: fc.oneof(
                anyValue,
                fc.record(
                  { content: anyValue, reasoning_content: anyValue, tool_calls: anyToolCalls({ index: anyValue }) },
                  { requiredKeys: [] },
                ),
              ),
              message: fc.oneof(
                anyValue,
                fc.record(
                  { content: anyValue, reasoning_content: anyValue, reasoning: anyValue, tool_calls: anyToolCalls({}) },
                  { requiredKeys: [] },
                ),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
        { maxLength: 3 },
      ),
    ),
    server_args: anyValue,
    reasoning_parser: anyValue,
    tool_call_parser: anyValue,
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  junk,
  shaped.map((o) => JSON.stringify(o)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
);
const toolDelta = fc
  .array(fc.oneof(anyValue, fc.record({ index: anyValue, id: anyValue, function: anyValue }, { requiredKeys: [] })), {
    maxLength: 3,
  })
  .map((calls) => JSON.stringify({ choices: [{ delta: { tool_calls: calls } }] }));
const sse = fc
  .array(
    fc.oneof(
      body.map((b) => `data: ${b}`),
      toolDelta.map((b) => `data: ${b}`),
      fc.constantFrom('data: [DONE]', 'data:', ': keepalive', 'event: x', ''),
      junk,
    ),
    { maxLength: 8 },
  )
  .map((lines) => lines.join(fc.sample(fc.constantFrom('\n', '\n\n', '\r\n\r\n'), 1)[0] ?? '\n\n'));

/** What `judgeCompletion` must see before it says ok: SGLang's own evidence, nothing less. */
function realCompletion(status: number, contentType: string, text: string, truncated: boolean): boolean {
  if (
    status !== 200 ||
    truncated ||
    !/^application\/(?:[\w.+-]*\+)?json$/i.test(contentType.split(';')[0]?.trim() ?? '')
  )
    return false;
  const obj = parseObject(text);
  if (!obj || obj['object'] === 'error' || (obj['error'] !== undefined && obj['error'] !== null)) return false;
  const first: unknown = Array.isArray(obj['choices']) ? obj['choices'][0] : undefined;
  if (typeof first !== 'object' || first === null) return false;
  const f = first as Record<string, unknown>;
  const m = f['message'] as Record<string, unknown> | null | undefined;
  return typeof f['text'] === 'string' || (typeof m === 'object' && m !== null && typeof m['content'] === 'string');
}

describe('hostile input: HTTP bodies and SSE streams', () => {
  it('judgeCompletion: no exception; ok only for a 200 JSON answer with choices[0].text (or message.content)', () => {
    const status = fc.oneof(fc.constantFrom(200, 401, 404, 500, 502, 503), fc.integer({ min: 0, max: 999 }));
    const type = fc.oneof(
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'text/html',
        '',
        'application/problem+json',
      ),
      junk,
    );
    check(
      1711,
      fc.property(status, type, body, fc.boolean(), fc.boolean(), (s, t, b, cut, key) => {
        const v = judgeCompletion(s, t, b, cut, key);
        assert.equal(v.ok, realCompletion(s, t, b, cut), JSON.stringify({ s, t, b: b.slice(0, 200), v }));
        if (!v.ok) assert.ok(v.reason.length <= 400, v.reason.slice(0, 100));
      }),
    );
  });

  it('parseModels: ids are non-empty strings, whatever the body', () => {
    check(
      1712,
      fc.property(
        fc.oneof(
          body,
          fc
            .record({
              data: fc.array(
                fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.record({ id: fc.jsonValue({ maxDepth: 1 }) })),
                { maxLength: 4 },
              ),
            })
            .map((o) => JSON.stringify(o)),
        ),
        (b) => {
          for (const id of parseModels(b)) assert.ok(typeof id === 'string' && id !== '');
        },
      ),
    );
  });

  for (const [name, judge, needs, near] of JUDGES) {
    it(`judge "${name}": no exception, a bounded evidence${needs ? ', and no pass without the answer it asks for' : ''}`, () => {
      const seen = { pass: 0, other: 0 };
      check(
        1713 + name.length,
        fc.property(fc.oneof(shaped, fc.jsonValue({ maxDepth: 3 }), junk, { weight: 3, arbitrary: near }), (resp) => {
          const j = judge(resp);
          assert.ok(['pass', 'fail', 'skipped'].includes(j.status));
          assert.ok(ev(j).length <= 200);
          if (needs && j.status === 'pass') assert.ok(needs(resp), JSON.stringify(resp).slice(0, 300));
          seen[j.status === 'pass' ? 'pass' : 'other']++;
        }),
      );
      // The property met passing answers and answers that fail: it could have seen a wrong pass.
      assert.ok(seen.pass >= 3 && seen.other >= 3, JSON.stringify(seen));
    });
  }

  it('assembleStream / judgeStream: any SSE text (nulls in tool_calls, deep errors, garbage) gives a judgement, not an exception', () => {
    check(
      1720,
      fc.property(sse, (text) => {
        const a = assembleStream(text);
        assert.ok(a.chunks >= 0 && (a.choices.length === 0 || a.choices.length === 1));
        for (const [, judge] of JUDGES) judge(a);
        const j = judgeStream(text, judgeReasoning);
        assert.ok(ev(j).length <= 200);
      }),
    );
  });

  it('bodies nested 100k levels deep: judges, streams and the completion check answer (were RangeError: Maximum call stack size exceeded)', function () {
    this.timeout(60_000);
    const deep = deepArray(100_000);
    for (const resp of [
      `{"x":${deep}}`,
      `{"object":"error","code":${deep}}`,
      `{"error":{"message":${deep}}}`,
      `{"choices":[{"message":{"tool_calls":[{"function":{"name":${deep}}}]}}]}`,
      deep,
    ]) {
      const parsed = timed(`JSON.parse of ${resp.length} chars nested 100k deep`, () => JSON.parse(resp) as unknown);
      for (const [name, judge, needs] of JUDGES) {
        const j = timed(`judge ${name} on a 100k-deep body`, () => judge(parsed));
        if (needs) assert.equal(j.status, 'fail');
        assert.ok(ev(j).length <= 200);
      }
      assert.equal(judgeStream(`data: ${resp}\n\ndata: [DONE]\n\n`, judgeReasoning).status, 'fail');
      assert.equal(judgeCompletion(200, 'application/json', resp, false).ok, false);
    }
    // A chunk whose tool_calls hold null, and a tool call that is null: named, not thrown.
    assert.equal(assembleStream('data: {"choices":[{"delta":{"tool_calls":[null,5,"x"]}}]}\n\n').chunks, 1);
    assert.equal(
      judgeToolCall(
        { choices: [{ finish_reason: 'tool_calls', message: { content: null, tool_calls: [null] } }] },
        TOOL,
      ).status,
      'fail',
    );
  });

  it('a 1 MiB body of garbage or of "data: " lines: judged, not thrown (the client caps bodies at 1 MiB)', function () {
    this.timeout(60_000);
    const mib = 1024 * 1024;
    const garbage = Buffer.from(Array.from({ length: mib }, (_, i) => (i * 131) % 256)).toString('utf8');
    assert.equal(
      timed('judgeCompletion on 1 MiB of binary', () => judgeCompletion(200, 'application/json', garbage, false)).ok,
      false,
    );
    const dataLines = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'.repeat(mib / 48);
    const j = timed('judgeStream on 1 MiB of SSE chunks', () => judgeStream(dataLines, judgeThinkingOff));
    assert.ok(ev(j).length <= 200);
    timed('judgeStream on 1 MiB of "data:" without blank lines', () =>
      judgeStream('data: x\n'.repeat(mib / 8), judgeReasoning),
    );
  });

  it('readCapped: any chunking of a body longer than the cap keeps exactly the cap', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 10 }),
        fc.integer({ min: 0, max: 500 }),
        async (chunks, cap) => {
          const total = chunks.reduce((n, c) => n + c.length, 0);
          const r = await readCapped(Readable.from(chunks.map((c) => Buffer.from(c))), cap);
          assert.equal(r.truncated, total > cap);
          assert.ok(Buffer.byteLength(r.text) <= Math.min(total, cap) * 3);
        },
      ),
      { seed: 1721 },
    );
  });

  it('parseCurlOutput: any stdout/stderr/exit gives an outcome; a response only with a status line', () => {
    const stderr = fc.oneof(
      junk,
      wordSoup([
        'KIMI_CURL_STATUS ',
        'KIMI_CURL_EXIT ',
        'KIMI_CURL_MISSING',
        '200',
        ' ',
        'application/json',
        '\n',
        '23',
        '141',
        '7',
        '28',
        'no route',
      ]),
    );
    check(
      1722,
      fc.property(junk, stderr, fc.oneof(fc.constant(null), fc.integer({ min: -1, max: 300 })), (stdout, err, code) => {
        const o = parseCurlOutput({ stdout, stderr: err, code, signal: null } as never);
        if (o.kind === 'response') assert.ok(/KIMI_CURL_STATUS \d{3}/.test(err) && o.status >= 100);
      }),
    );
  });
});
