import { strict as assert } from 'node:assert';
import type { OpenAiMessage, OpenAiToolCall } from '../../src/fronts/vscode/chat/openaiChat';
import { currentChainStart, ReasoningMemory } from '../../src/fronts/vscode/chat/toolChainReasoning';

const call = (id: string, city: string): OpenAiToolCall => ({
  id,
  type: 'function',
  function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
});
const user = (content: string): OpenAiMessage => ({ role: 'user', content });
const calls = (...list: OpenAiToolCall[]): OpenAiMessage => ({ role: 'assistant', content: '', tool_calls: list });
const result = (id: string): OpenAiMessage => ({ role: 'tool', tool_call_id: id, content: '{"temperature_c":18}' });
const answer = (content: string): OpenAiMessage => ({ role: 'assistant', content });

describe("chat model: reasoning carried through the tool chain (Kimi's interleaved thinking)", () => {
  const paris = call('functions.get_weather:0', 'Paris');
  const tokyo = call('functions.get_weather:1', 'Tokyo');
  const london = call('functions.get_weather:2', 'London');

  it("the chain in progress starts after the last assistant answer without calls, as Kimi's template splits it", () => {
    assert.equal(currentChainStart([user('a')]), 0);
    assert.equal(currentChainStart([user('a'), calls(paris), result(paris.id)]), 0);
    assert.equal(currentChainStart([user('a'), calls(paris), result(paris.id), answer('18'), user('b')]), 4);
    // A user message in the middle of a chain does not end it (no answer without calls came).
    assert.equal(currentChainStart([user('a'), calls(paris), result(paris.id), user('go on')]), 0);
  });

  it('sends the reasoning back on each tool-call message of the chain, under both field names; earlier turns get none', () => {
    const memory = new ReasoningMemory();
    const first = [user('weather in Paris?')];
    memory.remember('gpu1', first, [paris], 'I should call get_weather for Paris.');
    const second = [...first, calls(paris), result(paris.id)];
    const a = memory.attach('gpu1', second);
    assert.deepEqual(a.carried, [36]);
    assert.deepEqual(a.messages[1], {
      ...calls(paris),
      reasoning_content: 'I should call get_weather for Paris.',
      reasoning: 'I should call get_weather for Paris.',
    });
    // The chain goes on: two parallel calls after the answer and a new question.
    const third = [...second, answer('18 °C in Paris.'), user('And Tokyo and London?')];
    memory.remember('gpu1', third, [tokyo, london], 'Two cities: two calls at once.');
    const fourth = [...third, calls(tokyo, london), result(tokyo.id), result(london.id)];
    const b = memory.attach('gpu1', fourth);
    assert.deepEqual(b.carried, [30], 'only the tool chain in progress');
    assert.equal(
      (b.messages[1] as { reasoning_content?: string }).reasoning_content,
      undefined,
      'dropped like the template drops it',
    );
    assert.equal((b.messages[5] as { reasoning_content?: string }).reasoning_content, 'Two cities: two calls at once.');
    // Another server's calls with the same ids (functions.NAME:IDX repeats across conversations) get nothing.
    assert.deepEqual(memory.attach('gpu2', second).carried, [0]);
    // Other arguments under the same id: another conversation.
    assert.deepEqual(memory.attach('gpu1', [user('x'), calls(call(paris.id, 'Rome')), result(paris.id)]).carried, [0]);
  });

  it('bounded per chain: its oldest answers go first when it grows past its share', () => {
    const memory = new ReasoningMemory({ maxChars: 1000, maxCharsPerChain: 25, maxAgeMs: 60_000 });
    const history: OpenAiMessage[] = [user('q')];
    const ids = [0, 1, 2].map((i) => call(`functions.get_weather:${i}`, `c${i}`));
    for (const c of ids) {
      memory.remember('s', history, [c], '0123456789');
      history.push(calls(c), result(c.id));
    }
    assert.deepEqual(memory.attach('s', history).carried, [0, 10, 10]);
    assert.deepEqual(memory.size, { chains: 1, answers: 2, chars: 20 });
  });

  it('bounded in all: the least recently used chain is evicted first; by age: a chain unused for too long is forgotten', () => {
    let now = 0;
    const memory = new ReasoningMemory({ maxChars: 25, maxCharsPerChain: 20, maxAgeMs: 1000 }, () => now);
    const chain = (i: number) => [user(`q${i}`), calls(call(`functions.f:${i}`, `x${i}`)), result(`functions.f:${i}`)];
    memory.remember('s', [user('q0')], [call('functions.f:0', 'x0')], 'a'.repeat(10));
    now = 10;
    memory.remember('s', [user('q1')], [call('functions.f:1', 'x1')], 'b'.repeat(10));
    now = 20;
    assert.deepEqual(memory.attach('s', chain(0)).carried, [10], 'chain 0 used again: chain 1 is now the oldest');
    memory.remember('s', [user('q2')], [call('functions.f:2', 'x2')], 'c'.repeat(10));
    assert.deepEqual(memory.attach('s', chain(1)).carried, [0]);
    assert.deepEqual(memory.attach('s', chain(0)).carried, [10]);
    assert.deepEqual(memory.attach('s', chain(2)).carried, [10]);
    now = 2000;
    assert.deepEqual(memory.attach('s', chain(0)).carried, [0]);
    assert.deepEqual(memory.size, { chains: 0, answers: 0, chars: 0 });
  });

  it('an answer without calls or without reasoning keeps nothing; a reasoning longer than a chain may hold is not kept', () => {
    const memory = new ReasoningMemory({ maxChars: 100, maxCharsPerChain: 10, maxAgeMs: 1000 });
    memory.remember('s', [user('q')], [], 'reasoning');
    memory.remember('s', [user('q')], [paris], '');
    memory.remember('s', [user('q')], [paris], 'x'.repeat(11));
    assert.deepEqual(memory.size, { chains: 0, answers: 0, chars: 0 });
  });
});
