import { strict as assert } from 'node:assert';
import { execFile, spawnSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  curlCommand,
  curlConfig,
  curlConfigString,
  curlFetch,
  curlFetchVia,
  isForwardingProhibited,
  parseCurlOutput,
  toFetchResponse,
  type CurlExec,
} from '../../src/transport/curlFetch';
import { noCurl as noCurlWords } from '../../src/present/words/transportWords';
import { readCapped, ServerHttpClient, type FetchLike, type FetchResponse } from '../../src/engine/serverHttp';
import { channelOpenError } from '../../src/transport/ssh/sshErrors';
import type { ExecResult } from '../../src/transport/transport';

const KEY = 'sk-secret-123';

/** What ssh2 rejects forwardOut with when OpenSSH has AllowTcpForwarding no (checked against sshd 9.2). */
function ssh2Prohibited(): Error {
  return Object.assign(new Error('(SSH) Channel open failure: open failed'), { reason: 1 });
}

describe('curlFetch: isForwardingProhibited', () => {
  it('recognises the refusal in its forms', () => {
    assert.equal(isForwardingProhibited(ssh2Prohibited()), true);
    assert.equal(isForwardingProhibited(new Error('(SSH) Channel open failure: administratively prohibited')), true);
    assert.equal(
      isForwardingProhibited(new Error('channel 3: open failed: administratively prohibited: open failed')),
      true,
    );
    // As sshTransport.openStream wraps it (sshErrors.channelOpenError), then node-fetch.
    const wrapped = channelOpenError(ssh2Prohibited(), '127.0.0.1', 30001);
    assert.equal(isForwardingProhibited(wrapped), true);
    const fetchError = Object.assign(
      new Error(`request to http://127.0.0.1:30001/health failed, reason: ${wrapped.message}`),
      {
        type: 'system',
        code: wrapped.code,
      },
    );
    assert.equal(isForwardingProhibited(fetchError), true);
    assert.equal(
      isForwardingProhibited(Object.assign(new Error('(SSH) Channel open failure: denied'), { code: 'EACCES' })),
      true,
    );
  });

  it('and nothing else', () => {
    assert.equal(isForwardingProhibited(undefined), false);
    assert.equal(isForwardingProhibited(null), false);
    assert.equal(isForwardingProhibited('administratively prohibited'), false);
    assert.equal(
      isForwardingProhibited(
        channelOpenError(new Error('(SSH) Channel open failure: Connection refused'), '127.0.0.1', 30001),
      ),
      false,
    );
    assert.equal(isForwardingProhibited(new Error('connect ECONNREFUSED 10.1.1.1:22')), false);
    assert.equal(
      isForwardingProhibited(Object.assign(new Error('(SSH) Channel open failure: Connection refused'), { reason: 2 })),
      false,
    );
    assert.equal(isForwardingProhibited(Object.assign(new Error('permission denied'), { code: 'EACCES' })), false);
  });
});

