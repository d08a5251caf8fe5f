import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KIMI_PAT_STR_JS, KIMI_PAT_STR_UPSTREAM } from '../../src/engine/tokenizer/kimiPattern';
import { kimiSpecialTokens, parseTiktokenRanks, TokenizerFileError } from '../../src/engine/tokenizer/tiktokenFile';
import { counterFromFiles, estimateCounter } from '../../src/engine/tokenizer/counter';
import { frame, IMAGE_TOKENS_ESTIMATE } from '../../src/engine/tokenizer/framing';
import {
  counterKey,
  imageSupport,
  listingCommand,
  parseListing,
  readFileCommand,
  tokenizerFilesOf,
} from '../../src/engine/tokenizer/modelFolder';
import { directoryCache, ServedModelFiles } from '../../src/fleet/checks/servedModel';
import type { Transport } from '../../src/transport/transport';
import { contentParts, imagePart, imageRefusal, toolImagesMessage } from '../../src/fronts/vscode/chat/imageParts';
import { toOpenAiMessages } from '../../src/fronts/vscode/chat/openaiChat';

// The simulator's tokenizer: its own BPE, apart from js-tiktoken and @huggingface/tokenizers.
const sim = require('../gpu-host/sglang-sim/tokenizer.js') as {
  writeTokenizerFiles(dir: string, kind: string): void;
  loadTokenizer(dir: string): { encode(text: string): number[] };
};
const fixture = require('../fixtures/kimi-pretokenize.json') as {
  pattern: string;
  cases: { text: string; pieces: string[] }[];
};

function folder(kind: 'tiktoken' | 'tokenizer.json'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-tok-'));
  sim.writeTokenizerFiles(dir, kind);
  return dir;
}
const read = (dir: string, name: string) =>
  fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : undefined;
function filesOf(dir: string) {
  const out: Record<string, string> = {};
  for (const name of ['tiktoken.model', 'tokenizer.json', 'tokenizer_config.json']) {
    const text = read(dir, name);
    if (text !== undefined) out[name] = text;
  }
  return out;
}

const CORPUS = [
  ...fixture.cases.map((c) => c.text),
  'Hello <|im_end|> world',
  '<|im_user|>user<|im_middle|>What is the weather in Paris?<|im_end|>',
  '[BOS]x[EOS]',
  'A'.repeat(5000),
];

describe("Kimi's pre-tokenizer pattern in JavaScript", () => {
  it('splits every case of the corpus as the upstream pattern does under Python regex (the fixture)', () => {
    // The fixture's splits are those of the pattern the translation starts from.
    assert.equal(fixture.pattern, KIMI_PAT_STR_UPSTREAM);
    assert.ok(fixture.cases.length > 300);
    for (const c of fixture.cases) {
      const got = [...c.text.matchAll(new RegExp(KIMI_PAT_STR_JS, 'ug'))].map((m) => m[0]);
      assert.deepEqual(got, c.pieces, JSON.stringify(c.text));
    }
  });
});

describe('tiktoken.model and tokenizer_config.json', () => {
  it('refuses a malformed ranks file with the line', () => {
    assert.throws(() => parseTiktokenRanks(''), TokenizerFileError);
    assert.throws(() => parseTiktokenRanks('YQ== 0\nnot base64!\n'), /line 2/);
    assert.throws(() => parseTiktokenRanks('YQ== 0\nYg== 0\n'), /rank 0 is repeated/);
    assert.throws(() => parseTiktokenRanks('YQ== 5\n'), /out of 0\.\.0/);
    assert.equal(parseTiktokenRanks('YQ== 0\nYg== 1\n').count, 2);
  });

  it("names Kimi's special tokens from added_tokens_decoder, the rest reserved, 256 from the ranks' end", () => {
    const tokens = kimiSpecialTokens(163584, {
      added_tokens_decoder: { '163584': { content: '[BOS]' }, '163601': { content: '<|im_middle|>' } },
    });
    assert.equal(Object.keys(tokens).length, 256);
    assert.equal(tokens['[BOS]'], 163584);
    assert.equal(tokens['<|im_middle|>'], 163601);
    assert.equal(tokens['<|reserved_token_163585|>'], 163585);
    assert.equal(tokens['<|reserved_token_163839|>'], 163839);
  });
});

