/**
 * HTTP over the OpenSSH transport through the master's own forwards (localForwards.ts), against a
 * real sshd and the simulated GPU host: every `ssh` the transport starts is logged by a wrapper
 * put first on PATH, so the processes a watch costs are counted, not guessed. A watch to ready
 * makes one forward and no `ssh -W` per request; a forward idle for a while is cancelled and made
 * again on demand, made again over a new master after a drop, gone with the transport; sshd's
 * `AllowTcpForwarding no` still sends HTTP through curl on the host.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fetch from 'node-fetch';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { isForwardingProhibited } from '../../src/transport/curlFetch';
import { TunnelAgent } from '../../src/transport/httpAgent';
import { isAlive } from '../../src/transport/openssh/controlMaster';
import { OpenSshTransport } from '../../src/transport/openssh/opensshTransport';
import type { Transport } from '../../src/transport/transport';
import { waitFor } from '../util/waitFor';
import { FAST_WATCH, sessionForHost } from './simHost';

describe('OpenSSH transport: HTTP through the master’s forwards', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let tmp: string;
  let sshLog: string;
  let savedPath: string | undefined;
  let server: http.Server;
  let httpPort: number;
  const open: OpenSshTransport[] = [];

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openssh-forward-'));
    sshLog = path.join(tmp, 'ssh.log');
    const realSsh = ['/usr/bin/ssh', '/bin/ssh', '/usr/local/bin/ssh'].find((p) => fs.existsSync(p));
    assert.ok(realSsh, 'an ssh client');
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin);
    // exec keeps the pid: each line names one ssh process and its arguments (newlines made spaces, one write).
    fs.writeFileSync(
      path.join(bin, 'ssh'),
      `#!/bin/sh\nline=$(printf '%s ' "$$" "$@" | tr '\\n' ' ')\nprintf '%s\\n' "$line" >> '${sshLog}'\nexec ${realSsh} "$@"\n`,
      { mode: 0o755 },
    );
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
    host = await startGpuHost({
      shards: 2,
      shardBytes: 2 * 1024 * 1024,
      sim: { readMBps: 32, warmReadMBps: 32, warmupSeconds: 0.5 },
    });
    server = http.createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    httpPort = (server.address() as AddressInfo).port;
  });

  after(async () => {
    for (const t of open) t.dispose();
    process.env.PATH = savedPath;
    server?.close();
    await host?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });

  /** The ssh processes started since line `from` of the wrapper's log: pid and arguments. */
  const started = (from = 0) =>
    (fs.existsSync(sshLog) ? fs.readFileSync(sshLog, 'utf8').split('\n').filter(Boolean) : [])
      .slice(from)
      .map((l) => ({ pid: Number(l.split(' ')[0]), args: l.slice(l.indexOf(' ')) }))
      .filter((s) => Number.isInteger(s.pid) && s.pid > 0);

  function transport(forwardIdleMs?: number) {
    const config = path.join(tmp, 'ssh_config');
    const known = path.join(tmp, 'known_hosts');
    fs.writeFileSync(known, `${host.knownHostsLine()}\n`);
    const login = host.login();
    fs.writeFileSync(
      config,
      [
        'Host sim',
        '  HostName 127.0.0.1',
        `  Port ${host.sshPort}`,
        `  User ${login.username}`,
        `  IdentityFile ${login.identityFile}`,
        '  IdentitiesOnly yes',
        '  IdentityAgent none',
        `  UserKnownHostsFile ${known}`,
        '',
      ].join('\n'),
    );
    const t = new OpenSshTransport({
      host: { host: 'sim', configFile: config },
      knownHostsFile: known,
      decideUnknownHostKey: async () => 'reject',
      backoffInitialMs: 200,
      watchIntervalMs: 200,
      ...(forwardIdleMs !== undefined ? { forwardIdleMs } : {}),
    });
    open.push(t);
    return t;
  }

  const get = async (t: Transport, url: string) =>
    (await fetch(`http://127.0.0.1:${httpPort}${url}`, { agent: new TunnelAgent(t.openStream) })).text();

  it('watches to ready with one forward for its HTTP, not an ssh process per request; all gone after dispose', async () => {
    const from = started().length;
    let streams = 0;
    const test = await sessionForHost(host, {
      settings: { 'ssh.client': 'openssh' },
      wrap: (t) =>
        new Proxy(t, {
          get: (target, key) => {
            if (key === 'openStream')
              return (h: string, p: number) => {
                streams++;
                return target.openStream(h, p);
              };
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        }),
    });
    let sockets: string[] = [];
    try {
      const outcome = await test.session.watch('restart', FAST_WATCH);
      assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);
      assert.ok(
        test.logLines.some((l) => l.includes('SSH client: openssh ')),
        test.logLines.join('\n'),
      );
      const ssh = started(from);
      const forwards = ssh.filter((s) => / -O forward -L /.test(s.args));
      assert.ok(streams >= 3, `HTTP streams asked for: ${streams}`);
      assert.deepEqual(
        ssh.filter((s) => / -W /.test(s.args)).map((s) => s.args),
        [],
      );
      assert.equal(forwards.length, 1, ssh.map((s) => s.args).join('\n'));
      sockets = forwards.map((s) => / -L (\S+?):127\.0\.0\.1:\d+ /.exec(s.args)![1]!);
      assert.ok(fs.existsSync(sockets[0]!), 'the forward listens');
      assert.equal(fs.statSync(path.dirname(sockets[0]!)).mode & 0o077, 0, 'its folder is private');
    } finally {
      test.dispose();
    }
    await waitFor(() => sockets.every((s) => !fs.existsSync(s)), { message: 'the forward’s socket removed' });
    await waitFor(
      () => {
        const alive = started(from).filter((s) => isAlive(s.pid));
        if (alive.length) throw new Error(`alive: ${alive.map((s) => `${s.pid} ${s.args}`).join('; ')}`);
        return true;
      },
      { timeoutMs: 15_000, message: 'no ssh process left' },
    );
  });

  it('cancels a forward left idle, makes it again when asked, when its socket is gone, and over a new master', async () => {
    const t = transport(300);
    assert.equal(await get(t, '/one'), 'hello /one');
    const [first] = t.forwardSockets;
    assert.ok(first !== undefined && fs.existsSync(first));
    assert.equal(await get(t, '/two'), 'hello /two');
    assert.deepEqual(t.forwardSockets, [first], 'one forward for both requests');
    await waitFor(() => t.forwardSockets.length === 0 && !fs.existsSync(first), {
      message: 'the idle forward cancelled',
    });
    assert.ok(
      started().some((s) => s.args.includes(` -O cancel -L ${first}:`)),
      'cancelled through the master (-O cancel)',
    );
    assert.equal(await get(t, '/three'), 'hello /three');
    const [remade] = t.forwardSockets;
    assert.ok(remade !== undefined && remade !== first);
    // A socket gone from under a live master (nothing listens there): the forward is made again.
    fs.rmSync(remade);
    assert.equal(await get(t, '/lost'), 'hello /lost');
    const [again] = t.forwardSockets;
    assert.ok(again !== undefined && again !== remade && fs.existsSync(again));
    assert.equal(t.handshakes, 1);
    process.kill(t.masterPid!, 'SIGKILL');
    await waitFor(() => t.handshakes === 2 && t.state.kind === 'connected', { message: 'connected again' });
    assert.equal(await get(t, '/four'), 'hello /four');
    const [overNew] = t.forwardSockets;
    assert.ok(overNew !== undefined && overNew !== again, 'a forward of the new master');
    assert.equal(fs.existsSync(again), false, 'the dead master’s socket removed');
  });

  it('sshd refusing TCP forwarding: the stream says so, and the watch reaches ready through curl on the host', async () => {
    await host.setTcpForwarding(false);
    try {
      const t = transport();
      const err = await get(t, '/x').then(
        () => assert.fail('a stream through a host that forbids forwarding'),
        (e: unknown) => e,
      );
      assert.ok(isForwardingProhibited(err), String(err));
      const test = await sessionForHost(host, { settings: { 'ssh.client': 'openssh' } });
      try {
        const outcome = await test.session.watch('restart', FAST_WATCH);
        assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
        assert.equal(test.session.client.viaFallback, true);
      } finally {
        test.dispose();
      }
    } finally {
      await host.setTcpForwarding(true);
    }
  });
});
