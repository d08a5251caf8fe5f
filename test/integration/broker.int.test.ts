/**
 * One watch per host for every process of the user (docs/broker.md): real processes
 * running the core (brokerPeer.ts) against the simulated GPU host, sharing through the broker's
 * socket. Two processes log in once, restart once (asked in the client, run by the owner), run
 * one verification round and both see ready; the owner leaves and the client takes over and
 * keeps watching; a third joins the new owner and sees the state at once; an owner killed with
 * SIGKILL leaves a stale socket that the survivor claims.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { waitFor } from '../util/waitFor';
import { role, startPeer as startBrokerPeer, type Line, type Peer } from './brokerPeerProcess';
import { serverEntry } from './simHost';

const FAST_SIM = { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3 };

describe('broker: one watch per host shared by real processes', function () {
  this.timeout(240_000);
  let host: GpuHost;
  let dir: string;
  let settingsFile: string;
  let brokerDir: string;
  const peers: Peer[] = [];

  const chatRequests = () => {
    try {
      return fs.readFileSync(path.join(host.stateDir, 'chat-requests.jsonl'), 'utf8').trim().split('\n').filter(Boolean)
        .length;
    } catch {
      return 0;
    }
  };
  const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;

  function startPeer(): Peer {
    const peer = startBrokerPeer(settingsFile, brokerDir);
    peers.push(peer);
    return peer;
  }
  const endReady = (l: Line) => l.event === 'end' && l.end === 'ready';

  before(async () => {
    host = await startGpuHost({ shards: 4, shardBytes: 1024 * 1024, sim: FAST_SIM });
    await host.writeUnit(
      host.defaultUnitText.replace(
        '--trust-remote-code',
        '--trust-remote-code --tool-call-parser kimi_k2 --reasoning-parser kimi_k2',
      ),
      { reload: true },
    );
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-broker-int-'));
    brokerDir = path.join(dir, 'broker');
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    settingsFile = path.join(dir, 'settings.json');
    fs.writeFileSync(
      settingsFile,
      JSON.stringify({
        servers: [serverEntry(host)],
        knownHostsFile,
        hostKeyPolicy: 'strict',
        pollIntervalSeconds: 0.5,
        healthIntervalSeconds: 5,
        loadTimeoutMinutes: 2,
      }),
    );
  });

  after(async () => {
    for (const p of peers) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('two processes: one SSH login, a restart asked in the client run once by the owner, one verification round, both see ready', async () => {
    const a = startPeer();
    await a.next(role('owner'), 'the first process owns the broker');
    const b = startPeer();
    await b.next(role('client'), 'the second process is a client');
    const restartsBefore = await restarts();
    const chatBefore = chatRequests();
    b.send('restart');
    const restart = await b.next((l) => l.restart !== undefined || l.restartError !== undefined, 'the restart');
    assert.deepEqual(
      [restart.restart, restart.issued],
      ['restarted', true],
      `${JSON.stringify(restart)}\nA: ${a.lines.map((l) => JSON.stringify(l)).join('\n')}\nB: ${b.lines.map((l) => JSON.stringify(l)).join('\n')}`,
    );
    await Promise.all([a.next(endReady, 'A sees ready'), b.next(endReady, 'B sees ready')]);
    await Promise.all([
      a.next((l) => l.event === 'verified', 'A sees the verification'),
      b.next((l) => l.event === 'verified', 'B sees the verification'),
    ]);
    const verification = await a.next((l) => l.verification !== undefined, "the owner's verification");
    assert.equal(verification.verification, 'verified');
    assert.equal(await restarts(), restartsBefore + 1, 'one restart on the host');
    assert.equal(host.handshakes(), 1, 'one SSH login for both processes');
    const ran = peers.map((p) => p.lines.filter((l) => l.ranVerification).length);
    assert.deepEqual(ran, [1, 0], 'the owner (told, as no window has the focus) verified once, the client not');
    const aEnd = a.lines.find(endReady)!;
    const bEnd = b.lines.find(endReady)!;
    assert.deepEqual([aEnd.quiet, bEnd.quiet], [false, true], 'the ready is news in one process only');
    // A client's HTTP and commands (the chat model's looks) go through the owner's connection, and
    // give back the channels they took: the owner's watch keeps its probes' slot.
    const fromB = b.lines.length;
    b.send('http');
    const http = await b.next((l) => l.http !== undefined || l.httpError !== undefined, "B's HTTP", fromB);
    assert.deepEqual([http.http, http.exec], [[200, 200, 200, 200, 200], 'MainPID=N'], JSON.stringify(http));
    assert.equal(host.handshakes(), 1, "B's HTTP and command used A's connection");
    await waitFor(
      async () => {
        const from = a.lines.length;
        a.send('slots');
        const slots = (await a.next((l) => l.slots !== undefined, "A's channel slots", from)).slots as number;
        return slots <= 2;
      },
      { message: "the tunnels' channels given back (A keeps its journal and sampler only)", timeoutMs: 30_000 },
    );
    const firstRound = chatRequests() - chatBefore;
    console.log(`      one verification round: ${firstRound} chat requests on the host`);
    assert.ok(firstRound > 0);
  });

  it('the owner leaves: the client takes over and keeps watching; a third process joins it and sees ready at once', async () => {
    const [a, b] = peers;
    const fromB = b!.lines.length;
    a!.send('exit');
    await b!.next(role('owner'), 'B takes over', fromB);
    await waitFor(() => host.handshakes() === 2, { message: "B's own login after the takeover", timeoutMs: 60_000 });
    const c = startPeer();
    await c.next(role('client'), 'C joins B');
    const seen = await c.next((l) => l.event === 'state', 'C gets the state at once');
    assert.equal(seen.verdict, 'ready');
    assert.equal(seen.watching, true);
    // The takeover made nobody see the ready server load again: B's fresh watch replayed the run's
    // journal (loading, warming up) behind the state A had sent, until its first look ended.
    const tookOver = b!.lines.findIndex((l, i) => i >= fromB && l.role === 'owner');
    const shownByB = b!.lines
      .slice(tookOver)
      .filter((l) => l.event !== undefined)
      .map((l) => l.verdict);
    assert.ok(
      shownByB.every((v) => v === 'ready'),
      `B showed only ready after the takeover: ${shownByB.join(', ')}`,
    );
    // B goes on watching: a restart asked in C is run by B and both follow it to ready.
    const fromC = c.lines.length;
    const fromB2 = b!.lines.length;
    c.send('restart');
    assert.equal((await c.next((l) => l.restart !== undefined, 'the restart from C', fromC)).restart, 'restarted');
    await Promise.all([
      b!.next(endReady, 'B sees the new load ready', fromB2),
      c.next(endReady, 'C sees it ready', fromC),
    ]);
    assert.equal(host.handshakes(), 2, 'C added no login');
  });

  it('an owner killed (SIGKILL) leaves a stale socket: the survivor claims it and watches', async () => {
    const [, b, c] = peers;
    const fromC = c!.lines.length;
    b!.child.kill('SIGKILL');
    await waitFor(() => b!.child.signalCode === 'SIGKILL', { message: 'B killed' });
    await c!.next(
      role('owner'),
      `C takes over from the killed owner (sockets: ${spawnSync('ss', ['-xp'], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter((l) => l.includes(brokerDir) || l.includes(`pid=${c!.child.pid},`))
        .join('\n')})`,
      fromC,
    );
    const took = c!.lines.findIndex((l, i) => i >= fromC && l.role === 'owner');
    await waitFor(() => host.handshakes() === 3, { message: "C's own login", timeoutMs: 60_000 });
    await c!.next((l) => l.event === 'state' && l.verdict === 'ready', 'C watches on its own connection', took);
  });
});
