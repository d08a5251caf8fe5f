import * as assert from 'node:assert/strict';
import {
  judgeReasoning,
  judgeServerInfo,
  judgeThinkingOff,
  judgeToolCall,
  type ToolDefinition,
} from '../../src/verify/judges';
import { assembleStream, judgeStream } from '../../src/verify/streamJudge';
import { ev } from '../util/evidence';

// Shapes as ../shared/reference/sglang-server.md sections 4–6 describe them.
const MODEL = '/root/models/Kimi-K2.6';
const SECTION =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';

const WEATHER: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

function completion(message: Record<string, unknown>, finish_reason: string | null = 'stop'): unknown {
  return {
    id: '5b0f1c3e9a8f4e7c',
    object: 'chat.completion',
    created: 1767225600,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', tool_calls: null, ...message },
        logprobs: null,
        finish_reason,
        matched_stop: finish_reason === 'stop' ? 163586 : null,
      },
    ],
    usage: { prompt_tokens: 21, total_tokens: 90, completion_tokens: 69, prompt_tokens_details: null },
  };
}

const parsersOn = {
  reasoning: completion({ content: '391', reasoning_content: 'The user asks 17*23. 17*20=340, 17*3=51, total 391.' }),
  thinkingOff: completion({ content: '391', reasoning_content: null }),
  tool: completion(
    {
      content: '',
      reasoning_content: 'The user wants the weather in Paris; I should call get_weather.',
      tool_calls: [
        {
          id: 'functions.get_weather:0',
          index: 0,
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
      ],
    },
    'tool_calls',
  ),
};

const noParsers = {
  reasoning: completion({
    content: 'The user asks 17*23. 17*20=340, 17*3=51, total 391.</think>391',
    reasoning_content: null,
  }),
  tool: completion({
    content: `The user wants the weather; call the tool.</think>${SECTION}`,
    reasoning_content: null,
  }),
};

// `--reasoning-parser kimi` waits for ◁/think▷ and never sees it: everything stays in content.
const wrongKimi = noParsers.reasoning;

const toolInsideReasoning = completion({
  content: 'I could not look up the weather.',
  reasoning_content: `The user wants the weather. ${SECTION} Hmm, let me just answer.`,
});

const missingThinkEnd = completion({
  content: '',
  reasoning_content: `The user wants the weather in Paris.${SECTION}`,
});

describe('judges: server info', () => {
  const info = {
    model_path: MODEL,
    served_model_name: MODEL,
    tp_size: 8,
    reasoning_parser: 'kimi_k2',
    tool_call_parser: 'kimi_k2',
    port: 30001,
    status: 'ready',
    version: '0.5.6',
  };
  const expected = { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2' };

  it('passes with both flags as configured', () => {
    const j = judgeServerInfo(info, expected);
    assert.equal(j.status, 'pass');
    assert.equal(ev(j), 'reasoning_parser="kimi_k2" tool_call_parser="kimi_k2"');
  });

  it('fails naming the missing or wrong flag', () => {
    const j = judgeServerInfo({ ...info, reasoning_parser: 'kimi', tool_call_parser: null }, expected);
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /reasoning_parser="kimi" tool_call_parser=null; reasoning_parser should be "kimi_k2"; tool_call_parser should be "kimi_k2"/,
    );
  });
});

describe('judges: reasoning', () => {
  it('parsers on: pass', () => {
    const j = judgeReasoning(parsersOn.reasoning);
    assert.equal(j.status, 'pass', ev(j));
    assert.match(ev(j), /reasoning_content \(\d+ chars\)/);
  });

  it('no parser / wrong parser kimi: fail, evidence shows </think> in content', () => {
    for (const resp of [noParsers.reasoning, wrongKimi]) {
      const j = judgeReasoning(resp);
      assert.equal(j.status, 'fail');
      assert.match(
        ev(j),
        /reasoning_content null: reasoning parser off or its markers differ; content has <\/think>: ".*391\.<\/think>391"/,
      );
      assert.ok(ev(j).length <= 200);
    }
  });

  it('markers left in content even with reasoning separated: fail', () => {
    const j = judgeReasoning(completion({ content: '◁think▷x◁/think▷391', reasoning_content: 'r' }));
    assert.equal(j.status, 'fail');
    assert.match(ev(j), /markers left in content; content has ◁think▷/);
  });

  it('empty reasoning: fail', () => {
    assert.equal(judgeReasoning(parsersOn.thinkingOff).status, 'fail');
  });

  it('an error body: fail with its message', () => {
    const j = judgeReasoning({
      object: 'error',
      message: 'The model `x` does not exist.',
      type: 'NotFoundError',
      param: null,
      code: 404,
    });
    assert.equal(j.status, 'fail');
    assert.match(ev(j), /error 404: The model `x` does not exist\./);
  });
});

describe('judges: thinking off', () => {
  it('null reasoning: pass', () => {
    assert.equal(judgeThinkingOff(parsersOn.thinkingOff).status, 'pass');
    assert.equal(judgeThinkingOff(completion({ content: '391', reasoning_content: '' })).status, 'pass');
  });
  it('reasoning still there, or </think> in content: fail', () => {
    assert.match(ev(judgeThinkingOff(parsersOn.reasoning)), /reasoning_content still set/);
    assert.match(ev(judgeThinkingOff(noParsers.reasoning)), /thinking still on: content has <\/think>/);
  });
});

describe('judges: tool call', () => {
  it('parsers on: pass with the call as evidence', () => {
    const j = judgeToolCall(parsersOn.tool, WEATHER);
    assert.equal(j.status, 'pass', ev(j));
    assert.equal(ev(j), 'get_weather({"city":"Paris"}) id=functions.get_weather:0');
  });

  it('no parsers: fail, raw section in content, no tool_calls, finish_reason stop', () => {
    const j = judgeToolCall(noParsers.tool, WEATHER);
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /^raw tool-call tokens in content \(tool-call parser off or wrong\); no tool_calls, finish_reason "stop" \| content ".*<\|tool_calls_section_begin\|>/,
    );
  });

  it('tool call inside the reasoning: named', () => {
    const j = judgeToolCall(toolInsideReasoning, WEATHER);
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /^tool call inside the reasoning \(emitted before <\/think>\) and lost; no tool_calls, finish_reason "stop" \| reasoning_content ".*<\|tool_calls_section_begin/,
    );
  });

  it('</think> missing before the section: named', () => {
    const j = judgeToolCall(missingThinkEnd, WEATHER);
    assert.equal(j.status, 'fail');
    assert.match(
      ev(j),
      /^<\/think> missing before the tool-call section \(the call stayed in reasoning_content\); no tool_calls/,
    );
  });

  it('section before </think> in raw content: named', () => {
    const j = judgeToolCall(completion({ content: `thinking ${SECTION}</think>ok`, reasoning_content: null }), WEATHER);
    assert.match(ev(j), /tool section comes before <\/think>/);
  });

  it('arguments: not JSON, or against the schema: fail', () => {
    const withArgs = (args: string, name = 'get_weather'): unknown =>
      completion(
        {
          content: '',
          reasoning_content: 'r',
          tool_calls: [
            { id: 'functions.get_weather:0', index: 0, type: 'function', function: { name, arguments: args } },
          ],
        },
        'tool_calls',
      );
    assert.match(ev(judgeToolCall(withArgs('{"city":'), WEATHER)), /arguments are not JSON/);
    assert.match(
      ev(judgeToolCall(withArgs('{"town":"Paris"}'), WEATHER)),
      /do not match the schema: data must have required property 'city'/,
    );
    assert.match(ev(judgeToolCall(withArgs('{"city":3}'), WEATHER)), /data\/city must be string/);
    assert.match(
      ev(judgeToolCall(withArgs('{"city":"Paris"}', 'get_time'), WEATHER)),
      /calls "get_time", expected "get_weather"/,
    );
  });

  it('tool_calls present but finish_reason stop: fail', () => {
    const resp = completion(
      {
        content: '',
        reasoning_content: 'r',
        tool_calls: [
          {
            id: 'functions.get_weather:0',
            index: 0,
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      'stop',
    );
    assert.match(ev(judgeToolCall(resp, WEATHER)), /finish_reason "stop", expected "tool_calls"/);
  });
});

// Streaming: first chunk role + "", then reasoning deltas, content deltas, finish chunk, [DONE].
function sse(chunks: Record<string, unknown>[], done = true): string {
  const lines = chunks.map(
    (c) =>
      `data: ${JSON.stringify({ id: 'abc', object: 'chat.completion.chunk', created: 1767225600, model: MODEL, choices: [{ index: 0, logprobs: null, matched_stop: null, ...c }] })}\n\n`,
  );
  return lines.join('') + (done ? 'data: [DONE]\n\n' : '');
}

/** Older variant: every null key present in every delta. */
const withNulls = (delta: Record<string, unknown>): Record<string, unknown> => ({
  role: null,
  content: null,
  reasoning_content: null,
  tool_calls: null,
  ...delta,
});

describe('judges: streaming', () => {
  const reasoningDeltas = [
    { delta: { role: 'assistant', content: '' }, finish_reason: null },
    { delta: { reasoning_content: 'The user asks 17*23. ' }, finish_reason: null },
    { delta: { reasoning_content: '17*20=340, 17*3=51.' }, finish_reason: null },
    { delta: { content: '39' }, finish_reason: null },
    { delta: { content: '1' }, finish_reason: null },
    { delta: {}, finish_reason: 'stop' },
  ];
  const toolDeltas = [
    { delta: { role: 'assistant', content: '' }, finish_reason: null },
    { delta: { reasoning_content: 'Call get_weather.' }, finish_reason: null },
    {
      delta: {
        tool_calls: [
          {
            id: 'functions.get_weather:0',
            index: 0,
            type: 'function',
            function: { name: 'get_weather', arguments: '' },
          },
        ],
      },
      finish_reason: null,
    },
    { delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null },
    { delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, finish_reason: null },
    { delta: {}, finish_reason: 'tool_calls' },
  ];

  for (const [variant, map] of [
    ['omitted null keys', (c: { delta: Record<string, unknown>; finish_reason: string | null }) => c],
    [
      'reasoning_content: null in every chunk',
      (c: { delta: Record<string, unknown>; finish_reason: string | null }) => ({ ...c, delta: withNulls(c.delta) }),
    ],
  ] as const) {
    it(`assembles reasoning (${variant})`, () => {
      const a = assembleStream(sse(reasoningDeltas.map(map)));
      assert.equal(a.done, true);
      assert.deepEqual(a.choices[0], {
        index: 0,
        finish_reason: 'stop',
        message: {
          role: 'assistant',
          content: '391',
          reasoning_content: 'The user asks 17*23. 17*20=340, 17*3=51.',
          tool_calls: null,
        },
      });
      assert.equal(judgeStream(sse(reasoningDeltas.map(map)), judgeReasoning).status, 'pass');
    });

    it(`assembles tool calls from fragments (${variant})`, () => {
      const a = assembleStream(sse(toolDeltas.map(map)));
      assert.deepEqual(a.choices[0].message.tool_calls, [
        {
          index: 0,
          id: 'functions.get_weather:0',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
      ]);
      assert.equal(a.choices[0].finish_reason, 'tool_calls');
      const j = judgeStream(sse(toolDeltas.map(map)), (r) => judgeToolCall(r, WEATHER));
      assert.equal(j.status, 'pass', ev(j));
    });
  }

  it('no parsers over SSE: reasoning and tool call fail with evidence', () => {
    const raw = sse([
      { delta: { role: 'assistant', content: '' }, finish_reason: null },
      { delta: { content: 'thinking</think>' }, finish_reason: null },
      { delta: { content: SECTION }, finish_reason: null },
      { delta: {}, finish_reason: 'stop' },
    ]);
    assert.match(ev(judgeStream(raw, judgeReasoning)), /content has <\/think>/);
    assert.match(ev(judgeStream(raw, (r) => judgeToolCall(r, WEATHER))), /raw tool-call tokens in content/);
  });

  it('CRLF, missing [DONE] and an error chunk are reported', () => {
    const raw = sse(reasoningDeltas, false).replace(/\n/g, '\r\n');
    assert.match(ev(judgeStream(raw, judgeReasoning)), /no data: \[DONE\]/);
    const err =
      'data: {"object":"error","message":"bad tools","type":"BadRequestError","param":null,"code":400}\n\ndata: [DONE]\n\n';
    const j = judgeStream(err, judgeReasoning);
    assert.equal(j.status, 'fail');
    assert.equal(ev(j), 'error 400: bad tools');
  });
});