describe('curlFetch: config and command', () => {
  it('curlConfigString escapes what curl unescapes', () => {
    assert.equal(curlConfigString('plain'), '"plain"');
    assert.equal(curlConfigString('a"b\\c\nd\te\rf\vg'), '"a\\"b\\\\c\\nd\\te\\rf\\vg"');
    assert.equal(curlConfigString('{"x":"é @y"}'), '"{\\"x\\":\\"é @y\\"}"');
    assert.throws(() => curlConfigString('a\0b'), /NUL/);
  });

  it('curlConfig: headers, then the body as data-raw', () => {
    const body = JSON.stringify({ model: 'm', prompt: 'line1\nline2 "q"' });
    assert.equal(
      curlConfig({ 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` }, body),
      [
        'header = "Content-Type: application/json"',
        `header = "Authorization: Bearer ${KEY}"`,
        `data-raw = ${curlConfigString(body)}`,
        '',
      ].join('\n'),
    );
    assert.equal(curlConfig({}), '');
    assert.throws(() => curlConfig({ 'X\nEvil': 'v' }), /Invalid HTTP header/);
    assert.throws(() => curlConfig({ X: 'v\r\nEvil: 1' }), /Invalid HTTP header/);
  });

  it('the command line carries no header and no body (stdin)', () => {
    const cmd = curlCommand({
      url: 'http://127.0.0.1:30001/v1/completions',
      method: 'POST',
      maxTimeSeconds: 30,
      maxBodyBytes: 1024,
    });
    assert.equal(
      cmd,
      [
        'command -v curl >/dev/null 2>&1 || { echo KIMI_CURL_MISSING >&2; exit 127; }',
        "{ curl -q -sS --max-time 30 -X POST -w '%{stderr}\\nKIMI_CURL_STATUS %{http_code} %{content_type}\\n' --config - http://127.0.0.1:30001/v1/completions",
        'echo "KIMI_CURL_EXIT $?" >&2; } | head -c 1025',
      ].join('\n'),
    );
  });

  it("without stdin the config goes in a here-document, after curl's arguments", () => {
    const config = curlConfig({ Authorization: `Bearer ${KEY}` }, '{"a":1}');
    const cmd = curlCommand({
      url: 'http://127.0.0.1:30001/v1/models',
      method: 'GET',
      maxTimeSeconds: 4.2,
      maxBodyBytes: 10,
      inlineConfig: config,
    });
    const [firstLine, curlLine] = cmd.split('\n');
    assert.match(firstLine, /^command -v curl/);
    assert.match(curlLine, /--max-time 5 /);
    assert.match(curlLine, /<<'KIMI_CURL_CONFIG_END'$/);
    assert.doesNotMatch(curlLine, /Bearer|sk-secret/);
    assert.ok(cmd.includes(`\n${config}KIMI_CURL_CONFIG_END\necho "KIMI_CURL_EXIT $?" >&2; } | head -c 11`));
  });

  it('quotes the URL and refuses what is not a URL or a method', () => {
    const cmd = curlCommand({
      url: "http://127.0.0.1:30001/x?a=1&b='2'",
      method: 'GET',
      maxTimeSeconds: 1,
      maxBodyBytes: 1,
    });
    assert.ok(cmd.includes(`'http://127.0.0.1:30001/x?a=1&b='\\''2'\\'''`), cmd);
    assert.throws(
      () => curlCommand({ url: 'file:///etc/passwd', method: 'GET', maxTimeSeconds: 1, maxBodyBytes: 1 }),
      /Not an http/,
    );
    assert.throws(
      () => curlCommand({ url: 'http://x/', method: 'GET; rm', maxTimeSeconds: 1, maxBodyBytes: 1 }),
      /Invalid HTTP method/,
    );
    assert.throws(
      () =>
        curlCommand({
          url: 'http://x/',
          method: 'POST',
          maxTimeSeconds: 1,
          maxBodyBytes: 1,
          inlineConfig: curlConfig({}, 'x'.repeat(200_000)),
        }),
      /too large/,
    );
  });
});

function out(stdout: string, stderr: string, code: number | null = 0): ExecResult {
  return { stdout, stderr, code };
}

describe('curlFetch: parseCurlOutput', () => {
  it('a response', () => {
    assert.deepEqual(
      parseCurlOutput(out('{"ok":1}', '\nKIMI_CURL_STATUS 200 application/json; charset=utf-8\nKIMI_CURL_EXIT 0\n')),
      {
        kind: 'response',
        status: 200,
        contentType: 'application/json; charset=utf-8',
        body: '{"ok":1}',
      },
    );
  });

  it('an HTTP error status is still a response; no content type is empty', () => {
    assert.deepEqual(parseCurlOutput(out('', '\nKIMI_CURL_STATUS 503 \nKIMI_CURL_EXIT 0\n')), {
      kind: 'response',
      status: 503,
      contentType: '',
      body: '',
    });
    assert.deepEqual(
      parseCurlOutput(out('{"error":"Unauthorized"}', 'KIMI_CURL_STATUS 401 application/json\nKIMI_CURL_EXIT 0')),
      {
        kind: 'response',
        status: 401,
        contentType: 'application/json',
        body: '{"error":"Unauthorized"}',
      },
    );
  });

  it('a body cut by head -c is a response (curl: write error)', () => {
    const r = parseCurlOutput(
      out(
        'x'.repeat(11),
        'curl: (23) Failure writing output to destination\n\nKIMI_CURL_STATUS 200 text/plain\nKIMI_CURL_EXIT 23\n',
        0,
      ),
    );
    assert.deepEqual(r, { kind: 'response', status: 200, contentType: 'text/plain', body: 'x'.repeat(11) });
  });

  it('no curl on the host', () => {
    assert.deepEqual(parseCurlOutput(out('', 'KIMI_CURL_MISSING\n', 127)), { kind: 'no-curl' });
    assert.throws(
      () => toFetchResponse({ kind: 'no-curl' }),
      (e: Error) => e.message === noCurlWords(),
    );
    assert.match(noCurlWords(), /forbids TCP forwarding \(AllowTcpForwarding no\) and has no curl/);
  });

  it('port closed: ECONNREFUSED, as a tunnel would say', () => {
    const r = parseCurlOutput(
      out(
        '',
        "curl: (7) Failed to connect to 127.0.0.1 port 30001 after 0 ms: Couldn't connect to server\n\nKIMI_CURL_STATUS 000 \nKIMI_CURL_EXIT 7\n",
      ),
    );
    assert.equal(r.kind, 'failed');
    assert.equal(r.kind === 'failed' && r.code, 'ECONNREFUSED');
    assert.match(r.kind === 'failed' ? r.message : '', /Failed to connect/);
    const unreachable = parseCurlOutput(
      out(
        '',
        'curl: (7) Failed to connect to 10.9.9.9 port 1: No route to host\nKIMI_CURL_STATUS 000 \nKIMI_CURL_EXIT 7\n',
      ),
    );
    assert.equal(unreachable.kind === 'failed' && unreachable.code, 'EHOSTUNREACH');
  });

  it('curl timed out: ETIMEDOUT', () => {
    const r = parseCurlOutput(
      out(
        '',
        'curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received\nKIMI_CURL_STATUS 000 \nKIMI_CURL_EXIT 28\n',
      ),
    );
    assert.equal(r.kind === 'failed' && r.code, 'ETIMEDOUT');
  });

  it('other curl failures and a broken command say what happened', () => {
    const empty = parseCurlOutput(
      out('', 'curl: (52) Empty reply from server\nKIMI_CURL_STATUS 000 \nKIMI_CURL_EXIT 52\n'),
    );
    assert.deepEqual(empty, {
      kind: 'failed',
      message: 'curl on the host failed (exit status 52): curl: (52) Empty reply from server',
    });
    const shell = parseCurlOutput(out('', 'sh: 1: Syntax error: end of file unexpected\n', 2));
    assert.deepEqual(shell, {
      kind: 'failed',
      message: 'the curl command on the host failed (exit status 2): sh: 1: Syntax error: end of file unexpected',
    });
    const killed = parseCurlOutput({ stdout: '', stderr: '', code: null, signal: 'KILL' });
    assert.equal(
      killed.kind === 'failed' && killed.message,
      'the curl command on the host failed (exit status KILL): no output',
    );
  });

  it('toFetchResponse: node-fetch shape', async () => {
    const res = toFetchResponse({ kind: 'response', status: 200, contentType: 'application/json', body: '{"é":1}' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Content-Type'), 'application/json');
    assert.equal(res.headers.get('x-other'), null);
    assert.deepEqual(await readCapped(res.body, 100), { text: '{"é":1}', truncated: false });
    const none = toFetchResponse({ kind: 'response', status: 503, contentType: '', body: '' });
    assert.equal(none.headers.get('content-type'), null);
    assert.throws(
      () => toFetchResponse({ kind: 'failed', message: 'm', code: 'ECONNREFUSED' }),
      (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED',
    );
  });
});

describe('curlFetch: curlFetch() with a recorded exec', () => {
  type Call = { command: string; options: Parameters<CurlExec>[1] };
  const recorder = (answer: ExecResult): { exec: CurlExec; calls: Call[] } => {
    const calls: Call[] = [];
    return { calls, exec: async (command, options) => (calls.push({ command, options }), answer) };
  };
  const ok = out('{"choices":[]}', 'KIMI_CURL_STATUS 200 application/json\nKIMI_CURL_EXIT 0\n');
  const init = (over: Partial<Parameters<FetchLike>[1]> = {}): Parameters<FetchLike>[1] => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` },
    body: '{"prompt":"hi"}',
    signal: new AbortController().signal,
    ...over,
  });

  it('with stdin: the secret and the body only on stdin', async () => {
    const { exec, calls } = recorder(ok);
    const res = await curlFetch(exec, { stdin: true })(
      'http://127.0.0.1:30001/v1/completions',
      init({ timeoutMs: 20_000, maxBodyBytes: 100 }),
    );
    assert.equal(res.status, 200);
    assert.equal(calls.length, 1);
    const [{ command, options }] = calls;
    assert.doesNotMatch(command, /Bearer|sk-secret|prompt/);
    assert.equal(options.stdin, curlConfig(init().headers ?? {}, '{"prompt":"hi"}'));
    assert.match(command, /--max-time 20 /);
    assert.match(command, /head -c 101$/);
    assert.equal(options.timeoutMs, 25_000);
    assert.ok(options.signal);
  });

  it('without stdin: a here-document, and no stdin option', async () => {
    const { exec, calls } = recorder(ok);
    await curlFetch(exec, { timeoutMs: 3000 })('http://127.0.0.1:30001/v1/completions', init());
    const [{ command, options }] = calls;
    assert.equal(options.stdin, undefined);
    assert.equal(options.timeoutMs, 8000);
    assert.doesNotMatch(command.split('\n')[1], /Bearer/);
    assert.ok(command.includes(`header = "Authorization: Bearer ${KEY}"`));
  });

  it('curlFetchVia runs through Transport.exec, without stdin', async () => {
    const calls: Array<{ command: string; options: unknown }> = [];
    const transport = { exec: async (command: string, options?: object) => (calls.push({ command, options }), ok) };
    const res = await curlFetchVia(transport)(
      'http://127.0.0.1:30001/health',
      init({ method: 'GET', body: undefined }),
    );
    assert.equal(res.status, 200);
    assert.equal(calls.length, 1);
    assert.equal((calls[0].options as { stdin?: string }).stdin, undefined);
    assert.match(calls[0].command, /<<'KIMI_CURL_CONFIG_END'/);
  });

  it('failures become the errors node-fetch would throw', async () => {
    await assert.rejects(curlFetch(recorder(out('', 'KIMI_CURL_MISSING\n', 127)).exec)('http://127.0.0.1:1/', init()), {
      message: noCurlWords(),
    });
    await assert.rejects(
      curlFetch(
        recorder(out('', "curl: (7) Couldn't connect to server\nKIMI_CURL_STATUS 000 \nKIMI_CURL_EXIT 7\n")).exec,
      )('http://127.0.0.1:1/', init()),
      { code: 'ECONNREFUSED' },
    );
  });
});

// ---------------------------------------------------------------- the command, run by a real sh and curl

const haveCurl = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).status === 0;

