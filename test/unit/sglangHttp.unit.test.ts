import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { hintMark } from '../../src/util/hintMark';
import {
  describeResult,
  requestHeaders,
  ServerHttpClient,
  type FetchLike,
  type HttpResult,
} from '../../src/engine/serverHttp';
import {
  judgeCompletion,
  judgeHealth,
  parseModels,
  statusReason,
  unauthorizedReason,
} from '../../src/engine/httpAnswers';
import { waitFor } from '../util/waitFor';

const JSON_CT = 'application/json';
const COMPLETION = JSON.stringify({
  id: 'cmpl-1',
  object: 'text_completion',
  created: 1795930812,
  model: '/root/models/Kimi-K2.6',
  choices: [{ index: 0, text: ' there', logprobs: null, finish_reason: 'length', matched_stop: null }],
  usage: { prompt_tokens: 1, total_tokens: 2, completion_tokens: 1, prompt_tokens_details: null },
});

describe('sglangHttp: judges', () => {
  it('health', () => {
    assert.equal(judgeHealth(200), 'ok');
    assert.equal(judgeHealth(503), 'warming');
    assert.equal(judgeHealth(500), 'error');
    assert.equal(judgeHealth(404), 'error');
  });

  it('a real completion is ready', () => {
    assert.deepEqual(judgeCompletion(200, 'application/json', COMPLETION, false), { ok: true, text: ' there' });
    assert.deepEqual(judgeCompletion(200, 'application/json; charset=utf-8', COMPLETION, false), {
      ok: true,
      text: ' there',
    });
    const emptyText = COMPLETION.replace('" there"', '""');
    assert.deepEqual(judgeCompletion(200, JSON_CT, emptyText, false), { ok: true, text: '' });
  });

  const notReady: Array<[string, number, string, string, boolean, RegExp]> = [
    [
      'error JSON whose message contains "choices"',
      400,
      JSON_CT,
      JSON.stringify({
        object: 'error',
        message: "1 validation error: 'choices' is not allowed here",
        type: 'BadRequestError',
        param: null,
        code: 400,
      }),
      false,
      /HTTP 400: 1 validation error: 'choices'/,
    ],
    [
      'error JSON with HTTP 200',
      200,
      JSON_CT,
      JSON.stringify({
        object: 'error',
        message: 'The model `x` does not exist; choices unavailable',
        type: 'NotFoundError',
        code: 404,
      }),
      false,
      /answered with an error: The model/,
    ],
    ['choices: []', 200, JSON_CT, JSON.stringify({ object: 'text_completion', choices: [] }), false, /empty "choices"/],
    ['choices missing', 200, JSON_CT, JSON.stringify({ object: 'text_completion' }), false, /no "choices"/],
    [
      'choice without text',
      200,
      JSON_CT,
      JSON.stringify({ choices: [{ index: 0, text: null }] }),
      false,
      /no generated text/,
    ],
    [
      'HTML 500',
      500,
      'text/html; charset=utf-8',
      '<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body>choices</body></html>',
      false,
      /HTTP 500 with an HTML page/,
    ],
    ['truncated JSON', 200, JSON_CT, COMPLETION.slice(0, 80), false, /not valid JSON/],
    ['cut off at the cap', 200, JSON_CT, COMPLETION, true, /too large/],
    ['wrong content type', 200, 'text/plain', COMPLETION, false, /content type "text\/plain"/],
    ['no content type', 200, '', COMPLETION, false, /content type "\(none\)"/],
    ['503 empty body (warming up)', 503, '', '', false, /HTTP 503 with an empty body/],
    ['empty 200', 200, JSON_CT, '', false, /empty/],
    ['a JSON array', 200, JSON_CT, '[{"choices":[{"text":"x"}]}]', false, /not valid JSON|no "choices"/],
    [
      'FastAPI detail 422',
      422,
      JSON_CT,
      JSON.stringify({ detail: 'Unprocessable: choices' }),
      false,
      /HTTP 422: Unprocessable/,
    ],
  ];
  for (const [name, status, ct, body, truncated, reason] of notReady) {
    it(`not ready: ${name}`, () => {
      const v = judgeCompletion(status, ct, body, truncated);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, reason);
    });
  }

  it('models', () => {
    const body = JSON.stringify({
      object: 'list',
      data: [
        {
          id: '/root/models/Kimi-K2.6',
          object: 'model',
          created: 1,
          owned_by: 'sglang',
          root: '/root/models/Kimi-K2.6',
          max_model_len: 262144,
        },
      ],
    });
    assert.deepEqual(parseModels(body), ['/root/models/Kimi-K2.6']);
    assert.deepEqual(parseModels('{"object":"list","data":[]}'), []);
    assert.deepEqual(parseModels('<html>'), []);
  });
});

