import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import {
  buildChatRequest,
  ChatStreamAccumulator,
  ChatStreamError,
  httpErrorText,
  toOpenAiMessages,
  type StreamEvent,
} from '../../src/fronts/vscode/chat/openaiChat';
import { SseDecoder } from '../../src/fronts/vscode/chat/sse';
import {
  contextLength,
  describeChatModel,
  displayModelName,
  limits,
  offerFor,
  parseModels,
} from '../../src/fronts/vscode/chat/modelInfo';
import { ALL_CHECKS } from '../util/checkNames';
// The simulator's SGLang-shaped stream chunks and its post-processing (kimi_k2 parsers).
const oa = require('../gpu-host/sglang-sim/openai.js') as {
  chatStreamChunks(r: unknown, meta: unknown, o?: unknown): unknown[];
};
const parsers = require('../gpu-host/sglang-sim/parsers.js') as { postProcessChat(raw: string, o: unknown): unknown };

function sse(chunks: unknown[]): string {
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** Feeds `text` to a decoder in pieces cut at `cuts`, and the events to an accumulator. */
function run(text: string, cuts: number[] = []): StreamEvent[] {
  const decoder = new SseDecoder();
  const acc = new ChatStreamAccumulator();
  const out: StreamEvent[] = [];
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < text.length)].sort((a, b) => a - b).concat(text.length)) {
    for (const data of decoder.push(text.slice(at, cut))) out.push(...acc.push(data));
    at = cut;
  }
  for (const data of decoder.end()) out.push(...acc.push(data));
  out.push(...acc.end());
  return out;
}

const answerText = (events: StreamEvent[]) =>
  events
    .filter((e) => e.kind === 'text')
    .map((e) => (e as { text: string }).text)
    .join('');
const reasoningText = (events: StreamEvent[]) =>
  events
    .filter((e) => e.kind === 'reasoning')
    .map((e) => (e as { text: string }).text)
    .join('');

const K2_TOOL_RAW =
  'The user wants the weather. I should call the tool.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';

describe('chat model: messages to an OpenAI request', () => {
  it('a tool round trip: the assistant call carries tool_calls, the result is a tool message with its tool_call_id, before the user text', () => {
    const messages = toOpenAiMessages([
      { role: 'user', parts: [{ kind: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        parts: [{ kind: 'toolCall', callId: 'functions.get_weather:0', name: 'get_weather', input: { city: 'Paris' } }],
      },
      {
        role: 'user',
        parts: [
          { kind: 'toolResult', callId: 'functions.get_weather:0', text: '18 °C, sunny' },
          { kind: 'text', text: 'Thanks, and now?' },
        ],
      },
    ]);
    assert.deepEqual(messages, [
      { role: 'user', content: 'Weather in Paris?' },
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
      },
      { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '18 °C, sunny' },
      { role: 'user', content: 'Thanks, and now?' },
    ]);
  });

  it('streams, asks for usage, caps max_tokens at the model limit, passes tools with their schema and the tool mode', () => {
    const body = buildChatRequest({
      model: 'kimi-k2.6',
      messages: [{ role: 'user', parts: [{ kind: 'text', text: 'hi' }] }],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
      toolMode: 'required',
      maxTokens: 4096,
      modelOptions: { max_tokens: 100_000, temperature: 0.2, unknown_option: 1 },
    });
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.max_tokens, 4096);
    assert.equal(body.temperature, 0.2);
    assert.equal('unknown_option' in body, false);
    assert.equal(body.tool_choice, 'required');
    assert.deepEqual(body.tools, [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ]);
    const plain = buildChatRequest({ model: 'm', messages: [], maxTokens: 10, modelOptions: { max_tokens: 5 } });
    assert.equal(plain.max_tokens, 5);
    assert.equal('tools' in plain, false);
    assert.equal('tool_choice' in plain, false);
  });
});

