/**
 * SshTransport against a real OpenSSH sshd (the simulated GPU host's harness).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fetch from 'node-fetch';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { TunnelAgent } from '../../src/transport/httpAgent';
import { fingerprintSha256 } from '../../src/transport/ssh/knownHosts';
import { commandLine, quote } from '../../src/transport/shell';
import type { SshTarget } from '../../src/transport/ssh/sshTargetTypes';
import { SshTransport } from '../../src/transport/ssh/sshTransport';
import type { SshTransportOptions } from '../../src/transport/ssh/sshOptions';
import { TransportError, type ConnectionState } from '../../src/transport/transport';
import { waitFor } from '../util/waitFor';
import { sshdSessions } from '../gpu-host/execLog';
import { connectionOf } from './simHost';
import { freePort } from '../util/freePort';
import { refusingAsker } from '../util/refusingAsker';
import { rejection as anyRejection, transportRejection as rejection } from '../util/rejection';

function waitForState(
  t: SshTransport,
  pred: (s: ConnectionState) => boolean,
  timeoutMs = 20000,
): Promise<ConnectionState> {
  if (pred(t.state)) return Promise.resolve(t.state);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`state never matched; last: ${JSON.stringify(t.state)}`));
    }, timeoutMs);
    const sub = t.onStateChange((s) => {
      if (pred(s)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(s);
      }
    });
  });
}

describe('SshTransport against a real sshd', function () {
  this.timeout(60000);
  let host: GpuHost;
  let tmp: string;
  let knownHosts: string;
  const open: SshTransport[] = [];

  before(async () => {
    host = await startGpuHost({ shards: 2 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ssh-transport-'));
  });

  after(async () => {
    for (const t of open) t.dispose();
    await host?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(() => {
    knownHosts = path.join(tmp, `known_hosts_${Math.random().toString(36).slice(2)}`);
  });

  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });

  function target(over: Partial<SshTarget> = {}): SshTarget {
    return {
      alias: 'gpu',
      hostName: host.sshHost,
      port: host.sshPort,
      username: host.username,
      identityFiles: [host.clientKeyPath],
      identityFilesConfigured: true,
      jumps: [],
      ...over,
    };
  }

  function transport(over: Partial<SshTransportOptions> & { target?: SshTarget } = {}) {
    const { asked, passphraseAsks, questions } = refusingAsker();
    const t = new SshTransport({
      target: target(),
      knownHostsFile: knownHosts,
      agentSocket: '',
      ...questions,
      ...over,
    });
    open.push(t);
    return { t, asked, passphraseAsks };
  }

  /** True once no process of the simulated host matches the pgrep -f pattern (false after 10 s). */
  async function gone(pattern: string): Promise<boolean> {
    return waitFor(async () => (await host.nsExec(`pgrep -f ${quote(pattern)}`)).code === 1, {
      timeoutMs: 10_000,
      intervalMs: 100,
    }).then(
      () => true,
      () => false,
    );
  }

  const trustHost = (hashed = false) => fs.writeFileSync(knownHosts, `# test\n${host.knownHostsLine({ hashed })}\n`);

  it('runs commands over one connection (plain [127.0.0.1]:PORT known_hosts line)', async () => {
    trustHost();
    const before = host.handshakes();
    const { t, asked } = transport();
    const states: string[] = [];
    t.onStateChange((s) => states.push(s.kind));
    const r = await t.exec('echo hello; echo oops >&2; exit 3');
    assert.deepEqual(r, { stdout: 'hello\n', stderr: 'oops\n', code: 3 });
    for (let i = 0; i < 5; i++) assert.equal((await t.exec(`echo ${i}`)).stdout, `${i}\n`);
    assert.equal(t.handshakes, 1);
    assert.equal(host.handshakes() - before, 1, 'sshd saw exactly one login');
    assert.deepEqual(states, ['connecting', 'connected']);
    assert.equal(asked.length, 0);
  });

  it('accepts a hashed |1|salt|hash entry', async () => {
    trustHost(true);
    assert.match(fs.readFileSync(knownHosts, 'utf8'), /^\|1\|/m);
    const { t, asked } = transport();
    await t.connect();
    assert.equal(t.state.kind, 'connected');
    assert.equal(asked.length, 0);
  });

  it('unknown host key under strict: refused, nothing appended', async () => {
    const { t, asked } = transport();
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'host-key-unknown');
    assert.ok(err.message.includes(host.hostKeyFingerprint), err.message);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].fingerprint, host.hostKeyFingerprint);
    assert.equal(asked[0].host, '127.0.0.1');
    assert.equal(asked[0].port, host.sshPort);
    assert.equal(fs.existsSync(knownHosts), false);
    assert.equal(t.state.kind, 'down');
    assert.equal(t.handshakes, 0);
  });

  it('unknown host key + trust: appended, and the next connection asks nothing', async () => {
    const first = transport({ decideUnknownHostKey: async () => 'trust' });
    await first.t.connect();
    const text = fs.readFileSync(knownHosts, 'utf8');
    assert.equal(text.trim(), host.knownHostsLine().trim());
    assert.equal(fs.statSync(knownHosts).mode & 0o777, 0o600);
    first.t.dispose();

    const second = transport();
    assert.equal((await second.t.exec('echo again')).stdout, 'again\n');
    assert.equal(second.asked.length, 0);
  });

  it('changed host key: refused with both fingerprints, the file and the line', async () => {
    const other = path.join(tmp, `other_${Date.now()}`);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const otherPub = fs.readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/);
    fs.writeFileSync(knownHosts, `# first line\n[127.0.0.1]:${host.sshPort} ${otherPub[0]} ${otherPub[1]}\n`);
    const { t, asked } = transport({ decideUnknownHostKey: async () => 'trust' });
    const err = await rejection(t.exec('true'));
    assert.equal(err.kind, 'host-key-changed');
    const oldFp = fingerprintSha256(Buffer.from(otherPub[1], 'base64'));
    assert.ok(err.message.includes(host.hostKeyFingerprint), err.message);
    assert.ok(err.message.includes(oldFp), err.message);
    assert.ok(err.message.includes(`${knownHosts} line 2`), err.message);
    assert.equal(asked.length, 0, 'a changed key is never offered for trust');
    assert.equal(fs.readFileSync(knownHosts, 'utf8').split('\n').length, 3, 'file untouched');
  });

  it('a @revoked host key is refused', async () => {
    fs.writeFileSync(
      knownHosts,
      `${host.knownHostsLine()}\n@revoked * ${host.hostPublicKey.trim().split(/\s+/).slice(0, 2).join(' ')}\n`,
    );
    const { t } = transport();
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'host-key-rejected');
    assert.match(err.message, /@revoked/);
  });

  it('wrong key: auth error naming the user, host and keys tried', async () => {
    trustHost();
    const stranger = path.join(tmp, `stranger_${Date.now()}`);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    const missing = path.join(tmp, 'no-such-key');
    const { t } = transport({ target: target({ identityFiles: [missing, stranger] }) });
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'auth');
    assert.ok(err.message.includes(`root@127.0.0.1:${host.sshPort}`), err.message);
    assert.ok(err.message.includes(`${stranger} (rejected)`), err.message);
    assert.ok(err.message.includes(`${missing} (not found)`), err.message);
    // Not retried on a timer: it needs the user. The transport decides before it rejects the
    // connect, and a retry it schedules is in the state (retryInMs).
    assert.deepEqual(t.state.kind, 'down');
    assert.equal((t.state as { retryInMs?: number }).retryInMs, undefined);
  });

  it('encrypted key: asks for the passphrase (again after a wrong one) and connects', async () => {
    trustHost();
    const asks: Array<{ path: string; retry: boolean }> = [];
    const answers = ['wrong passphrase', host.encryptedKeyPassphrase];
    const { t } = transport({
      target: target({ identityFiles: [host.encryptedClientKeyPath] }),
      requestPassphrase: async (p, retry) => {
        asks.push({ path: p, retry });
        return answers.shift();
      },
    });
    assert.equal((await t.exec('echo unlocked')).stdout, 'unlocked\n');
    assert.deepEqual(asks, [
      { path: host.encryptedClientKeyPath, retry: false },
      { path: host.encryptedClientKeyPath, retry: true },
    ]);
  });

  it('encrypted key, passphrase cancelled: auth error says so', async () => {
    trustHost();
    const { t, passphraseAsks } = transport({ target: target({ identityFiles: [host.encryptedClientKeyPath] }) });
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'auth');
    assert.match(err.message, /no passphrase given/);
    assert.deepEqual(passphraseAsks, [host.encryptedClientKeyPath]);
  });

  it('connection refused on a closed port', async () => {
    const port = await freePort();
    const { t } = transport({ target: target({ port }) });
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'refused');
    assert.equal(err.message, `Connection refused by 127.0.0.1:${port} — is sshd running?`);
  });

  it('DNS failure', async () => {
    const { t } = transport({ target: target({ hostName: 'no-such-host.invalid', port: 22 }) });
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'dns');
    assert.equal(err.message, 'Cannot resolve host name no-such-host.invalid');
  });

  it('HTTP GET through openStream + node-fetch; a closed port is ECONNREFUSED', async () => {
    trustHost();
    const server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url, via: req.socket.remoteAddress }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as net.AddressInfo;
      const { t } = transport();
      const agent = new TunnelAgent(t.openStream);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/health?i=${i}`, { agent });
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { path: `/health?i=${i}`, via: '127.0.0.1' });
      }
      assert.equal(t.handshakes, 1);

      const closed = await freePort();
      const err = (await anyRejection(fetch(`http://127.0.0.1:${closed}/health`, { agent }))) as unknown as {
        code?: string;
        message: string;
      };
      assert.equal(err.code, 'ECONNREFUSED', err.message);
      await assert.rejects(t.openStream('127.0.0.1', closed), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
      assert.equal(t.state.kind, 'connected', 'a refused tunnel does not hurt the connection');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('streams lines, keeps \\r, and kill ends the remote command', async () => {
    trustHost();
    const { t } = transport();
    const sshdStart = host.sshdLog().length;
    const lines: string[] = [];
    const errLines: string[] = [];
    const p = await t.stream(
      "printf 'one\\ntw'; sleep 0.2; printf 'o\\r50%%\\nü'; printf 'err\\n' >&2; printf '\\n'",
      (l) => lines.push(l),
      (l) => errLines.push(l),
    );
    assert.equal(await p.exited, 0);
    assert.deepEqual(lines, ['one', 'two\r50%', 'ü']);
    assert.deepEqual(errLines, ['err']);

    const marker = `kimi-marker-${Date.now()}`;
    const ticks: string[] = [];
    const long = await t.stream(`exec sh -c ${quote(`while true; do echo ${marker}; sleep 0.1; done`)}`, (l) =>
      ticks.push(l),
    );
    await waitFor(() => ticks.length >= 2, { timeoutMs: 10_000, message: 'two ticks of the remote loop' });
    const ours = await connectionOf(t);
    long.kill();
    assert.equal(await long.exited, null);
    let alive = '';
    let looks = 0;
    await waitFor(
      async () => {
        looks++;
        alive = (await t.exec(`pgrep -f ${quote(`[${marker[0]}]${marker.slice(1)}`)} || true`)).stdout.trim();
        return alive === '';
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    ).catch(() => undefined);
    assert.equal(alive, '', 'the remote loop was killed');
    // Ended by EOF on its stdin: no other remote command (a `kill`) was needed. Our connection's
    // sessions: the two streams, connectionOf's exec and the pgrep looks. sshd logs them through its
    // monitor process, after the command has started: wait for the last look's line, then count.
    const expected = 3 + looks;
    const sessions = () => sshdSessions(host.sshdLog().slice(sshdStart), ours);
    await waitFor(() => sessions().length >= expected, {
      timeoutMs: 10_000,
      message: `sshd's log of our ${expected} sessions`,
    }).catch(() => undefined);
    assert.equal(sessions().length, expected, `no session started to stop the stream:\n${sessions().join('\n')}`);
  });

  it('exec timeout and output cap', async () => {
    trustHost();
    const { t } = transport();
    const started = Date.now();
    const err = await rejection(t.exec('sleep 3071', { timeoutMs: 300 }));
    assert.equal(err.kind, 'command-timeout');
    // well before the sleep would have ended (51 min), however busy the machine
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
    assert.ok(await gone('[s]leep 3071'), 'the timed-out command was killed on the host');
    const capped = await t.exec('head -c 100000 /dev/zero | tr "\\0" x', { maxOutputBytes: 1000 });
    assert.equal(capped.stdout.length, 1000);
    assert.match(capped.stderr, /truncated/);
    assert.equal(t.state.kind, 'connected');
  });

  it('shell metacharacters quoted by shell.ts run nothing (canary)', async () => {
    trustHost();
    const { t } = transport();
    const canary = path.join(host.fixtureDir, `canary-${Date.now()}`);
    const evil = [
      `$(touch ${canary})`,
      `\`touch ${canary}\``,
      `; touch ${canary}`,
      `' ; touch ${canary}; '`,
      `| touch ${canary}`,
      `&& touch ${canary}`,
    ];
    const r = await t.exec(commandLine(['printf', '%s\\n', ...evil]));
    assert.equal(r.code, 0);
    assert.deepEqual(r.stdout.split('\n').slice(0, -1), evil);
    const exists = await t.exec(commandLine(['test', '-e', canary]));
    assert.equal(exists.code, 1, 'canary file was not created');
    assert.equal(fs.existsSync(canary), false);
  });

  it('drop -> down (commands fail fast) -> sshd back -> reconnects', async () => {
    trustHost();
    const { t } = transport({ backoffInitialMs: 200, backoffMaxMs: 1000, keepaliveIntervalMs: 1000 });
    await t.connect();
    const marker = `kimi-drop-${Date.now()}`;
    // Silent, like journalctl -f with nothing to say: no write, so no SIGPIPE would end it.
    const stream = await t.stream(`while true; do sleep 0.2; done; echo ${marker}`, () => undefined);
    const retryDelays: number[] = [];
    t.onStateChange((s) => {
      if (s.kind === 'down' && s.retryInMs !== undefined) retryDelays.push(s.retryInMs);
    });
    await host.stopSshd();
    try {
      const down = await waitForState(t, (s) => s.kind === 'down');
      assert.equal(down.kind === 'down' && typeof down.retryInMs, 'number');
      assert.equal(await stream.exited, null);
      // The connection is gone: the followed command ended on the host too, nothing left running.
      assert.ok(await gone(`[${marker[0]}]${marker.slice(1)}`), 'the stream ended on the host after the drop');
      const started = Date.now();
      const err = await rejection(t.exec('true'));
      assert.equal(err.kind, 'closed');
      assert.ok(Date.now() - started < 500, 'fails fast while down');
      // a few attempts fail (refused) while sshd is away, with growing delays: the drop, then two failed attempts
      await waitFor(() => retryDelays.length >= 3, { timeoutMs: 20_000, message: 'two failed reconnection attempts' });
      const [a, b, c] = retryDelays;
      assert.ok(a! < b! && b! < c!, `retry delays: ${retryDelays.join(', ')}`);
      assert.equal(t.handshakes, 1);
    } finally {
      await host.startSshd();
    }
    await waitForState(t, (s) => s.kind === 'connected');
    assert.equal((await t.exec('echo back')).stdout, 'back\n');
    assert.equal(t.handshakes, 2);
  });

  it('ProxyJump: the jump host is verified too and the target is reached through it', async () => {
    trustHost();
    const before = host.handshakes();
    const jump = { ...target(), alias: 'jump' };
    const { t } = transport({ target: target({ jumps: [jump] }) });
    assert.match(t.description, /via 127\.0\.0\.1/);
    assert.equal((await t.exec('echo through')).stdout, 'through\n');
    assert.equal(host.handshakes() - before, 2, 'one login on the jump host, one on the target');

    // an unknown jump host key stops the chain before the target is tried
    fs.writeFileSync(knownHosts, '');
    const second = transport({ target: target({ jumps: [jump] }) });
    const err = await rejection(second.t.connect());
    assert.equal(err.kind, 'host-key-unknown');
    assert.equal(second.asked.length, 1);
  });

  it('an agent that is not running is skipped: the key files are tried next, and the error lists it', async () => {
    trustHost();
    const dead = path.join(tmp, `no-agent-${Date.now()}.sock`);
    const { t } = transport({ agentSocket: dead });
    assert.equal((await t.exec('echo after-dead-agent')).stdout, 'after-dead-agent\n');

    const stranger = path.join(tmp, `stranger2_${Date.now()}`);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    const second = transport({ agentSocket: dead, target: target({ identityFiles: [stranger] }) });
    const err = await rejection(second.t.connect());
    assert.equal(err.kind, 'auth');
    assert.ok(
      err.message.includes(
        `ssh-agent ${dead} (agentSocket option): Failed to connect to agent, ${stranger} (rejected)`,
      ),
      err.message,
    );
  });

  it('dispose leaves no open handles', async () => {
    trustHost();
    // Compare handle objects, not counts: earlier tests' sockets may still be closing.
    const handles = () => (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
    const baseline = new Set(handles());
    const added = () => handles().filter((h) => !baseline.has(h));
    const { t } = transport();
    await t.exec('true');
    const s = await t.stream('sleep 3072', () => undefined);
    const server = http.createServer((_q, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/`, { agent: new TunnelAgent(t.openStream) });
    assert.equal(await res.text(), 'ok');
    await new Promise((r) => server.close(r));
    assert.ok(added().length > 0, 'the transport holds a socket while connected');
    t.dispose();
    assert.equal(t.state.kind, 'closed');
    assert.equal(await s.exited, null);
    await waitFor(() => added().length === 0, { timeoutMs: 5000, intervalMs: 20 }).catch(() => undefined);
    assert.deepEqual(
      added().map((h) => h.constructor.name),
      [],
    );
    await assert.rejects(t.exec('true'), (e: TransportError) => e.kind === 'closed');
    assert.ok(await gone('[s]leep 3072'), 'dispose ended the remote stream command');
  });
});