// ---------------------------------------------------------------- client against a local server

/** Like src/transport/httpAgent.ts: the connection is opened asynchronously and may fail. */
class FailingAgent extends http.Agent {
  constructor(private readonly error: Error) {
    super({ keepAlive: false });
  }
  override createConnection(
    _options: http.ClientRequestArgs,
    callback: (err: Error | null, socket?: Duplex) => void,
  ): undefined {
    setImmediate(() => callback(this.error));
    return undefined;
  }
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

describe('sglangHttp: client', function () {
  this.timeout(20000);
  let server: http.Server;
  let base: string;
  const routes = new Map<string, Handler>();
  const sockets = new Set<import('node:net').Socket>();
  let bytesSent20mb = 0;

  before(async () => {
    server = http.createServer((req, res) => {
      const h = routes.get(`${req.method} ${req.url}`);
      if (h) h(req, res);
      else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"detail":"Not Found"}');
      }
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  afterEach(() => routes.clear());

  it('503 during warm-up, then 200', async () => {
    let warm = true;
    routes.set('GET /health', (_q, res) => {
      res.writeHead(warm ? 503 : 200);
      res.end();
    });
    const c = new ServerHttpClient(base + '/', undefined);
    const r1 = await c.health();
    assert.deepEqual(r1, { kind: 'http', status: 503, contentType: '', body: '', truncated: false });
    warm = false;
    const r2 = await c.health();
    assert.equal(r2.kind === 'http' && judgeHealth(r2.status), 'ok');
  });

  it('completion: request shape and a ready answer', async () => {
    let seen: unknown;
    routes.set('POST /v1/completions', (req, res) => {
      let b = '';
      req.on('data', (d: Buffer) => (b += d.toString()));
      req.on('end', () => {
        seen = JSON.parse(b);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(COMPLETION);
      });
    });
    const c = new ServerHttpClient(base, undefined);
    const r = await c.completion('/root/models/Kimi-K2.6');
    assert.deepEqual(seen, { model: '/root/models/Kimi-K2.6', prompt: 'hi', max_tokens: 1, temperature: 0 });
    assert.equal(r.kind, 'http');
    if (r.kind === 'http')
      assert.deepEqual(judgeCompletion(r.status, r.contentType, r.body, r.truncated), { ok: true, text: ' there' });
  });

  it('a server that accepts and never answers: timeout', async () => {
    routes.set('GET /health', () => {
      /* hang */
    });
    const c = new ServerHttpClient(base, undefined, undefined, { timeoutMs: 300 });
    const t0 = Date.now();
    assert.deepEqual(await c.health(), { kind: 'timeout' });
    assert.ok(Date.now() - t0 < 2000);
  });

  it('headers sent, body hangs mid-way: timeout', async () => {
    routes.set('POST /v1/completions', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"choices":[');
    });
    const c = new ServerHttpClient(base, undefined, undefined, { completionTimeoutMs: 300 });
    assert.deepEqual(await c.completion('m'), { kind: 'timeout' });
  });

  it('a 20 MB body is capped, not read whole', async () => {
    bytesSent20mb = 0;
    let responseClosed = false;
    routes.set('POST /v1/completions', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let left = 20 * 1024 * 1024;
      const pump = (): void => {
        while (left > 0) {
          left -= chunk.length;
          bytesSent20mb += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => {
        left = 0;
        responseClosed = true;
      });
      pump();
    });
    const c = new ServerHttpClient(base, undefined);
    const r = await c.completion('m');
    assert.equal(r.kind, 'http');
    if (r.kind === 'http') {
      assert.equal(r.truncated, true);
      assert.equal(Buffer.byteLength(r.body), 1024 * 1024);
      assert.equal(judgeCompletion(r.status, r.contentType, r.body, r.truncated).ok, false);
    }
    // The client hung up after 1 MB: once the server has seen the close, it writes no more.
    await waitFor(() => responseClosed, { timeoutMs: 5000, message: 'the server to see the response closed' });
    assert.ok(bytesSent20mb < 20 * 1024 * 1024, `server wrote ${bytesSent20mb} bytes`);
  });

  it('refused port', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const c = new ServerHttpClient(`http://127.0.0.1:${port}`, undefined);
    assert.deepEqual(await c.health(), { kind: 'refused' });
  });

  it('an agent whose connection fails with ECONNREFUSED (the SSH tunnel) is refused', async () => {
    const err = Object.assign(
      new Error('connect to 127.0.0.1:30001 from the SSH host failed: (SSH) Channel open failure: Connection refused'),
      {
        code: 'ECONNREFUSED',
      },
    );
    const c = new ServerHttpClient('http://127.0.0.1:30001', new FailingAgent(err));
    const r: HttpResult = await c.health();
    assert.deepEqual(r, { kind: 'refused' });
  });

  it('a refused SSH connection (transport down) is an error, not a closed port', async () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 10.1.1.1:22'), {
      name: 'TransportError',
      kind: 'refused',
    });
    const r = await new ServerHttpClient('http://127.0.0.1:30001', new FailingAgent(err)).health();
    assert.equal(r.kind, 'error');
    if (r.kind === 'error') assert.match(r.message, /ECONNREFUSED 10\.1\.1\.1:22/);
  });