describe('chat model: the streamed answer', () => {
  const meta = { model: 'kimi-k2.6', promptTokens: 20, completionTokens: 30, includeUsage: true };

  it("a streamed kimi_k2 tool call (the simulator's SGLang chunks) becomes one whole tool call with the server's arguments; reasoning stays out of the text", () => {
    const r = parsers.postProcessChat(K2_TOOL_RAW, {
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
      hasTools: true,
      thinking: true,
      finishReason: 'stop',
    });
    for (const nullKeys of [false, true]) {
      const events = run(sse(oa.chatStreamChunks(r, meta, { nullKeys })));
      const calls = events.filter((e) => e.kind === 'toolCall');
      assert.deepEqual(calls, [
        { kind: 'toolCall', callId: 'functions.get_weather:0', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      assert.equal(answerText(events), '');
      assert.match(reasoningText(events), /I should call the tool/);
      assert.deepEqual(
        events.filter((e) => e.kind === 'usage'),
        [{ kind: 'usage', promptTokens: 20, completionTokens: 30 }],
      );
    }
  });

  it('a plain answer streams as text, however the bytes are cut, and its reasoning never appears in it', () => {
    const raw = 'The user greets me. Reply briefly.</think>Hello! I am Kimi.';
    const r = parsers.postProcessChat(raw, {
      reasoningParser: 'kimi_k2',
      toolCallParser: 'kimi_k2',
      hasTools: false,
      thinking: true,
      finishReason: 'stop',
    });
    const text = sse(oa.chatStreamChunks(r, meta));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 12 }), (cuts) => {
        const events = run(text, cuts);
        assert.equal(answerText(events), 'Hello! I am Kimi.');
        assert.equal(reasoningText(events), 'The user greets me. Reply briefly.');
      }),
    );
  });

  it('an answer that opens with a think tag anyway (no reasoning parser) is held back as reasoning up to the closing tag', () => {
    const pieces = ['<th', 'ink>Let me ', 'think.</thi', 'nk>\n\nThe ', 'answer.'];
    const chunks: unknown[] = pieces.map((p) => ({
      choices: [{ index: 0, delta: { content: p }, finish_reason: null }],
    }));
    chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    const events = run(sse(chunks));
    assert.equal(answerText(events), 'The answer.');
    assert.equal(reasoningText(events), 'Let me think.');
    // Cut off inside the think block: all of it is reasoning, no text at all.
    const cut = run(
      sse([{ choices: [{ index: 0, delta: { content: '<think>only reasoning' }, finish_reason: 'length' }] }]),
    );
    assert.equal(answerText(cut), '');
    assert.equal(reasoningText(cut), 'only reasoning');
    // Text that merely starts like a tag is text.
    assert.equal(
      answerText(run(sse([{ choices: [{ index: 0, delta: { content: '<b>bold</b>' }, finish_reason: 'stop' }] }]))),
      '<b>bold</b>',
    );
  });

  it('two tool calls in one answer come in index order; a call without an id gets one', () => {
    const chunk = (tool_calls: unknown[], finish: string | null = null) => ({
      choices: [{ index: 0, delta: { tool_calls }, finish_reason: finish }],
    });
    const events = run(
      sse([
        chunk([{ index: 1, function: { name: 'b', arguments: '{"x":' } }]),
        chunk([{ index: 0, id: 'c0', function: { name: 'a', arguments: '{}' } }]),
        chunk([{ index: 1, function: { arguments: '2}' } }], 'tool_calls'),
      ]),
    );
    assert.deepEqual(
      events.filter((e) => e.kind === 'toolCall'),
      [
        { kind: 'toolCall', callId: 'c0', name: 'a', input: {} },
        { kind: 'toolCall', callId: 'call_1', name: 'b', input: { x: 2 } },
      ],
    );
  });

  it("an error object in the stream and tool arguments that are not JSON end the answer with the server's words", () => {
    assert.throws(
      () =>
        run(
          `data: ${JSON.stringify({ object: 'error', message: 'The context is too long', type: 'BadRequestError', code: 400 })}\n\n`,
        ),
      (e: unknown) => e instanceof ChatStreamError && /context is too long/.test(e.message),
    );
    const bad = sse([
      {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'x', function: { name: 'f', arguments: '{"a": ' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      },
    ]);
    assert.throws(() => run(bad), /tool call f has arguments that are not JSON/);
    assert.equal(httpErrorText(400, JSON.stringify({ object: 'error', message: 'bad model' })), 'HTTP 400: bad model');
    assert.equal(httpErrorText(404, JSON.stringify({ detail: 'Not Found' })), 'HTTP 404: Not Found');
  });

  it('the SSE decoder joins multi-line data, skips comments and other fields, and accepts CRLF and CR', () => {
    const d = new SseDecoder();
    assert.deepEqual(d.push(': keep-alive\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r'), ['a\nb']);
    assert.deepEqual(d.push('\rdata: d\n'), ['c']);
    assert.deepEqual(d.end(), ['d']);
  });
});

