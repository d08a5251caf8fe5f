import { strict as assert } from 'node:assert';
import { Readable } from 'node:stream';
import { neutralMessage, partText, toNeutralPart } from '../../src/fronts/vscode/chat/chatParts';
import { readAnswer, readText, type AnswerSink } from '../../src/fronts/vscode/chat/chatStream';
import { serverIs, stateSoon } from '../../src/fronts/vscode/chat/serverLeft';
import { engineName, serverNameOf } from '../../src/fronts/vscode/chat/modelInfo';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import type { ServerProfile } from '../../src/config/config';
import type { FleetEvent } from '../../src/fleet/fleetTypes';

// The chat provider's pure parts: how VS Code's message parts are read, how an answer becomes the
// turn or the error the user sees, and what a request says when its server has left `ready`.

class Sink implements AnswerSink {
  readonly chunks: string[] = [];
  completion: string | undefined;
  push(chunk: string): void {
    this.chunks.push(chunk);
  }
  pushCompletion(body: string): void {
    this.completion = body;
  }
}

const http = (status: number, contentType: string, chunks: (string | Buffer)[]) =>
  ({ kind: 'http', status, contentType, body: Readable.from(chunks) }) as const;

describe('chat provider: message parts', () => {
  it('reads a tool call, a tool result (text and images), an image and text by their shape', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    assert.deepEqual(toNeutralPart({ callId: 'c1', name: 'get_time', input: { zone: 'UTC' } }), {
      kind: 'toolCall',
      callId: 'c1',
      name: 'get_time',
      input: { zone: 'UTC' },
    });
    assert.deepEqual(
      toNeutralPart({ callId: 'c1', content: [{ value: '12:00' }, { mimeType: 'image/png', data: png }] }),
      {
        kind: 'toolResult',
        callId: 'c1',
        text: '12:00',
        images: [{ kind: 'image', mimeType: 'image/png', data: png }],
      },
    );
    assert.deepEqual(toNeutralPart({ mimeType: 'IMAGE/PNG; x=1', data: png }), {
      kind: 'image',
      mimeType: 'image/png',
      data: png,
    });
    assert.deepEqual(toNeutralPart({ value: 'hello' }), { kind: 'text', text: 'hello' });
  });

  it('a tool result without images has no images field', () => {
    assert.deepEqual(toNeutralPart({ callId: 'c2', content: [{ value: 'a' }, { value: 'b' }] }), {
      kind: 'toolResult',
      callId: 'c2',
      text: 'ab',
    });
  });

  it('reads text and JSON data parts as text, other data as nothing, other values as JSON', () => {
    assert.equal(partText({ mimeType: 'text/plain', data: Buffer.from('plain') }), 'plain');
    assert.equal(partText({ mimeType: 'application/json', data: Buffer.from('{"a":1}') }), '{"a":1}');
    assert.equal(partText({ mimeType: 'application/octet-stream', data: Buffer.from('x') }), '');
    assert.equal(partText('bare'), 'bare');
    assert.equal(partText({ n: 1 }), '{"n":1}');
    assert.equal(partText(undefined), '');
    assert.equal(partText(null), '');
  });

  it('leaves empty parts out of a message', () => {
    assert.deepEqual(
      neutralMessage('user', [{ value: '' }, { value: 'hi' }, null, { mimeType: 'x/y', data: Buffer.from('') }]),
      {
        role: 'user',
        parts: [{ kind: 'text', text: 'hi' }],
      },
    );
  });
});