  it('other failures are errors with a message', async () => {
    const c = new ServerHttpClient('http://no-such-host.invalid:1', undefined);
    const r = await c.health();
    assert.equal(r.kind, 'error');
  });

  it('models and serverInfo (falls back to /get_server_info on 404)', async () => {
    routes.set('GET /v1/models', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'kimi', object: 'model' }] }));
    });
    routes.set('GET /get_server_info', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          model_path: '/root/models/Kimi-K2.6',
          tp_size: 8,
          reasoning_parser: 'kimi_k2',
          status: 'ready',
        }),
      );
    });
    const c = new ServerHttpClient(base, undefined);
    assert.deepEqual(await c.models(), { ok: true, ids: ['kimi'] });
    const info = await c.serverInfo();
    assert.equal(info.ok, true);
    if (info.ok) {
      assert.equal(info.path, '/get_server_info');
      assert.equal(info.info['tp_size'], 8);
    }
    routes.set('GET /server_info', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"tp_size":4}');
    });
    const info2 = await c.serverInfo();
    assert.ok(info2.ok && info2.path === '/server_info' && info2.info['tp_size'] === 4);
    routes.delete('GET /v1/models');
    const m = await c.models();
    assert.equal(m.ok, false);
  });
});

// ---------------------------------------------------------------- API key

