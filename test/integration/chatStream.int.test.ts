/**
 * The chat model's transport against the real sshd + simulated host: a streamed
 * /v1/chat/completions through the session's SSH tunnel (ServerHttpClient.postStream), translated by
 * src/fronts/vscode/chat/openaiChat, and the same through curl on the host when sshd forbids TCP forwarding.
 */
import { targetFor } from '../../src/target/target';
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { buildChatRequest, ChatStreamAccumulator, type StreamEvent } from '../../src/fronts/vscode/chat/openaiChat';
import { SseDecoder } from '../../src/fronts/vscode/chat/sse';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { ChatTurn, type AnswerPart } from '../../src/fronts/vscode/chat/chatTurn';
import { offerFor } from '../../src/fronts/vscode/chat/modelInfo';
import { ReasoningMemory } from '../../src/fronts/vscode/chat/toolChainReasoning';
import { verifyServer } from '../../src/verify/serverVerification';

const WEATHER = {
  name: 'get_weather',
  description: 'Get the current weather in a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

async function ask(
  test: TestSession,
  model: string,
  withTool: boolean,
): Promise<{ events: StreamEvent[]; chunks: number }> {
  const body = buildChatRequest({
    model,
    messages: [
      {
        role: 'user',
        parts: [
          {
            kind: 'text',
            text: withTool ? 'What is the weather in Paris? Use the tool.' : 'What is the capital of France?',
          },
        ],
      },
    ],
    ...(withTool ? { tools: [WEATHER] } : {}),
    maxTokens: 256,
  });
  const result = await test.session.client.postStream(
    '/v1/chat/completions',
    JSON.stringify(body),
    new AbortController().signal,
  );
  assert.equal(result.kind, 'http', JSON.stringify(result));
  if (result.kind !== 'http') throw new Error('unreachable');
  assert.equal(result.status, 200);
  assert.match(result.contentType, /text\/event-stream/);
  const decoder = new SseDecoder();
  const acc = new ChatStreamAccumulator();
  const events: StreamEvent[] = [];
  let chunks = 0;
  for await (const chunk of result.body as AsyncIterable<Buffer>) {
    chunks++;
    for (const data of decoder.push(chunk.toString('utf8'))) events.push(...acc.push(data));
  }
  for (const data of decoder.end()) events.push(...acc.push(data));
  events.push(...acc.end());
  return { events, chunks };
}

const text = (events: StreamEvent[]) =>
  events
    .filter((e) => e.kind === 'text')
    .map((e) => (e as { text: string }).text)
    .join('');

describe('the chat model over real SSH: streamed chat completions through the tunnel', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession;

  before(async () => {
    host = await startGpuHost({ shards: 4, shardBytes: 1024 * 1024 });
    await host.writeUnit(
      host.defaultUnitText.replace(
        '--trust-remote-code',
        '--trust-remote-code --tool-call-parser kimi_k2 --reasoning-parser kimi_k2',
      ),
      { reload: true },
    );
    test = await sessionForHost(host);
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready');
  });
  after(async () => {
    test?.dispose();
    await host?.stop();
  });

  it("a tool call parsed by the server's kimi_k2 parser comes back whole; a plain answer as text without its reasoning", async () => {
    const tool = await ask(test, '/root/models/Kimi-K2.6', true);
    assert.deepEqual(
      tool.events.filter((e) => e.kind === 'toolCall'),
      [{ kind: 'toolCall', callId: 'functions.get_weather:0', name: 'get_weather', input: { city: 'Paris' } }],
    );
    const plain = await ask(test, '/root/models/Kimi-K2.6', false);
    assert.equal(text(plain.events), 'The capital of France is Paris.');
    assert.ok(
      plain.events.some((e) => e.kind === 'reasoning'),
      'the reasoning was there, apart from the text',
    );
  });

  it('a server that leaks its reasoning after a tool result (reasoningLeakAfterTool): the verification shows it, the offer repairs it, the agent gets the answer only', async () => {
    const model = '/root/models/Kimi-K2.6';
    await host.configureSimulator({ chatFaults: { reasoningLeakAfterTool: true, needsReasoningBack: true } });
    try {
      const verified = await verifyServer(
        test.session.transport,
        test.session.client,
        targetFor(test.session.profile),
        () => undefined,
      );
      const offer = offerFor('ready', verified.checks);
      assert.ok(offer.offered);
      assert.equal(offer.toolCalling, true);
      assert.equal(offer.repair, 'afterToolResult');
      assert.match(offer.notes.join(' '), /^Tool calling repaired: after a tool result/);

      // The agent's two requests as the provider sends them: the call, then its result with the reasoning carried back.
      const memory = new ReasoningMemory();
      const send = async (messages: Parameters<typeof buildChatRequest>[0]['messages'], repair: boolean) => {
        const request = buildChatRequest({ model, messages, tools: [WEATHER], maxTokens: 256 });
        const history = memory.attach('sim', request.messages as never);
        const parts: AnswerPart[] = [];
        const turn = new ChatTurn({ reasoningInContent: repair ? 'beforeEnd' : 'leading', singleCall: false }, (p) =>
          parts.push(p),
        );
        const r = await test.session.client.postStream(
          '/v1/chat/completions',
          JSON.stringify({ ...request, messages: history.messages }),
          new AbortController().signal,
        );
        assert.ok(r.kind === 'http' && r.status === 200, JSON.stringify(r.kind));
        for await (const chunk of r.body as AsyncIterable<Buffer>) turn.push(chunk.toString('utf8'));
        turn.end();
        memory.remember('sim', history.messages, turn.toolCalls, turn.reasoning);
        return { parts, turn, carried: history.carried };
      };
      const question = {
        role: 'user' as const,
        parts: [{ kind: 'text' as const, text: 'What is the weather in Paris? Use the tool.' }],
      };
      const first = await send([question], false);
      const call = first.parts.find((p): p is Extract<AnswerPart, { kind: 'toolCall' }> => p.kind === 'toolCall')!;
      assert.equal(call.callId, 'functions.get_weather:0');
      const chain = [
        question,
        {
          role: 'assistant' as const,
          parts: [{ kind: 'toolCall' as const, callId: call.callId, name: call.name, input: call.input }],
        },
        {
          role: 'user' as const,
          parts: [
            { kind: 'toolResult' as const, callId: call.callId, text: '{"temperature_c":18,"conditions":"sunny"}' },
          ],
        },
      ];
      const repaired = await send(chain, true);
      assert.deepEqual(repaired.carried, [first.turn.reasoning.length]);
      const answer = repaired.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
      assert.equal(answer, 'According to the tool: {"temperature_c":18,"conditions":"sunny"}');
      assert.equal(repaired.turn.reasoning, 'The tool returned a result. I will summarise it for the user.');
      // Without the repair the agent would have got the reasoning and </think> as its answer.
      const raw = await send(chain, false);
      assert.match(
        raw.parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''),
        /^The tool returned a result\. I will summarise it for the user\.<\/think>According to the tool/,
      );
    } finally {
      await host.configureSimulator({ chatFaults: {} });
    }
  });

  it('with TCP forwarding forbidden by sshd, the same answer comes through curl on the host', async () => {
    await host.setTcpForwarding(false);
    const other = await sessionForHost(host);
    try {
      const tool = await ask(other, '/root/models/Kimi-K2.6', true);
      assert.equal(other.session.client.viaFallback, true, 'the request went through curl on the host');
      assert.deepEqual(
        tool.events.filter((e) => e.kind === 'toolCall').map((e) => (e as { input: unknown }).input),
        [{ city: 'Paris' }],
      );
    } finally {
      other.dispose();
      await host.setTcpForwarding(true);
    }
  });
});