describe('chat provider: reading the answer', () => {
  it('feeds an SSE stream chunk by chunk, calling onChunk each time', async () => {
    const sink = new Sink();
    let chunks = 0;
    await readAnswer(
      http(200, 'text/event-stream', ['data: a\n\n', Buffer.from('data: b\n\n')]),
      'Kimi on gpu1',
      sink,
      () => chunks++,
    );
    assert.deepEqual(sink.chunks, ['data: a\n\n', 'data: b\n\n']);
    assert.equal(chunks, 2);
    assert.equal(sink.completion, undefined);
  });

  it('feeds a JSON answer whole', async () => {
    const sink = new Sink();
    await readAnswer(http(200, 'application/json', ['{"choices":', '[]}']), 'Kimi on gpu1', sink, () => undefined);
    assert.equal(sink.completion, '{"choices":[]}');
    assert.deepEqual(sink.chunks, []);
  });

  it('says a closed port, a transport error and an HTTP error in the user’s words', async () => {
    const sink = new Sink();
    await assert.rejects(
      readAnswer({ kind: 'refused' }, 'Kimi on gpu1', sink, () => undefined),
      {
        message: "Kimi on gpu1: the server's port is closed (connection refused).",
      },
    );
    await assert.rejects(
      readAnswer({ kind: 'error', message: 'channel closed' }, 'Kimi on gpu1', sink, () => undefined),
      {
        message: 'Kimi on gpu1: channel closed',
      },
    );
    await assert.rejects(
      readAnswer(
        http(400, 'application/json', ['{"detail":"context too long"}']),
        'Kimi on gpu1',
        sink,
        () => undefined,
      ),
      { message: 'Kimi on gpu1 refused the request: HTTP 400: context too long' },
    );
    assert.deepEqual(sink.chunks, []);
  });

  it('reads at most the cap', async () => {
    assert.equal(await readText(Readable.from(['abcd', 'efgh', 'ijkl']), 6), 'abcdef');
    assert.equal(await readText(Readable.from([]), 6), '');
  });
});

describe('chat provider: a server that left ready', () => {
  const server = { name: 'gpu1' } as ServerProfile;
  const state = (patch: Partial<LoadState>): LoadState => ({ ...initialState(0), ...patch });

  it('names the state, with the percentage while loading', () => {
    assert.equal(serverIs(state({ verdict: 'failed' })), 'the server failed');
    assert.equal(serverIs(state({ verdict: 'loading', progress: 0.129 })), 'the server is loading 12%');
    assert.equal(serverIs(state({ verdict: 'stopping' })), 'the server is stopping');
  });

  function fakeFleet(initial: LoadState | undefined) {
    let current = initial;
    const listeners = new Set<(e: FleetEvent) => void>();
    return {
      set(next: LoadState, name = 'gpu1') {
        current = next;
        for (const l of [...listeners]) l({ type: 'state', server: { name }, state: next } as unknown as FleetEvent);
      },
      listeners,
      fleet: {
        snapshot: () => ({ state: current }),
        onEvent: (l: (e: FleetEvent) => void) => {
          listeners.add(l);
          return { dispose: () => listeners.delete(l) };
        },
      } as never,
    };
  }

  it('answers at once when the watch already sees the server down', async () => {
    const f = fakeFleet(state({ verdict: 'stopped' }));
    assert.equal(await stateSoon(f.fleet, server, 60_000), 'the server is stopped');
    assert.equal(f.listeners.size, 0);
  });

  it('waits for the watch to see it, ignoring other servers and ready states, and stops listening', async () => {
    const f = fakeFleet(state({ verdict: 'ready' }));
    const soon = stateSoon(f.fleet, server, 60_000);
    f.set(state({ verdict: 'unreachable' }), 'gpu2');
    f.set(state({ verdict: 'ready' }));
    f.set(state({ verdict: 'unreachable' }));
    assert.equal(await soon, 'the server is unreachable');
    assert.equal(f.listeners.size, 0);
  });

  it('gives undefined when the server stays ready', async () => {
    const f = fakeFleet(state({ verdict: 'ready' }));
    assert.equal(await stateSoon(f.fleet, server, 1), undefined);
    assert.equal(f.listeners.size, 0);
  });
});

describe('chat provider: model names', () => {
  it('names the engine from owned_by, else SGLang when /server_info answered', () => {
    assert.equal(engineName('vllm', true), 'vLLM');
    assert.equal(engineName('sglang', false), 'SGLang');
    assert.equal(engineName(undefined, true), 'SGLang');
    assert.equal(engineName('someone', false), 'an OpenAI-compatible server');
  });

  it('takes the server name from a model id, with or without the vendor', () => {
    assert.equal(serverNameOf('gpu1'), 'gpu1');
    assert.equal(serverNameOf('kimi-service/gpu1'), 'gpu1');
  });
});