describe('exact counters against the simulated server tokenizer (an independent BPE)', () => {
  for (const kind of ['tiktoken', 'tokenizer.json'] as const) {
    it(`${kind}: every text of the corpus counts as the server counts it`, () => {
      const dir = folder(kind);
      const counter = counterFromFiles(filesOf(dir), 'a'.repeat(64));
      const server = sim.loadTokenizer(dir);
      assert.equal(counter.exact, true);
      let matched = 0;
      for (const text of CORPUS) if (counter.countText(text) === server.encode(text).length) matched++;
      assert.equal(matched, CORPUS.length, `${matched}/${CORPUS.length} matched`);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  it('a Kimi message counts as its chat template renders it: role markers, tool calls, tool results', () => {
    const dir = folder('tiktoken');
    const counter = counterFromFiles(filesOf(dir), 'a'.repeat(64));
    const server = sim.loadTokenizer(dir);
    const n = (s: string) => server.encode(s).length;
    assert.equal(
      counter.countMessage({ role: 'user', pieces: [{ kind: 'text', text: 'What is the weather in Paris?' }] }),
      n('<|im_user|>user<|im_middle|>What is the weather in Paris?<|im_end|>'),
    );
    assert.equal(
      counter.countMessage({
        role: 'assistant',
        pieces: [
          { kind: 'toolCall', callId: 'functions.get_weather:0', name: 'get_weather', input: { city: 'Paris' } },
        ],
      }),
      n(
        '<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0' +
          '<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
      ),
    );
    assert.equal(
      counter.countMessage({
        role: 'user',
        pieces: [{ kind: 'toolResult', callId: 'functions.get_weather:0', text: '18°C, sunny' }],
      }),
      n('<|im_system|>tool<|im_middle|>## Return of functions.get_weather:0\n18°C, sunny<|im_end|>'),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an image counts a fixed budget; the estimate is characters / 4 and 4 a message', () => {
    const segs = frame('plain', { role: 'user', pieces: [{ kind: 'image', bytes: 10 }] });
    assert.deepEqual(segs[0], { fixed: IMAGE_TOKENS_ESTIMATE });
    const e = estimateCounter('test');
    assert.equal(e.exact, false);
    assert.equal(e.countText('abcdefghi'), 3);
    assert.equal(e.countMessage({ role: 'user', pieces: [{ kind: 'text', text: 'abcdefghi' }] }), 3 + 4);
  });

  it('refuses a folder without tokenizer files, and a tokenizer.json that is not JSON', () => {
    assert.throws(() => counterFromFiles({}, 'x'), /neither tiktoken.model nor tokenizer.json/);
    assert.throws(() => counterFromFiles({ 'tokenizer.json': '{' }, 'x'), /tokenizer.json is not JSON/);
  });
});

describe('the model folder: listing, reads, images', () => {
  it('quotes the folder and refuses a relative one', () => {
    assert.match(listingCommand("/models/it's here"), /cd -- '\/models\/it'\\''s here'/);
    assert.throws(() => listingCommand('models/x'), /Invalid model folder/);
    assert.equal(readFileCommand('/m/K2/', 'tiktoken.model'), `head -c ${(16 << 20) + 1} -- /m/K2/tiktoken.model`);
  });

  it('parses the listing and config.json; picks tiktoken.model before tokenizer.json', () => {
    const sum = (c: string) => c.repeat(64);
    const listing = parseListing(
      `F config.json 20 ${sum('a')}\nF tiktoken.model 9 ${sum('b')}\nF tokenizer.json 9 ${sum('c')}\nF tokenizer_config.json 3 ${sum('d')}\nF evil 1 ${sum('e')}\n--- config.json\n{"vision_config": {}}`,
    );
    assert.equal(listing.files.length, 4);
    assert.equal(listing.config, '{"vision_config": {}}');
    const files = tokenizerFilesOf(listing);
    assert.deepEqual(
      files.map((f) => f.name),
      ['tiktoken.model', 'tokenizer_config.json'],
    );
    assert.equal(counterKey(files), `tiktoken.model:${sum('b')},tokenizer_config.json:${sum('d')}`);
    assert.deepEqual(parseListing('NOFOLDER\n'), { found: false, files: [] });
  });

  it('a vision tower in config.json means images', () => {
    assert.equal(imageSupport('{"vision_config": {"patch_size": 14}}').images, true);
    assert.equal(imageSupport('{"model_type": "kimi_k2"}').images, false);
    assert.match(imageSupport(undefined).why, /no readable config.json/);
    assert.match(imageSupport('{').why, /not JSON/);
  });
});

/** A transport that runs the commands in a local shell, and counts them. */
function localTransport(): Transport & { commands: string[] } {
  const { execSync } = require('node:child_process') as typeof import('node:child_process');
  const commands: string[] = [];
  return {
    commands,
    description: 'local',
    state: { kind: 'connected' },
    handshakes: 0,
    async exec(command: string) {
      commands.push(command);
      try {
        return { stdout: execSync(command, { shell: '/bin/sh', encoding: 'utf8' }), stderr: '', code: 0 };
      } catch (e) {
        const err = e as { stdout?: string; stderr?: string; status?: number };
        return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: err.status ?? 1 };
      }
    },
  } as unknown as Transport & { commands: string[] };
}

describe('ServedModelFiles: reads a tokenizer once, then from the cache by checksum', function () {
  // Loading a tokenizer twice is seconds of CPU, many more on a busy machine; nothing here is timed.
  this.timeout(60_000);
  it('the second process (a fresh instance) reads no tokenizer file from the host', async () => {
    const dir = folder('tiktoken');
    fs.writeFileSync(path.join(dir, 'config.json'), '{"model_type":"kimi_k2"}');
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-cache-'));
    const first = new ServedModelFiles(directoryCache(cacheDir));
    const t1 = localTransport();
    const look = await first.look(t1, dir);
    assert.equal(look.images.images, false);
    const c1 = await first.counter(t1, look);
    assert.equal(first.stats.filesRead, 2);
    assert.equal(t1.commands.length, 3, 'one listing, two reads');
    const second = new ServedModelFiles(directoryCache(cacheDir));
    const t2 = localTransport();
    const c2 = await second.counter(t2, await second.look(t2, dir));
    assert.equal(t2.commands.length, 1, 'the listing only');
    assert.equal(second.stats.cacheHits, 2);
    assert.equal(
      await c1.countText('What is the weather in Paris?'),
      await c2.countText('What is the weather in Paris?'),
    );
    first.dispose();
    second.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });
});

describe('images as OpenAI image_url parts', () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  it('a data part with an image type is an image; others are not', () => {
    assert.deepEqual(imagePart('image/PNG', png), { kind: 'image', mimeType: 'image/png', data: png });
    assert.equal(imagePart('text/plain', png), undefined);
    assert.equal(imagePart('image/png', 'not bytes'), undefined);
  });

  it('a user message with text and an image becomes content parts with a data: URL, in order', () => {
    const out = toOpenAiMessages([
      {
        role: 'user',
        parts: [
          { kind: 'text', text: 'What is ' },
          { kind: 'text', text: 'this?' },
          { kind: 'image', mimeType: 'image/png', data: png },
        ],
      },
    ]);
    assert.deepEqual(out, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
        ],
      },
    ]);
    assert.deepEqual(contentParts([{ kind: 'text', text: '' }]), []);
  });

  it("a tool's images follow its tool message as a user message; a text-only history is unchanged", () => {
    const out = toOpenAiMessages([
      {
        role: 'user',
        parts: [{ kind: 'toolResult', callId: 'c1', text: 'shot', images: [imagePart('image/jpeg', png)!] }],
      },
    ]);
    assert.deepEqual(out[0], { role: 'tool', tool_call_id: 'c1', content: 'shot' });
    assert.equal((out[1] as { role: string }).role, 'user');
    assert.equal(toolImagesMessage([{ callId: 'c', images: [] }]), undefined);
    assert.deepEqual(toOpenAiMessages([{ role: 'user', parts: [{ kind: 'text', text: 'hi' }] }]), [
      { role: 'user', content: 'hi' },
    ]);
  });

  it('a model without a vision tower refuses images by name and count', () => {
    assert.equal(imageRefusal(0, 'Kimi K2.6 on gpu1', false, undefined), undefined);
    assert.equal(imageRefusal(2, 'Kimi K2.6 on gpu1', true, undefined), undefined);
    assert.match(
      imageRefusal(2, 'Kimi K2.6 on gpu1', false, 'config.json has no vision tower (vision_config)')!,
      /Kimi K2\.6 on gpu1 does not take images \(config.json has no vision tower \(vision_config\)\); the request carries 2 image\(s\)/,
    );
  });
});
