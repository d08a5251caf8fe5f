/**
 * The server on localhost: a port on 127.0.0.1 of this machine, tunnelled through the
 * session's verified SSH connection (real sshd, real ssh2) to the simulated SGLang server. What a
 * local tool sees: a real chat completion over plain HTTP, a forward that outlives a network drop,
 * a port given back on close, and a clear refusal where sshd forbids forwarding.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile } from '../../src/config/config';
import { Fleet } from '../../src/fleet/fleet';
import type { FleetEvent } from '../../src/fleet/fleetTypes';
import { ForwardError } from '../../src/fleet/forward/forwardPlan';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { waitFor } from '../util/waitFor';
import { serverEntry, headlessFleet } from './simHost';

const REPO = path.resolve(__dirname, '..', '..');

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A plain HTTP request to this machine's 127.0.0.1:port, as any local tool would send it. */
function request(port: number, method: string, urlPath: string, body?: unknown, host = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host,
        port,
        method,
        path: urlPath,
        agent: false,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
    req.end(payload);
  });
}

async function chat(port: number): Promise<{ status: number; content: string | undefined; body: string }> {
  const models = await request(port, 'GET', '/v1/models');
  assert.equal(models.status, 200, models.body);
  const model = (JSON.parse(models.body) as { data: { id: string }[] }).data[0]!.id;
  const answer = await request(port, 'POST', '/v1/chat/completions', {
    model,
    messages: [{ role: 'user', content: 'What is the capital of France?' }],
    max_tokens: 32,
  });
  const parsed =
    answer.status === 200 ? (JSON.parse(answer.body) as { choices: { message: { content?: string } }[] }) : undefined;
  return { status: answer.status, content: parsed?.choices[0]?.message.content ?? undefined, body: answer.body };
}

