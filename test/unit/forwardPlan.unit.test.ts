import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { Duplex, type Readable } from 'node:stream';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile } from '../../src/config/config';
import {
  baseUrl,
  bindFailure,
  ForwardError,
  forwardInfo,
  forwardTarget,
  gatewayErrorResponse,
  isLoopback,
  localPortCandidates,
  openedLine,
  portNote,
  selfForwardError,
} from '../../src/fleet/forward/forwardPlan';
import { PortForward } from '../../src/fleet/forward/portForward';
import { serverNameOf } from '../../src/fronts/vscode/commands/serverArgument';

function profile(raw: Record<string, unknown>): ServerProfile {
  const result = parseSettings({ servers: [{ name: 'gpu', host: 'gpu-box', unit: 'sglang', ...raw }] });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.settings.servers[0]!;
}

describe('port forward plan (pure)', () => {
  it('targets the url as the GPU host sees it; an any-address server is reached on its loopback; a path prefix is kept', () => {
    assert.deepEqual(forwardTarget(profile({ url: 'http://127.0.0.1:30000' })), {
      host: '127.0.0.1',
      port: 30000,
      path: '',
    });
    assert.deepEqual(forwardTarget(profile({ url: 'http://0.0.0.0:30001/' })), {
      host: '127.0.0.1',
      port: 30001,
      path: '',
    });
    assert.deepEqual(forwardTarget(profile({ url: 'http://[::]:8000' })), { host: '::1', port: 8000, path: '' });
    assert.deepEqual(forwardTarget(profile({ url: 'http://10.0.0.5:8000/sglang/' })), {
      host: '10.0.0.5',
      port: 8000,
      path: '/sglang',
    });
    assert.deepEqual(forwardTarget(profile({ url: 'http://gpu-box' })), { host: 'gpu-box', port: 80, path: '' });
  });

  it('tries the server port first, then any free one; a port asked for is that port only; never the server port when SSH goes to this machine', () => {
    assert.deepEqual(localPortCandidates(30000, undefined), [30000, 0]);
    assert.deepEqual(localPortCandidates(30000, 8080), [8080]);
    assert.deepEqual(localPortCandidates(30000, undefined, true), [0]);
    const target = { host: '127.0.0.1', port: 30000, path: '' };
    assert.equal(selfForwardError(target, 30000, false), undefined);
    assert.equal(selfForwardError(target, 30001, true), undefined);
    assert.match(
      selfForwardError(target, 30000, true)!.message,
      /the SSH host is this machine and 30000 is the server's own port here/,
    );
    assert.equal(portNote(target, 30000, false), undefined);
    assert.equal(portNote(target, 41000, false), 'port 30000 is taken on this machine, so 41000 was chosen');
    assert.equal(
      portNote(target, 41000, true),
      "the SSH host is this machine, where port 30000 is the server's own, so 41000 was chosen",
    );
  });

  it('knows loopback names and addresses', () => {
    for (const h of [
      'localhost',
      'LOCALHOST',
      'a.localhost',
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
    ])
      assert.ok(isLoopback(h), h);
    for (const h of ['gpu-box', '10.0.0.1', '128.0.0.1', '::2', 'localhost.example.com', '1127.0.0.1'])
      assert.ok(!isLoopback(h), h);
  });

  it('builds the base URL and says why the port differs', () => {
    assert.equal(baseUrl(30000, ''), 'http://127.0.0.1:30000/v1');
    assert.equal(baseUrl(4000, '/sglang'), 'http://127.0.0.1:4000/sglang/v1');
    const same = forwardInfo('gpu', { host: '127.0.0.1', port: 30000, path: '' }, 30000);
    assert.deepEqual(same, {
      server: 'gpu',
      localPort: 30000,
      remote: '127.0.0.1:30000',
      baseUrl: 'http://127.0.0.1:30000/v1',
    });
    const other = forwardInfo(
      'gpu',
      { host: '::1', port: 30000, path: '' },
      41234,
      'port 30000 is taken on this machine, so 41234 was chosen',
    );
    assert.equal(other.remote, '[::1]:30000');
    assert.equal(other.portNote, 'port 30000 is taken on this machine, so 41234 was chosen');
    assert.equal(
      openedLine(other),
      "Forwarding 127.0.0.1:41234 on this machine to [::1]:30000 on gpu's host (port 30000 is taken on this machine, so 41234 was chosen). Base URL: http://127.0.0.1:41234/v1",
    );
  });

  it('words bind failures', () => {
    assert.equal(bindFailure(30000, 'EADDRINUSE', 'x').kind, 'port-in-use');
    assert.match(bindFailure(80, 'EACCES', 'x').message, /127\.0\.0\.1:80 needs privileges/);
    assert.match(bindFailure(1, 'EOTHER', 'boom').message, /cannot listen on 127\.0\.0\.1:1: boom/);
  });

  it('answers a local client with an HTTP 502 an OpenAI client can show', () => {
    const text = gatewayErrorResponse('SSH connection to gpu is down');
    const [head, body] = text.split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    assert.match(head!, /\r\nConnection: close/);
    assert.match(head!, new RegExp(`Content-Length: ${Buffer.byteLength(body!)}`));
    assert.deepEqual(JSON.parse(body!), {
      error: { message: 'kimi-service port forward: SSH connection to gpu is down', type: 'forward_error', code: 502 },
    });
  });

  it('reads the server argument of the command (a name, a tree item, nothing)', () => {
    assert.equal(serverNameOf('gpu'), 'gpu');
    assert.equal(serverNameOf({ serverName: 'gpu' }), 'gpu');
    assert.equal(serverNameOf(undefined), undefined);
    assert.equal(serverNameOf({ other: 1 }), undefined);
    assert.equal(serverNameOf(42), undefined);
  });
});

