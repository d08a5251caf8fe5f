import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { SglangClient, type HttpResult } from '../../src/server/sglangHttp';
import { judgeCompletion, judgeHealth, parseModels } from '../../src/server/sglangResponses';

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
    assert.deepEqual(judgeCompletion(200, 'application/json; charset=utf-8', COMPLETION, false), { ok: true, text: ' there' });
    const emptyText = COMPLETION.replace('" there"', '""');
    assert.deepEqual(judgeCompletion(200, JSON_CT, emptyText, false), { ok: true, text: '' });
  });

  const notReady: Array<[string, number, string, string, boolean, RegExp]> = [
    [
      'error JSON whose message contains "choices"',
      400,
      JSON_CT,
      JSON.stringify({ object: 'error', message: "1 validation error: 'choices' is not allowed here", type: 'BadRequestError', param: null, code: 400 }),
      false,
      /HTTP 400: 1 validation error: 'choices'/,
    ],
    [
      'error JSON with HTTP 200',
      200,
      JSON_CT,
      JSON.stringify({ object: 'error', message: 'The model `x` does not exist; choices unavailable', type: 'NotFoundError', code: 404 }),
      false,
      /answered with an error: The model/,
    ],
    ['choices: []', 200, JSON_CT, JSON.stringify({ object: 'text_completion', choices: [] }), false, /empty "choices"/],
    ['choices missing', 200, JSON_CT, JSON.stringify({ object: 'text_completion' }), false, /no "choices"/],
    ['choice without text', 200, JSON_CT, JSON.stringify({ choices: [{ index: 0, text: null }] }), false, /no generated text/],
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
    ['FastAPI detail 422', 422, JSON_CT, JSON.stringify({ detail: 'Unprocessable: choices' }), false, /HTTP 422: Unprocessable/],
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
      data: [{ id: '/root/models/Kimi-K2.6', object: 'model', created: 1, owned_by: 'sglang', root: '/root/models/Kimi-K2.6', max_model_len: 262144 }],
    });
    assert.deepEqual(parseModels(body), ['/root/models/Kimi-K2.6']);
    assert.deepEqual(parseModels('{"object":"list","data":[]}'), []);
    assert.deepEqual(parseModels('<html>'), []);
  });
});

// ---------------------------------------------------------------- client against a local server

/** Like src/remote/httpAgent.ts: the connection is opened asynchronously and may fail. */
class FailingAgent extends http.Agent {
  constructor(private readonly error: Error) {
    super({ keepAlive: false });
  }
  override createConnection(_options: http.ClientRequestArgs, callback: (err: Error | null, socket?: Duplex) => void): undefined {
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
    const c = new SglangClient(base + '/', undefined);
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
    const c = new SglangClient(base, undefined);
    const r = await c.completion('/root/models/Kimi-K2.6');
    assert.deepEqual(seen, { model: '/root/models/Kimi-K2.6', prompt: 'hi', max_tokens: 1, temperature: 0 });
    assert.equal(r.kind, 'http');
    if (r.kind === 'http') assert.deepEqual(judgeCompletion(r.status, r.contentType, r.body, r.truncated), { ok: true, text: ' there' });
  });

  it('a server that accepts and never answers: timeout', async () => {
    routes.set('GET /health', () => {
      /* hang */
    });
    const c = new SglangClient(base, undefined, undefined, { timeoutMs: 300 });
    const t0 = Date.now();
    assert.deepEqual(await c.health(), { kind: 'timeout' });
    assert.ok(Date.now() - t0 < 2000);
  });

  it('headers sent, body hangs mid-way: timeout', async () => {
    routes.set('POST /v1/completions', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"choices":[');
    });
    const c = new SglangClient(base, undefined, undefined, { completionTimeoutMs: 300 });
    assert.deepEqual(await c.completion('m'), { kind: 'timeout' });
  });

  it('a 20 MB body is capped, not read whole', async () => {
    bytesSent20mb = 0;
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
      res.on('close', () => (left = 0));
      pump();
    });
    const c = new SglangClient(base, undefined);
    const r = await c.completion('m');
    assert.equal(r.kind, 'http');
    if (r.kind === 'http') {
      assert.equal(r.truncated, true);
      assert.equal(Buffer.byteLength(r.body), 1024 * 1024);
      assert.equal(judgeCompletion(r.status, r.contentType, r.body, r.truncated).ok, false);
    }
    await new Promise((res) => setTimeout(res, 200));
    assert.ok(bytesSent20mb < 20 * 1024 * 1024, `server wrote ${bytesSent20mb} bytes`);
  });

  it('refused port', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const c = new SglangClient(`http://127.0.0.1:${port}`, undefined);
    assert.deepEqual(await c.health(), { kind: 'refused' });
  });

  it('an agent whose connection fails with ECONNREFUSED (the SSH tunnel) is refused', async () => {
    const err = Object.assign(new Error('connect to 127.0.0.1:30001 from the SSH host failed: (SSH) Channel open failure: Connection refused'), {
      code: 'ECONNREFUSED',
    });
    const c = new SglangClient('http://127.0.0.1:30001', new FailingAgent(err));
    const r: HttpResult = await c.health();
    assert.deepEqual(r, { kind: 'refused' });
  });

  it('a refused SSH connection (transport down) is an error, not a closed port', async () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 10.1.1.1:22'), { name: 'TransportError', kind: 'refused' });
    const r = await new SglangClient('http://127.0.0.1:30001', new FailingAgent(err)).health();
    assert.equal(r.kind, 'error');
    if (r.kind === 'error') assert.match(r.message, /ECONNREFUSED 10\.1\.1\.1:22/);
  });

  it('other failures are errors with a message', async () => {
    const c = new SglangClient('http://no-such-host.invalid:1', undefined);
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
      res.end(JSON.stringify({ model_path: '/root/models/Kimi-K2.6', tp_size: 8, reasoning_parser: 'kimi_k2', status: 'ready' }));
    });
    const c = new SglangClient(base, undefined);
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
