/**
 * Beyond one host: two simulated GPU hosts (each a real sshd and the SGLang
 * simulator) driven by one fleet. Every server under watch with one connection each; a rolling
 * restart that restarts the second server only after the first is ready with verified parsers,
 * and stops at a failure of the first; "Add server"'s one-command unit discovery.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile, Settings } from '../../src/config/config';
import { Fleet } from '../../src/fleet/fleet';
import type { FleetEvent } from '../../src/fleet/fleetTypes';
import { rollingRestart, rollSummary } from '../../src/fleet/restart/rolling';
import { createSession, type SessionUi } from '../../src/fleet/sessions/sessionFactory';
import { DISCOVERY_COMMAND, parseDiscovery } from '../../src/target/systemd/unitDiscovery';
import { targetIo } from '../../src/target/target';
import { loginUid } from '../../src/fleet/servers/serverEntry';
import { serverReport } from '../../src/present/report';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { connectionOf, serverEntry, headlessFleet } from './simHost';
import { strangers } from '../gpu-host/execLog';
import { waitFor } from '../util/waitFor';

const NO_QUESTIONS: SessionUi = { trustUnknownHostKey: async () => false, requestPassphrase: async () => undefined };
const FAST_SIM = { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3 };

/** The default unit with the Kimi parsers, so that a parser verification passes. */
function withParsers(host: GpuHost): string {
  return host.defaultUnitText.replace(
    '--trust-remote-code',
    '--trust-remote-code --tool-call-parser kimi_k2 --reasoning-parser kimi_k2',
  );
}

/** When the host ran `systemctl restart` (its exec log), after `since`. */
async function restartTimes(host: GpuHost, since = 0): Promise<number[]> {
  return (await host.execLog())
    .filter((line) => /systemctl\b.*\brestart\b/.test(line))
    .map((line) => Date.parse(line.split(' ', 1)[0]!))
    .filter((at) => at >= since);
}