describe('port forward (local sockets, a fake opener)', () => {
  const log = () => undefined;

  it('host "local": nothing to forward, said so, nothing opened', async () => {
    const local = profile({ host: 'local', url: 'http://127.0.0.1:30000' });
    let asked = 0;
    await assert.rejects(
      PortForward.open({ server: local, connect: async () => (asked++, () => Promise.reject(new Error('no'))), log }),
      (e: unknown) =>
        e instanceof ForwardError &&
        e.kind === 'local' &&
        /runs on this machine .*nothing to forward; use http:\/\/127\.0\.0\.1:30000\/v1 directly/.test(e.message),
    );
    assert.equal(asked, 0);
  });

  it('sshd refusing the channel at open time: the prohibited refusal, no port opened', async () => {
    const refusal = Object.assign(
      new Error('connect to 127.0.0.1:30000 from the SSH host failed: (SSH) Channel open failure: open failed'),
      { code: 'ECONNRESET' },
    );
    await assert.rejects(
      PortForward.open({
        server: profile({ url: 'http://127.0.0.1:30000' }),
        connect: async () => () => Promise.reject(refusal),
        log,
      }),
      (e: unknown) =>
        e instanceof ForwardError && e.kind === 'prohibited' && /gpu-box forbids TCP forwarding/.test(e.message),
    );
  });

  it('uses the server port when free, carries bytes both ways, and a server not listening yet still gets its forward', async () => {
    // A free port for the "remote" server: bound, noted, released.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const echo = net.createServer((s) => s.pipe(s));
    let refuse = true;
    const opener = async (host: string, p: number) => {
      if (refuse)
        throw Object.assign(new Error('connect to x from the SSH host failed: Connection refused'), {
          code: 'ECONNREFUSED',
        });
      return new Promise<NodeJS.ReadWriteStream & import('node:stream').Readable>((resolve, reject) => {
        const s = net.connect({ host, port: p === port ? echoPort : p }, () => resolve(s));
        s.once('error', reject);
      });
    };
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const echoPort = (echo.address() as net.AddressInfo).port;
    const lines: string[] = [];
    const forward = await PortForward.open({
      server: profile({ url: `http://127.0.0.1:${port}` }),
      connect: async () => opener,
      log: (_l, m) => void lines.push(m),
    });
    try {
      assert.equal(forward.info.localPort, port, 'the server port, free on this machine');
      assert.equal(forward.info.portNote, undefined);
      assert.ok(
        lines.some((l) => /does not answer on 127\.0\.0\.1:\d+ yet/.test(l)),
        lines.join('\n'),
      );
      refuse = false;
      const client = net.connect({ host: '127.0.0.1', port });
      const echoed = await new Promise<string>((resolve) => {
        client.once('data', (d: Buffer) => resolve(d.toString()));
        client.write('ping');
      });
      assert.equal(echoed, 'ping');
      assert.equal(forward.connections, 1);
      // A client that half-closes after its request (nc -N, some HTTP/1.0 clients) still gets the answer.
      const halfClosing = net.connect({ host: '127.0.0.1', port });
      const answer = await new Promise<string>((resolve) => {
        let got = '';
        halfClosing.on('data', (d: Buffer) => (got += d.toString()));
        halfClosing.on('end', () => resolve(got));
        halfClosing.end('half');
      });
      assert.equal(answer, 'half');
      const closed = new Promise<void>((r) => client.once('close', () => r()));
      await forward.close();
      await closed; // in-flight connections end with the forward
      assert.equal(forward.connections, 0);
    } finally {
      await forward.close();
      await new Promise<void>((r) => echo.close(() => r()));
    }
  });

  it('a large answer followed at once by the end of the channel reaches a slow reader whole', async () => {
    // Like an ssh2 channel: the data, the end, then 'close' as soon as the end is read.
    const size = 64 * 1024 * 1024;
    let closed!: () => void;
    const channelClosed = new Promise<void>((r) => (closed = r));
    const channel = () => {
      const stream = new Duplex({
        read() {
          this.push(Buffer.alloc(size, 7));
          this.push(null);
        },
        write(_chunk, _encoding, callback) {
          callback();
        },
      });
      stream.once('end', () =>
        setImmediate(() => {
          stream.emit('close');
          closed();
        }),
      );
      return stream as unknown as NodeJS.ReadWriteStream & Readable;
    };
    const forward = await PortForward.open({
      server: profile({ url: 'http://127.0.0.1:30000' }),
      connect: async () => async () => channel(),
      log,
    });
    try {
      const client = net.connect({ host: '127.0.0.1', port: forward.info.localPort });
      client.pause();
      // The channel ends and closes while the reader has not read a byte.
      await channelClosed;
      let received = 0;
      await new Promise<void>((resolve) => {
        client.on('data', (d: Buffer) => (received += d.length));
        client.on('end', () => resolve());
        client.on('error', () => resolve());
        client.resume();
      });
      assert.equal(received, size);
    } finally {
      await forward.close();
    }
  });
});
