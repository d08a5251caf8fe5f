// The chat provider's pure part (src/fronts/vscode/chat/chatTurn.ts): what the editor gets from
// the server's answer, fed the simulator's own SGLang chunks, with and without the repair the
// offer turns on for a server known to leak its reasoning before </think>.
import { strict as assert } from 'node:assert';
import { raceAbort } from '../../src/fronts/vscode/chat/abort';
import { answersToolResult, ChatTurn, type AnswerPart, type TurnOptions } from '../../src/fronts/vscode/chat/chatTurn';

const oa = require('../gpu-host/sglang-sim/openai.js') as {
  chatStreamChunks(r: unknown, meta: unknown, o?: unknown): unknown[];
  chatCompletion(r: unknown, meta: unknown): unknown;
};
const parsers = require('../gpu-host/sglang-sim/parsers.js') as {
  postProcessChat(raw: string, o: unknown): { reasoning: string | null; content: string; toolCalls: unknown[] | null };
};

const LEAKED =
  'The tool returned a result. I will summarise it for the user.</think>According to the tool: 18°C, sunny';
const META = { model: 'm', promptTokens: 10, completionTokens: 20, includeUsage: true };

function sse(chunks: unknown[]): string {
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** The sim's post-processing of raw model output (reasoning parser on unless `leak`). */
function answerOf(raw: string, leak: boolean, hasTools = false) {
  return parsers.postProcessChat(raw, {
    reasoningParser: 'kimi_k2',
    toolCallParser: 'kimi_k2',
    hasTools,
    thinking: true,
    separateReasoning: !leak,
    finishReason: 'stop',
  });
}

function run(body: string, options: TurnOptions, pieces = 7, plain = false): { parts: AnswerPart[]; turn: ChatTurn } {
  const parts: AnswerPart[] = [];
  const turn = new ChatTurn(options, (p) => parts.push(p));
  if (plain) turn.pushCompletion(body);
  else for (let i = 0; i < body.length; i += pieces) turn.push(body.slice(i, i + pieces));
  turn.end();
  return { parts, turn };
}

const text = (parts: AnswerPart[]) =>
  parts
    .filter((p): p is Extract<AnswerPart, { kind: 'text' }> => p.kind === 'text')
    .map((p) => p.text)
    .join('');

const plainRead: TurnOptions = { reasoningInContent: 'leading', singleCall: false };
const repairing: TurnOptions = { reasoningInContent: 'beforeEnd', singleCall: false };

describe("chat model: one answer as the editor gets it (the provider's pure part)", () => {
  const leaked = answerOf(LEAKED, true);

  it("the simulator's reasoningLeakAfterTool answer: without the repair the agent gets the reasoning and </think> as its answer", () => {
    assert.equal(leaked.reasoning, null);
    const { parts } = run(sse(oa.chatStreamChunks(leaked, META)), plainRead);
    assert.equal(text(parts), LEAKED);
  });

  it('with the repair, streamed however the bytes are cut: the answer only, the reasoning kept aside', () => {
    for (const pieces of [1, 5, 64, 100_000]) {
      const { parts, turn } = run(sse(oa.chatStreamChunks(leaked, META)), repairing, pieces);
      assert.equal(text(parts), 'According to the tool: 18°C, sunny', `cut every ${pieces}`);
      assert.equal(turn.reasoning, 'The tool returned a result. I will summarise it for the user.');
      assert.match(
        turn.summary(),
        /^34 characters of text, 10 prompt \+ 20 completion tokens; reasoning 61 characters$/,
      );
    }
  });

  it('with the repair, a plain JSON answer (a server that ignored stream: true) the same', () => {
    const { parts, turn } = run(JSON.stringify(oa.chatCompletion(leaked, META)), repairing, 0, true);
    assert.deepEqual(parts, [{ kind: 'text', text: 'According to the tool: 18°C, sunny' }]);
    assert.equal(turn.reasoning.length, 61);
    assert.equal(turn.finishReason, 'stop');
  });

  it('with the repair, an answer without any closing tag is all answer (given at the end), and a correct server loses nothing', () => {
    const { parts } = run(sse(oa.chatStreamChunks({ ...leaked, content: 'Just text.' }, META)), repairing);
    assert.equal(text(parts), 'Just text.');
    const good = answerOf('Thinking about it.</think>The capital of France is Paris.', false);
    const r = run(sse(oa.chatStreamChunks(good, META)), repairing);
    assert.equal(text(r.parts), 'The capital of France is Paris.');
    assert.equal(r.turn.reasoning, 'Thinking about it.');
  });

  it('tool calls: the reasoning of the answer and its calls as VS Code replays them; parallel calls withheld pass the first only', () => {
    const section =
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|>' +
      '<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{"city":"Tokyo"}<|tool_call_end|><|tool_calls_section_end|>';
    const two = answerOf(`Two cities, two calls.</think>${section}`, false, true);
    const body = sse(oa.chatStreamChunks(two, META));
    const all = run(body, plainRead);
    assert.deepEqual(
      all.parts.map((p) => (p.kind === 'toolCall' ? [p.callId, p.input] : p)),
      [
        ['functions.get_weather:0', { city: 'Paris' }],
        ['functions.get_weather:1', { city: 'Tokyo' }],
      ],
    );
    assert.equal(all.turn.reasoning, 'Two cities, two calls.');
    assert.deepEqual(all.turn.toolCalls[1], {
      id: 'functions.get_weather:1',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' },
    });
    const one = run(body, { reasoningInContent: 'leading', singleCall: true });
    assert.deepEqual(
      one.parts.map((p) => (p.kind === 'toolCall' ? p.callId : p)),
      ['functions.get_weather:0'],
    );
    assert.match(one.turn.summary(), /tool calls get_weather \(1 more not passed on: parallel calls are withheld/);
  });

  it('cancellation from the first await: a session still coming up gives way to the abort at once; one that came gives its value', async () => {
    const never = new Promise<string>(() => undefined);
    const abort = new AbortController();
    const cancelled = new Error('cancelled');
    const pending = raceAbort(never, abort.signal);
    abort.abort(cancelled);
    await assert.rejects(pending, (e) => e === cancelled);
    await assert.rejects(
      raceAbort(Promise.resolve('late'), abort.signal),
      (e) => e === cancelled,
      'already aborted: not even asked',
    );
    assert.equal(await raceAbort(Promise.resolve('session'), new AbortController().signal), 'session');
  });

  it('the turn after a tool result is the one the repair of a leak after tool results reads: results, with or without text after them', () => {
    const call = { role: 'assistant' as const, content: '', tool_calls: [] };
    const tool = { role: 'tool' as const, tool_call_id: 'a', content: 'r' };
    assert.equal(answersToolResult([{ role: 'user', content: 'q' }, call, tool]), true);
    assert.equal(
      answersToolResult([{ role: 'user', content: 'q' }, call, tool, { role: 'user', content: 'and?' }]),
      true,
    );
    assert.equal(answersToolResult([{ role: 'user', content: 'q' }]), false);
    assert.equal(
      answersToolResult([tool, { role: 'assistant', content: 'done' }, { role: 'user', content: 'q' }]),
      false,
    );
  });
});