/** How a TCP connection to 127.0.0.1:port (or another address) goes: 'open' or the error code. */
function tryConnect(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe('port forwarding: the server on localhost through the SSH connection', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let dir: string;
  let knownHostsFile: string;
  const fleets: Fleet[] = [];

  function newFleet(): { fleet: Fleet; server: ServerProfile; events: FleetEvent[]; log: string[] } {
    const settings = parseSettings({ servers: [serverEntry(host)], knownHostsFile, hostKeyPolicy: 'strict' });
    assert.ok(settings.ok);
    const log: string[] = [];
    const logTo = (level: string, message: string) => void log.push(`${level}: ${message}`);
    const fleet = headlessFleet(settings.settings, logTo);
    fleets.push(fleet);
    const events: FleetEvent[] = [];
    fleet.onEvent((e) => events.push(e));
    return { fleet, server: settings.settings.servers[0]!, events, log };
  }

  before(async () => {
    host = await startGpuHost({ shards: 2, shardBytes: 1 << 20 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-forward-'));
    knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    const since = Date.now();
    const restarted = await host.ssh(`systemctl restart ${host.unitName}`);
    assert.equal(restarted.code, 0, restarted.stderr);
    await waitFor(async () => ((await host.firedUpAt()) ?? 0) >= since - 1000, {
      timeoutMs: 90_000,
      message: 'the simulated server is ready',
    });
  });
  afterEach(async () => {
    for (const fleet of fleets.splice(0)) {
      for (const server of fleet.servers) await fleet.closeForward(server);
      fleet.dispose();
    }
    if (!host.sshdRunning()) await host.startSshd();
  });
  after(async () => {
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a chat completion from this machine through 127.0.0.1:PORT; the port is on loopback only, in the snapshot and announced', async () => {
    const { fleet, server, events, log } = newFleet();
    const { info, already } = await fleet.forward(server);
    assert.equal(already, false);
    // The simulated host is reached at 127.0.0.1: its server's port is never taken by the forward.
    assert.notEqual(info.localPort, host.httpPort);
    assert.equal(
      info.portNote,
      `the SSH host is this machine, where port ${host.httpPort} is the server's own, so ${info.localPort} was chosen`,
    );
    assert.equal(info.baseUrl, `http://127.0.0.1:${info.localPort}/v1`);
    assert.equal(info.remote, `127.0.0.1:${host.httpPort}`);
    assert.equal(fleet.snapshot(server).forwardedPort, info.localPort);
    assert.ok(
      events.some((e) => e.type === 'forward' && e.forward?.localPort === info.localPort),
      'a forward event',
    );
    assert.ok(
      log.some((l) => l.includes(`Base URL: ${info.baseUrl}`)),
      log.join('\n'),
    );

    const answer = await chat(info.localPort);
    assert.equal(answer.status, 200, answer.body);
    assert.match(answer.content ?? '', /Paris/);
    // 127.0.0.2 is loopback too: a listener on every address would take it, one on 127.0.0.1 does not.
    assert.equal(await tryConnect(info.localPort, '127.0.0.2'), 'ECONNREFUSED');
    // Asked again: the same forward, not a second port.
    const again = await fleet.forward(server);
    assert.equal(again.already, true);
    assert.equal(again.info.localPort, info.localPort);
  });

  it('a local port asked for is used; one already in use is refused clearly, nothing opened', async () => {
    const { fleet, server } = newFleet();
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const busyPort = (busy.address() as net.AddressInfo).port;
    try {
      await assert.rejects(
        fleet.forward(server, { localPort: busyPort }),
        (e: unknown) =>
          e instanceof ForwardError &&
          e.kind === 'port-in-use' &&
          e.message.includes(`127.0.0.1:${busyPort} is already in use`),
      );
      assert.equal(fleet.snapshot(server).forwardedPort, undefined);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
    // The port just freed is free: asked for, it is the one used.
    const { info } = await fleet.forward(server, { localPort: busyPort });
    assert.equal(info.localPort, busyPort);
    assert.equal(info.portNote, undefined, 'a port asked for needs no explanation');
    assert.equal((await request(busyPort, 'GET', '/health')).status, 200);
  });

  it("the server stopped when the forward opens: the forward opens on another port than the server's own, says 502 while it is down, answers once it is back", async () => {
    const { fleet, server, log } = newFleet();
    await host.ssh(`systemctl stop ${host.unitName}`);
    let restarted = false;
    try {
      const { info } = await fleet.forward(server);
      assert.notEqual(info.localPort, host.httpPort, 'the server port stays free for the server');
      assert.ok(
        log.some((l) => /does not answer on 127\.0\.0\.1:\d+ yet/.test(l)),
        log.join('\n'),
      );
      const down = await request(info.localPort, 'GET', '/health');
      assert.equal(down.status, 502);
      assert.match(down.body, /Connection refused/);
      const since = Date.now();
      await host.ssh(`systemctl start ${host.unitName}`);
      await waitFor(async () => ((await host.firedUpAt()) ?? 0) >= since - 1000, {
        timeoutMs: 90_000,
        message: 'the simulated server is ready again',
      });
      restarted = true;
      assert.equal((await chat(info.localPort)).status, 200);
      await fleet.closeForward(server);
      await assert.rejects(
        fleet.forward(server, { localPort: host.httpPort }),
        /the SSH host is this machine and \d+ is the server's own port here/,
      );
    } finally {
      if (!restarted) await host.ssh(`systemctl start ${host.unitName}`);
    }
  });

  it('survives a network drop: in-flight connections close, new ones fail with a clear 502 while down and succeed after the reconnect', async () => {
    const { fleet, server } = newFleet();
    const { info } = await fleet.forward(server);
    assert.equal((await chat(info.localPort)).status, 200);
    const handshakesBefore = host.handshakes();

    // A connection in flight: one HTTP request answered, the connection kept open (keep-alive).
    const inFlight = net.connect({ host: '127.0.0.1', port: info.localPort });
    let inFlightData = '';
    inFlight.on('data', (d: Buffer) => (inFlightData += d.toString('utf8')));
    inFlight.on('error', () => undefined);
    const inFlightClosed = new Promise<void>((resolve) => inFlight.once('close', () => resolve()));
    inFlight.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    await waitFor(() => /^HTTP\/1\.1 200/.test(inFlightData), { message: 'the in-flight connection answered once' });

    await host.stopSshd();
    await inFlightClosed; // closed, not hanging

    const down = await request(info.localPort, 'GET', '/health');
    assert.equal(down.status, 502, down.body);
    assert.match(
      (JSON.parse(down.body) as { error: { message: string } }).error.message,
      /kimi-service port forward: .*(SSH connection|connect|ECONNREFUSED)/i,
    );
    assert.equal(fleet.snapshot(server).forwardedPort, info.localPort, 'the forward stays open while SSH is down');

    await host.startSshd();
    const after = await waitFor(
      async () => {
        const answer = await chat(info.localPort);
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 60_000, message: 'a chat completion through the forward after sshd is back' },
    );
    assert.match(after.content ?? '', /Paris/);
    assert.ok(host.handshakes() > handshakesBefore, 'it went through a new SSH connection');
  });

  it('closing gives the port back: nothing listens, it can be bound again, the snapshot forgets it', async () => {
    const { fleet, server, events } = newFleet();
    const { info } = await fleet.forward(server);
    assert.equal(await tryConnect(info.localPort), 'open');
    assert.equal(await fleet.closeForward(server), true);
    assert.equal(await fleet.closeForward(server), false, 'closing twice: nothing to close');
    assert.equal(await tryConnect(info.localPort), 'ECONNREFUSED');
    const again = net.createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(info.localPort, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => again.close(() => resolve()));
    assert.equal(fleet.snapshot(server).forwardedPort, undefined);
    assert.ok(
      events.some((e) => e.type === 'forward' && e.forward === undefined),
      'a closed-forward event',
    );
  });

  it('new settings: other watch settings keep the forward; a server pointed at another url loses it (port freed)', async () => {
    const { fleet, server } = newFleet();
    const { info } = await fleet.forward(server);
    const settings = (extra: Record<string, unknown>, entry: Record<string, unknown> = {}) => {
      const parsed = parseSettings({
        servers: [{ ...serverEntry(host), ...entry }],
        knownHostsFile,
        hostKeyPolicy: 'strict',
        ...extra,
      });
      assert.ok(parsed.ok);
      return parsed.settings;
    };
    fleet.configure(settings({ pollIntervalSeconds: 3 }));
    assert.equal(fleet.snapshot(server).forwardedPort, info.localPort);
    assert.equal((await request(info.localPort, 'GET', '/health')).status, 200);
    fleet.configure(settings({}, { url: `http://127.0.0.1:${host.httpPort + 1}` }));
    await waitFor(async () => (await tryConnect(info.localPort)) === 'ECONNREFUSED', { message: 'the forward closed' });
    assert.equal(fleet.snapshot(server).forwardedPort, undefined);
  });

  it('the CLI: `kimi-service forward NAME --json` prints the base URL, serves until Ctrl-C, then exits 0 and frees the port', async () => {
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
    const config = path.join(dir, 'servers.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ servers: [serverEntry(host, 'sim')], knownHostsFile, hostKeyPolicy: 'strict' }),
    );
    const child = spawn(
      process.execPath,
      [path.join(REPO, 'dist', 'cli.js'), 'forward', 'sim', '--json', '--config', config],
      {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const opened = await waitFor(() => stdout.split('\n').find((l) => l.includes('"event":"forward"')), {
        timeoutMs: 30_000,
        message: `the forward line (stderr: ${stderr})`,
      });
      const info = JSON.parse(opened) as { localPort: number; baseUrl: string; server: string };
      assert.equal(info.server, 'sim');
      assert.equal(info.baseUrl, `http://127.0.0.1:${info.localPort}/v1`);
      const answer = await chat(info.localPort);
      assert.equal(answer.status, 200, answer.body);
      child.kill('SIGINT');
      assert.equal(await exited, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`);
      assert.match(stdout, /"event":"closed"/);
      assert.equal(await tryConnect(info.localPort), 'ECONNREFUSED');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('AllowTcpForwarding no: a clear refusal that says why, and no port opened', async () => {
    await host.setTcpForwarding(false);
    try {
      const { fleet, server } = newFleet();
      await assert.rejects(fleet.forward(server), (e: unknown) => {
        assert.ok(e instanceof ForwardError, String(e));
        assert.equal(e.kind, 'prohibited');
        assert.match(e.message, /forbids TCP forwarding \(AllowTcpForwarding no/);
        assert.match(e.message, /AllowTcpForwarding local/);
        return true;
      });
      assert.equal(fleet.snapshot(server).forwardedPort, undefined);
      assert.equal(fleet.forwardOf(server), undefined);
    } finally {
      await host.setTcpForwarding(true);
    }
  });
});
