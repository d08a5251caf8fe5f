/**
 * The chat model's token counts and images against the real sshd + simulated host: the model
 * folder found from the unit's --model-path, its tokenizer read over SSH (once, then from the
 * cache by checksum), and local counts compared with the server's own POST /tokenize through the
 * tunnel on a corpus of prompts; a model with a vision tower takes image_url parts, one without
 * refuses them.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { directoryCache, modelFolderOf, ServedModelFiles } from '../../src/fleet/checks/servedModel';
import type { ServerProfile } from '../../src/config/config';
import type { Transport } from '../../src/transport/transport';
import { countConversation } from '../util/conversationCount';
import type { FramedMessage } from '../../src/engine/tokenizer/framing';
import { buildChatRequest, ChatStreamAccumulator } from '../../src/fronts/vscode/chat/openaiChat';
import { SseDecoder } from '../../src/fronts/vscode/chat/sse';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';

/** The served model's token counter, as the chat provider builds it in two steps: the folder's look, then its counter. */
async function loadTokenCounter(transport: Transport, server: ServerProfile, files: ServedModelFiles) {
  const folder = await modelFolderOf(transport, server);
  if (!folder) throw new Error(`${server.name}: the command line names no local --model-path`);
  const look = await files.look(transport, folder);
  return { counter: await files.counter(transport, look), look };
}

const simTokenizer = require('../gpu-host/sglang-sim/tokenizer.js') as {
  writeTokenizerFiles(dir: string, kind: string): void;
};
const fixture = require('../fixtures/kimi-pretokenize.json') as { cases: { text: string }[] };

const CORPUS = [
  'What is the weather in Paris? Use the tool.',
  'You are Kimi, an AI assistant created by Moonshot AI.',
  '<|im_user|>user<|im_middle|>Hello<|im_end|>',
  'def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)\n',
  '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
  '你好世界，今天天气很好。',
  ...fixture.cases.slice(0, 120).map((c) => c.text),
].filter((t) => t !== '');

async function serverCount(test: TestSession, text: string): Promise<number> {
  const r = await test.session.client.request(
    'POST',
    '/tokenize',
    JSON.stringify({ model: '/root/models/Kimi-K2.6', prompt: text, add_special_tokens: false }),
  );
  assert.equal(r.kind, 'http');
  if (r.kind !== 'http') throw new Error('unreachable');
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { count: number }).count;
}

async function chat(test: TestSession, withImage: boolean): Promise<{ status: number; text: string }> {
  const png = new Uint8Array(fs.readFileSync(path.join(__dirname, '../../media/icon.png')).subarray(0, 256));
  const body = buildChatRequest({
    model: '/root/models/Kimi-K2.6',
    messages: [
      {
        role: 'user',
        parts: [
          { kind: 'text', text: 'What is in this picture?' },
          ...(withImage ? [{ kind: 'image' as const, mimeType: 'image/png', data: png }] : []),
        ],
      },
    ],
    maxTokens: 256,
  });
  const r = await test.session.client.postStream(
    '/v1/chat/completions',
    JSON.stringify(body),
    new AbortController().signal,
  );
  if (r.kind !== 'http') throw new Error(JSON.stringify(r));
  const decoder = new SseDecoder();
  const acc = new ChatStreamAccumulator();
  let raw = '';
  let text = '';
  for await (const chunk of r.body as AsyncIterable<Buffer>) {
    raw += chunk.toString('utf8');
    if (r.status === 200)
      for (const data of decoder.push(chunk.toString('utf8')))
        for (const e of acc.push(data)) if (e.kind === 'text') text += e.text;
  }
  return { status: r.status, text: r.status === 200 ? text : raw };
}