/** Like Transport.exec, plus stdin. */
const localExec: CurlExec = (command, options) =>
  new Promise((resolve) => {
    const child = execFile(
      '/bin/sh',
      ['-c', command],
      { timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : null
          : 0;
        resolve({ stdout, stderr, code });
      },
    );
    child.stdin?.end(options.stdin ?? '');
  });

describe("curlFetch: against a local server with this machine's sh and curl", function () {
  this.timeout(20000);
  let server: http.Server;
  let base: string;
  let seen: { method?: string; headers: http.IncomingHttpHeaders; body: string } = { headers: {}, body: '' };

  before(async function () {
    if (!haveCurl) this.skip();
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString('utf8')));
      req.on('end', () => {
        seen = { method: req.method, headers: req.headers, body };
        if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('y'.repeat(5 * 1024 * 1024));
        } else if (req.url === '/v1/models' && req.headers.authorization !== `Bearer ${KEY}`) {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end('{"error":"Unauthorized"}');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ echo: body }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (server) await new Promise((r) => server.close(r));
  });

  for (const stdin of [true, false]) {
    it(`headers and an awkward body arrive intact (${stdin ? 'stdin' : 'here-document'})`, async () => {
      const body =
        JSON.stringify({ prompt: 'line1\nline2 "quoted" \\ back\tslash \'single\' $HOME `x` é ✓', n: 1 }) +
        '\n@not-a-file';
      const c = new ServerHttpClient(base, undefined, curlFetch(localExec, { stdin }), { apiKey: KEY });
      const r = await c.request('POST', '/v1/completions', body);
      assert.equal(r.kind, 'http');
      if (r.kind !== 'http') return;
      assert.equal(r.status, 200);
      assert.equal(r.contentType, 'application/json');
      assert.deepEqual(JSON.parse(r.body), { echo: body });
      assert.equal(seen.body, body);
      assert.equal(seen.method, 'POST');
      assert.equal(seen.headers.authorization, `Bearer ${KEY}`);
      assert.equal(seen.headers['content-type'], 'application/json');
    });
  }

  it('a 401, no key on /health', async () => {
    const c = new ServerHttpClient(base, undefined, curlFetch(localExec, { stdin: true }));
    const r = await c.models();
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, /HTTP 401: the server wants an API key/);
    c.setApiKey(KEY);
    await c.health();
    assert.equal(seen.headers.authorization, undefined);
  });

  it('a 5 MB body is cut on the host', async () => {
    const c = new ServerHttpClient(base, undefined, curlFetch(localExec, { stdin: true }), { maxBodyBytes: 1000 });
    const r = await c.request('GET', '/big');
    assert.equal(r.kind === 'http' && r.truncated, true);
    assert.equal(r.kind === 'http' && r.body.length, 1000);
  });

  it('a closed port is refused', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const c = new ServerHttpClient(`http://127.0.0.1:${port}`, undefined, curlFetch(localExec, { stdin: false }));
    assert.deepEqual(await c.health(), { kind: 'refused' });
  });
});