describe('sglangHttp: API key', () => {
  // The hint's words are each front's (present/hints); the core marks its place.
  const NO_KEY = `HTTP 401: the server wants an API key (--api-key): ${hintMark('set-api-key')}`;
  const BAD_KEY = 'HTTP 401: the server refused the API key';

  it('401 reasons say what to do', () => {
    assert.equal(unauthorizedReason(false), NO_KEY);
    assert.equal(unauthorizedReason(true), BAD_KEY);
    assert.equal(statusReason(401), NO_KEY);
    assert.equal(statusReason(401, true), BAD_KEY);
    assert.equal(statusReason(503, true), 'HTTP 503');
    const body = JSON.stringify({ error: 'Unauthorized' });
    assert.deepEqual(judgeCompletion(401, JSON_CT, body, false), { ok: false, reason: NO_KEY });
    assert.deepEqual(judgeCompletion(401, JSON_CT, body, false, true), { ok: false, reason: BAD_KEY });
    assert.deepEqual(judgeCompletion(401, '', '', false, false), { ok: false, reason: NO_KEY });
    // other statuses are unchanged by the flag
    assert.match(
      (judgeCompletion(500, JSON_CT, '{"message":"boom"}', false, true) as { reason: string }).reason,
      /^HTTP 500: boom/,
    );
    assert.deepEqual(judgeCompletion(200, JSON_CT, COMPLETION, false, true), { ok: true, text: ' there' });
  });

  it('describeResult of a 401', () => {
    assert.equal(describeResult({ kind: 'http', status: 401, contentType: '', body: '', truncated: false }), NO_KEY);
    assert.equal(
      describeResult({ kind: 'http', status: 401, contentType: '', body: '', truncated: false, apiKeySent: true }),
      BAD_KEY,
    );
    assert.equal(
      describeResult({ kind: 'http', status: 500, contentType: '', body: '', truncated: true }),
      'HTTP 500 (body cut off)',
    );
  });

  it('requestHeaders: Bearer on everything but /health', () => {
    assert.deepEqual(requestHeaders('/health', false, 'k'), { Accept: 'application/json' });
    assert.deepEqual(requestHeaders('/health?x=1', false, 'k'), { Accept: 'application/json' });
    assert.deepEqual(requestHeaders('/v1/models', false, 'k'), {
      Accept: 'application/json',
      Authorization: 'Bearer k',
    });
    assert.deepEqual(requestHeaders('/metrics', false, 'k'), { Accept: 'application/json', Authorization: 'Bearer k' });
    assert.deepEqual(requestHeaders('/v1/completions', true, 'k'), {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      Authorization: 'Bearer k',
    });
    assert.deepEqual(requestHeaders('/v1/completions', true, undefined), {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    });
    assert.deepEqual(requestHeaders('/v1/models', false, ''), { Accept: 'application/json' });
  });

  /** A fetch that records the headers and answers like SGLang with `--api-key KEY`. */
  function sglangWithKey(key: string): { fetch: FetchLike; seen: Array<{ url: string; auth: string | undefined }> } {
    const seen: Array<{ url: string; auth: string | undefined }> = [];
    const fetch: FetchLike = async (url, init) => {
      const auth = init.headers?.['Authorization'];
      seen.push({ url, auth });
      const open = url.endsWith('/health') || url.endsWith('/metrics');
      const status = open || auth === `Bearer ${key}` ? 200 : 401;
      const body =
        status === 200
          ? url.endsWith('/v1/models')
            ? '{"object":"list","data":[{"id":"kimi"}]}'
            : COMPLETION
          : '{"error":"Unauthorized"}';
      const { Readable } = await import('node:stream');
      return {
        status,
        headers: { get: (n: string) => (n.toLowerCase() === 'content-type' ? JSON_CT : null) },
        body: Readable.from([Buffer.from(body)]),
      };
    };
    return { fetch, seen };
  }

  it('the client sends the key, except to /health; setApiKey changes it later', async () => {
    const { fetch, seen } = sglangWithKey('sk-good');
    const c = new ServerHttpClient('http://127.0.0.1:30001', undefined, fetch);
    assert.equal(c.hasApiKey, false);

    const health = await c.health();
    assert.equal(health.kind === 'http' && health.status, 200);
    const noKey = await c.models();
    assert.deepEqual(noKey.ok ? undefined : noKey.reason, NO_KEY);
    const r1 = await c.completion('kimi');
    assert.ok(r1.kind === 'http' && r1.status === 401 && r1.apiKeySent === undefined);
    if (r1.kind === 'http')
      assert.deepEqual(judgeCompletion(r1.status, r1.contentType, r1.body, r1.truncated, r1.apiKeySent), {
        ok: false,
        reason: NO_KEY,
      });

    c.setApiKey('sk-wrong');
    const wrong = await c.models();
    assert.deepEqual(wrong.ok ? undefined : wrong.reason, BAD_KEY);
    const r2 = await c.completion('kimi');
    assert.ok(r2.kind === 'http' && r2.apiKeySent === true);
    if (r2.kind === 'http')
      assert.deepEqual(judgeCompletion(r2.status, r2.contentType, r2.body, r2.truncated, r2.apiKeySent), {
        ok: false,
        reason: BAD_KEY,
      });

    c.setApiKey('sk-good');
    assert.deepEqual(await c.models(), { ok: true, ids: ['kimi'] });
    const r3 = await c.completion('kimi');
    if (r3.kind === 'http')
      assert.deepEqual(judgeCompletion(r3.status, r3.contentType, r3.body, r3.truncated, r3.apiKeySent), {
        ok: true,
        text: ' there',
      });
    await c.health();

    c.setApiKey(undefined);
    await c.request('GET', '/v1/models');
    assert.deepEqual(
      seen.map((s) => `${s.url.replace('http://127.0.0.1:30001', '')} ${s.auth ?? '-'}`),
      [
        '/health -',
        '/v1/models -',
        '/v1/completions -',
        '/v1/models Bearer sk-wrong',
        '/v1/completions Bearer sk-wrong',
        '/v1/models Bearer sk-good',
        '/v1/completions Bearer sk-good',
        '/health -',
        '/v1/models -',
      ],
    );
  });

  it('setBaseUrl: later requests go to the new address', async () => {
    const { fetch, seen } = sglangWithKey('k');
    const c = new ServerHttpClient('http://127.0.0.1:30001/', undefined, fetch);
    c.setBaseUrl('http://127.0.0.1:30000/');
    assert.equal(c.baseUrl, 'http://127.0.0.1:30000');
    await c.health();
    assert.equal(seen[0].url, 'http://127.0.0.1:30000/health');
  });

  it('the apiKey option, over real HTTP', async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ auth: req.headers.authorization ?? null }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const c = new ServerHttpClient(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        undefined,
        undefined,
        {
          apiKey: 'sk-opt',
        },
      );
      assert.equal(c.hasApiKey, true);
      const r = await c.request('GET', '/server_info');
      assert.equal(r.kind === 'http' && r.body, '{"auth":"Bearer sk-opt"}');
      const h = await c.health();
      assert.equal(h.kind === 'http' && h.body, '{"auth":null}');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