describe('chat token counts and images over real SSH', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession;

  before(async () => {
    host = await startGpuHost({ shards: 2, shardBytes: 256 * 1024 });
    test = await sessionForHost(host);
    assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');
  });
  after(async () => {
    test?.dispose();
    await host?.stop();
  });

  const restart = async () => assert.equal((await test.session.watch('restart', FAST_WATCH)).end, 'ready');

  it("counts Kimi's tiktoken.model locally exactly as the server's /tokenize, and reads it from the host once", async () => {
    const server = test.settings.servers[0]!;
    const folder = await modelFolderOf(test.session.transport, server);
    assert.equal(folder, host.modelPath, "the unit's --model-path");
    const cacheDir = path.join(test.dir, 'tokenizers');
    const files = new ServedModelFiles(directoryCache(cacheDir));
    const look = await files.look(test.session.transport, folder!);
    assert.equal(look.images.images, false);
    const counter = await files.counter(test.session.transport, look);
    assert.match(counter.how, /^exact: the model's tiktoken\.model \(\d+ ranks/);
    assert.equal(files.stats.filesRead, 2, 'tiktoken.model and tokenizer_config.json read over SSH');

    let matched = 0;
    const started = process.hrtime.bigint();
    const local: number[] = [];
    for (const t of CORPUS) local.push(await counter.countText(t));
    const perCallMs = Number(process.hrtime.bigint() - started) / 1e6 / CORPUS.length;
    for (let i = 0; i < CORPUS.length; i++) if (local[i] === (await serverCount(test, CORPUS[i]!))) matched++;
    console.log(
      `      tiktoken.model: ${matched}/${CORPUS.length} counts match /tokenize; ${perCallMs.toFixed(3)} ms per local count`,
    );
    assert.equal(matched, CORPUS.length);

    // Another window (a fresh reader, the same cache): only the listing crosses the connection.
    const again = new ServedModelFiles(directoryCache(cacheDir));
    const counter2 = await again.counter(test.session.transport, await again.look(test.session.transport, folder!));
    assert.equal(again.stats.filesRead, 0);
    assert.equal(again.stats.cacheHits, 2);
    assert.equal(await counter2.countText(CORPUS[0]!), local[0]);
  });

  it('40 messages and 10 tools count with zero remote round trips (the bench:chat hook)', async () => {
    const files = new ServedModelFiles(directoryCache(path.join(test.dir, 'tokenizers')));
    const { counter } = await loadTokenCounter(test.session.transport, test.settings.servers[0]!, files);
    const transport = test.session.transport as unknown as { exec: (...a: unknown[]) => unknown };
    const client = test.session.client as unknown as { request: (...a: unknown[]) => unknown };
    const [exec, request] = [transport.exec, client.request];
    let remote = 0;
    transport.exec = (...a: unknown[]) => (remote++, exec.apply(test.session.transport, a));
    client.request = (...a: unknown[]) => (remote++, request.apply(test.session.client, a));
    try {
      const messages: FramedMessage[] = Array.from({ length: 40 }, (_, i) =>
        i % 4 === 2
          ? {
              role: 'assistant',
              pieces: [
                { kind: 'toolCall', callId: `functions.read:${i}`, name: 'read', input: { path: `/src/f${i}.ts` } },
              ],
            }
          : i % 4 === 3
            ? {
                role: 'user',
                pieces: [
                  {
                    kind: 'toolResult',
                    callId: `functions.read:${i - 1}`,
                    text: CORPUS[i % CORPUS.length]!.repeat(20),
                  },
                ],
              }
            : {
                role: i % 2 ? 'assistant' : 'user',
                pieces: [{ kind: 'text', text: CORPUS[i % CORPUS.length]!.repeat(8) }],
              },
      );
      const tools = Array.from({ length: 10 }, (_, i) => ({
        name: `tool_${i}`,
        description: 'Reads a file of the workspace and returns its text.',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      }));
      const first = await countConversation(counter, messages, tools);
      const again = await countConversation(counter, messages, tools);
      console.log(
        `      40 messages + 10 tools: ${first.tokens} tokens, ${first.calls} counts in ${first.ms.toFixed(1)} ms (${(first.ms / first.calls).toFixed(2)} ms/count), again ${again.ms.toFixed(1)} ms; remote calls ${remote}`,
      );
      assert.equal(remote, 0);
      assert.equal(again.tokens, first.tokens);
      assert.ok(first.tokens > 1000);
    } finally {
      transport.exec = exec;
      client.request = request;
    }
  });

  it('a model folder with a tokenizer.json (and no tiktoken.model) counts with it, as the server does', async () => {
    fs.rmSync(path.join(host.modelPath, 'tiktoken.model'));
    simTokenizer.writeTokenizerFiles(host.modelPath, 'tokenizer.json');
    await restart();
    const files = new ServedModelFiles(directoryCache(path.join(test.dir, 'tokenizers')));
    const counter = await files.counter(
      test.session.transport,
      await files.look(test.session.transport, host.modelPath),
    );
    assert.match(counter.how, /^exact: the model's tokenizer\.json/);
    let matched = 0;
    for (const t of CORPUS) if ((await counter.countText(t)) === (await serverCount(test, t))) matched++;
    console.log(`      tokenizer.json: ${matched}/${CORPUS.length} counts match /tokenize`);
    assert.equal(matched, CORPUS.length);
  });

  it('a model without a vision tower refuses image_url parts; with vision_config in config.json it takes them', async () => {
    const refused = await chat(test, true);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /not a multimodal model/);

    const configPath = path.join(host.modelPath, 'config.json');
    const config = JSON.parse(fs.readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(configPath, JSON.stringify({ ...config, vision_config: { model_type: 'moonvit' } }));
    await restart();
    const files = new ServedModelFiles(directoryCache(path.join(test.dir, 'tokenizers')));
    const look = await files.look(test.session.transport, host.modelPath);
    assert.deepEqual(look.images, { images: true, why: 'config.json has vision_config' });
    const answer = await chat(test, true);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.text, 'I see 1 image(s): image/png.');
  });
});