describe('chat model: what is offered, with which limits', () => {
  const pass = (name: string) => ({ name, status: 'pass' });
  const allPass = ALL_CHECKS.map(pass);
  const withOutcome = (outcomes: Record<string, { status: string; fault?: string }>) =>
    allPass.map((c) => (outcomes[c.name] ? { name: c.name, ...outcomes[c.name] } : c));
  const leak = { status: 'fail', fault: 'reasoningInContent' };

  it('a server whose every check passed: offered with tool calling and parallel calls, nothing repaired', () => {
    assert.deepEqual(offerFor('ready', allPass), {
      offered: true,
      toolCalling: true,
      parallelToolCalls: true,
      repair: 'none',
      notes: [],
    });
  });

  it('tool calling needs every check of the loop: a call, the turn after its result, the reasoning carried, the ids', () => {
    for (const name of [
      'tool calling (stream)',
      'tool round trip (stream)',
      'reasoning carried through tool calls',
      'tool-call ids',
    ]) {
      const offer = offerFor('ready', withOutcome({ [name]: { status: 'fail' } }));
      assert.ok(offer.offered);
      assert.equal(offer.toolCalling, false, name);
      assert.equal(offer.parallelToolCalls, false, name);
      assert.deepEqual(offer.notes, [`Tool calling withheld: ${name} failed in the parser check.`]);
    }
    const skipped = offerFor('ready', withOutcome({ 'tool round trip (stream)': { status: 'skipped' } }));
    assert.ok(skipped.offered && !skipped.toolCalling, 'a check that did not run shows nothing working');
  });

  it('reasoning leaked before </think> after a tool result (the round trips fail with that fault): tool calling offered, repaired after tool results', () => {
    const offer = offerFor(
      'ready',
      withOutcome({
        'tool round trip': leak,
        'tool round trip (stream)': leak,
        'reasoning carried through tool calls': leak,
      }),
    );
    assert.ok(offer.offered);
    assert.equal(offer.toolCalling, true);
    assert.equal(offer.repair, 'afterToolResult');
    assert.match(
      offer.notes.join(' '),
      /^Tool calling repaired: after a tool result .*tool round trip \(stream\), reasoning carried through tool calls failed/,
    );
  });

  it('reasoning left in the answer on every turn: repaired always; any other reasoning failure: not offered', () => {
    const always = offerFor('ready', withOutcome({ 'reasoning (stream)': leak }));
    assert.ok(always.offered);
    assert.equal(always.repair, 'always');
    assert.match(always.notes[0]!, /^Reasoning repaired/);
    const none = offerFor('ready', withOutcome({ 'reasoning (stream)': { status: 'skipped' } }));
    assert.equal(none.offered, false);
    assert.equal(offerFor('ready', undefined).offered, false);
    const loading = offerFor('loading', allPass);
    assert.equal(loading.offered, false);
    assert.match((loading as { why: string }).why, /loading/);
  });

  it('parallel calls failed: tool calling stays, parallel calls withheld, and the detail says so', () => {
    const offer = offerFor('ready', withOutcome({ 'parallel tool calls (stream)': { status: 'fail' } }));
    assert.ok(offer.offered);
    assert.equal(offer.toolCalling, true);
    assert.equal(offer.parallelToolCalls, false);
    const d = describeChatModel({
      serverName: 'gpu1',
      modelId: 'moonshotai/Kimi-K2.6',
      context: 262144,
      maxOutput: 16384,
      capabilities: offer,
      engine: 'SGLang',
    });
    assert.equal(d.detail, 'SGLang via SSH · one tool call at a time');
    assert.match(
      d.tooltip,
      /tool calling verified end to end\. Parallel tool calls withheld: parallel tool calls \(stream\) failed; only the first call/,
    );
    const off = offerFor('ready', withOutcome({ 'tool-call ids': { status: 'fail' }, 'reasoning (stream)': leak }));
    assert.ok(off.offered);
    const e = describeChatModel({
      serverName: 'gpu1',
      modelId: 'm',
      context: 1000,
      maxOutput: 100,
      capabilities: off,
      engine: 'vLLM',
    });
    assert.equal(e.detail, 'vLLM via SSH · no tools, reasoning repaired');
    assert.equal(e.toolCalling, false);
    assert.match(
      e.tooltip,
      /tool calling not offered\. Reasoning repaired: .* Tool calling withheld: tool-call ids failed/,
    );
  });

  it("limits come from the server: max_model_len, else /server_info's context_length; the answer gets at most a quarter", () => {
    const models = parseModels({
      object: 'list',
      data: [{ id: 'moonshotai/Kimi-K2.6', max_model_len: 262144, owned_by: 'vllm' }, { bogus: 1 }],
    });
    assert.deepEqual(models, [{ id: 'moonshotai/Kimi-K2.6', maxModelLen: 262144, ownedBy: 'vllm' }]);
    assert.equal(contextLength(models[0], { context_length: 1000 }), 262144);
    assert.equal(contextLength({ id: 'x' }, { context_length: 131072 }), 131072);
    assert.equal(contextLength({ id: 'x' }, {}), undefined);
    assert.deepEqual(limits(262144, 16384), { maxInputTokens: 245760, maxOutputTokens: 16384 });
    assert.deepEqual(limits(8192, 16384), { maxInputTokens: 6144, maxOutputTokens: 2048 });
    const d = describeChatModel({
      serverName: 'gpu1',
      modelId: 'moonshotai/Kimi-K2.6',
      context: 262144,
      maxOutput: 16384,
      capabilities: { toolCalling: true, parallelToolCalls: true, repair: 'none', notes: [] },
      engine: 'SGLang',
    });
    assert.equal(d.name, 'Kimi K2.6 on gpu1');
    // VS Code shows it as kimi-service/gpu1 (vendor/id): the vendor is not repeated in the id.
    assert.equal(d.id, 'gpu1');
    assert.equal(d.detail, 'SGLang via SSH');
    assert.equal(d.maxInputTokens + d.maxOutputTokens, 262144);
    assert.equal(displayModelName('kimi-k2.6'), 'kimi k2.6');
  });
});