// ---------------------------------------------------------------- the client's one-way switch

describe('curlFetch: ServerHttpClient falls back once', () => {
  const fakeResponse = (status: number): FetchResponse =>
    toFetchResponse({ kind: 'response', status, contentType: 'application/json', body: '{}' });

  it('the first "administratively prohibited" switches to the fallback for good, told once', async () => {
    let tunnelCalls = 0;
    let fallbackCalls = 0;
    const tunnel: FetchLike = async () => {
      tunnelCalls++;
      throw channelOpenError(ssh2Prohibited(), '127.0.0.1', 30001);
    };
    const fallback: FetchLike = async () => (fallbackCalls++, fakeResponse(200));
    const told: string[] = [];
    const c = new ServerHttpClient('http://127.0.0.1:30001', undefined, tunnel, {
      fallbackFetch: fallback,
      onFallback: (m) => told.push(m),
    });
    assert.equal(c.viaFallback, false);
    const results = await Promise.all([c.health(), c.health()]);
    for (const r of results) assert.equal(r.kind === 'http' && r.status, 200);
    await c.request('GET', '/v1/models');
    assert.equal(tunnelCalls, 2); // the two concurrent first requests; none after
    assert.equal(fallbackCalls, 3);
    assert.equal(c.viaFallback, true);
    assert.equal(told.length, 1);
    assert.match(told[0], /forbids TCP forwarding.*curl on the GPU host/);
  });

  it('other tunnel errors do not switch', async () => {
    let fallbackCalls = 0;
    const tunnel: FetchLike = async () => {
      throw channelOpenError(new Error('(SSH) Channel open failure: Connection refused'), '127.0.0.1', 30001);
    };
    const c = new ServerHttpClient('http://127.0.0.1:30001', undefined, tunnel, {
      fallbackFetch: async () => (fallbackCalls++, fakeResponse(200)),
    });
    assert.deepEqual(await c.health(), { kind: 'refused' });
    assert.equal(fallbackCalls, 0);
    assert.equal(c.viaFallback, false);
  });

  it('without a fallback the result says forwarding is forbidden', async () => {
    const c = new ServerHttpClient('http://127.0.0.1:30001', undefined, async () => {
      throw ssh2Prohibited();
    });
    const r = await c.health();
    assert.equal(r.kind, 'error');
    assert.match(r.kind === 'error' ? r.message : '', /forbids TCP forwarding \(AllowTcpForwarding no/);
  });

  it('no curl on the host: said plainly', async () => {
    const noCurl: CurlExec = async () => out('', 'KIMI_CURL_MISSING\n', 127);
    const c = new ServerHttpClient(
      'http://127.0.0.1:30001',
      undefined,
      async () => {
        throw ssh2Prohibited();
      },
      { fallbackFetch: curlFetch(noCurl) },
    );
    assert.deepEqual(await c.health(), { kind: 'error', message: noCurlWords() });
  });

  it('a timeout through curl is a timeout (the exec is aborted)', async () => {
    const hang: CurlExec = (_c, options) =>
      new Promise((_resolve, reject) =>
        options.signal?.addEventListener('abort', () =>
          reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
        ),
      );
    const c = new ServerHttpClient(
      'http://127.0.0.1:30001',
      undefined,
      async () => {
        throw ssh2Prohibited();
      },
      { fallbackFetch: curlFetch(hang), timeoutMs: 100 },
    );
    assert.deepEqual(await c.health(), { kind: 'timeout' });
  });
});