describe('servers: two hosts, one fleet', function () {
  this.timeout(180_000);
  let a: GpuHost;
  let b: GpuHost;
  let dir: string;
  let settings: Settings;
  let fleet: Fleet;
  const events: { at: number; event: FleetEvent }[] = [];
  const server = (name: string): ServerProfile => settings.servers.find((s) => s.name === name)!;

  before(async () => {
    [a, b] = await Promise.all([
      startGpuHost({ shards: 4, shardBytes: 1024 * 1024, sim: FAST_SIM }),
      startGpuHost({ shards: 4, shardBytes: 1024 * 1024, sim: FAST_SIM }),
    ]);
    await Promise.all([a.writeUnit(withParsers(a), { reload: true }), b.writeUnit(withParsers(b), { reload: true })]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-servers-'));
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${a.knownHostsLine()}\n${b.knownHostsLine()}\n`);
    const parsed = parseSettings({
      servers: [serverEntry(a, 'a'), serverEntry(b, 'b')],
      knownHostsFile,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
      healthIntervalSeconds: 5,
      loadTimeoutMinutes: 2,
    });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    settings = parsed.settings;
    const log = () => undefined;
    fleet = headlessFleet(settings, log);
    fleet.onEvent((event) => events.push({ at: Date.now(), event }));
  });

  after(async () => {
    fleet?.dispose();
    await Promise.all([a?.stop(), b?.stop()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('watchAll: every server watched (first look quiet), one SSH connection per host', async () => {
    const before = [a.handshakes(), b.handshakes()];
    assert.deepEqual(fleet.watchAll(), ['a', 'b']);
    const describeEnd = (e: { event: FleetEvent }) =>
      e.event.type === 'end' ? `${e.event.server.name} ${e.event.outcome.end} quiet=${e.event.quiet}` : '';
    const firstEnds = await waitFor(
      () => {
        const ends = events.filter((e) => e.event.type === 'end');
        return ends.length >= 2 ? ends : undefined;
      },
      { timeoutMs: 30_000, message: 'the first look of both servers' },
    );
    assert.ok(
      firstEnds.every((e) => e.event.type === 'end' && e.event.quiet),
      `the first look is quiet: ${firstEnds.map(describeEnd).join(', ')}`,
    );
    const reports = fleet.snapshots().map((s) => serverReport(s));
    assert.deepEqual(
      reports.map((r) => r.state),
      ['stopped', 'stopped'],
    );
    assert.deepEqual(
      reports.map((r) => [r.server, r.watching]),
      [
        ['a', true],
        ['b', true],
      ],
    );
    assert.deepEqual(fleet.watchAll(), [], 'a second call starts nothing');
    assert.deepEqual([a.handshakes() - before[0]!, b.handshakes() - before[1]!], [1, 1], 'one connection per host');
  });

  it('rolling restart: b restarts only after a is ready with verified parsers; both end ready', async () => {
    const since = Date.now();
    const steps: string[] = [];
    const result = await rollingRestart(fleet, [server('a'), server('b')], {
      loadTimeoutMs: 120_000,
      onProgress: (p) => steps.push(p.text),
    });
    assert.equal(result.kind, 'done', rollSummary(result));
    const [aRestart] = await restartTimes(a, since);
    const [bRestart] = await restartTimes(b, since);
    assert.ok(aRestart && bRestart, 'each host restarted once');
    const aReady = events.find(
      (e) => e.at >= since && e.event.type === 'end' && e.event.server.name === 'a' && e.event.outcome.end === 'ready',
    )?.at;
    const aVerified = events.find(
      (e) => e.at >= since && e.event.type === 'verified' && e.event.server.name === 'a' && e.event.allPassed,
    )?.at;
    const aFiredUp = await a.firedUpAt();
    assert.ok(aReady && aVerified && aFiredUp, `a ready (${aReady}), verified (${aVerified}), fired up (${aFiredUp})`);
    assert.ok(aRestart < aFiredUp! && aFiredUp! <= bRestart, 'a served before b was restarted (host clocks)');
    assert.ok(aReady <= aVerified && aVerified <= bRestart, 'b restarted after a was ready and verified');
    assert.deepEqual(
      fleet.snapshots().map((s) => serverReport(s).state),
      ['ready', 'ready'],
    );
    assert.deepEqual(
      steps.filter((s) => /^restarting/.test(s)),
      ['restarting a (1/2)', 'restarting b (2/2)'],
    );
    console.log(
      `    a restarted ${aRestart - since} ms in, ready +${aReady - aRestart} ms, verified +${aVerified - aReady} ms; b restarted +${bRestart - aVerified} ms after`,
    );
  });

  it('a failure of the first server stops the roll: the second is not restarted, the reason is said', async () => {
    await a.configureSimulator({ fault: { crashAt: 'weights', afterShards: 2, kind: 'oom' } });
    try {
      const since = Date.now();
      const result = await rollingRestart(fleet, [server('a'), server('b')], { loadTimeoutMs: 120_000 });
      assert.ok(result.kind === 'failed', rollSummary(result));
      assert.equal(result.server, 'a');
      assert.deepEqual(result.skipped, ['b']);
      assert.match(result.reason, /failed.*(OutOfMemory|out of memory)/i);
      assert.equal((await restartTimes(a, since)).length, 1);
      assert.deepEqual(await restartTimes(b, since), [], 'b was not touched');
      assert.equal(serverReport(fleet.snapshot(server('b'))).state, 'ready', 'b still serves');
      console.log(`    ${rollSummary(result)}`);
    } finally {
      await a.configureSimulator({ fault: {} });
    }
  });

  it('Add server: one exec lists the SGLang units of a host with their url, other units left out', async () => {
    fs.writeFileSync(
      path.join(path.dirname(a.unitFilePath), 'cron-like.service'),
      '[Service]\nExecStart=/bin/sleep 1000\n',
    );
    const execsBefore = (await a.execEntries()).length;
    const probe = parseSettings({
      servers: [
        {
          name: 'probe',
          host: a.sshHost,
          port: a.sshPort,
          username: a.username,
          identityFile: a.clientKeyPath,
          unit: 'x.service',
        },
      ],
      knownHostsFile: settings.knownHostsFile,
      hostKeyPolicy: 'strict',
    });
    assert.ok(probe.ok);
    const session = await createSession(probe.settings.servers[0]!, probe.settings, NO_QUESTIONS, () => undefined);
    try {
      await session.transport.connect();
      const ours = await connectionOf(session.transport);
      const result = await targetIo(session.transport, 30_000).exec(DISCOVERY_COMMAND);
      assert.equal(result.code, 0, result.stderr);
      const units = parseDiscovery(result.stdout);
      assert.deepEqual(
        units.map((u) => [u.unit, u.url, u.modelPath]),
        [[a.unit, a.serverUrl, a.modelPath]],
      );
      assert.equal(loginUid(result.stdout), 0, 'root logs in: no sudo needed');
      // The fleet's watch of a reads the same unit meanwhile, on its own connection.
      const ran = (await a.execEntries()).slice(execsBefore);
      const systemctls = ran.filter((e) => e.ssh === ours && e.name === 'systemctl');
      assert.equal(
        systemctls.filter((e) => /^show /.test(e.args)).length,
        1,
        `one systemctl show on the discovery's connection ${ours}:\n${systemctls.map((e) => e.line).join('\n')}\n` +
          `other connections meanwhile:\n${strangers(ran, [ours], a.sshdLog())}`,
      );
    } finally {
      session.dispose();
    }
  });
});
