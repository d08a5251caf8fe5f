/**
 * A stand-in on the server's port: another process of the host answers /health 200
 * "OK" and HTML on /v1/models while the weights still load. Its answers do not count: the load
 * stays `loading`, the stand-in is named with its pid and command, and the load becomes ready
 * once the server itself holds the port. A stand-in that keeps the port makes the server die
 * with "address already in use", told as the cause.
 */
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { startStandIn, type StandInProcess } from '../gpu-host/portStandIn';
import type { LoadState, Verdict } from '../../src/monitor/state/loadStateTypes';
import { failureMessage } from '../../src/present/messages';
import { FAST_WATCH, loginAs, sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';

describe('a stand-in on the server port (simulated host, real SSH)', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  let standIn: StandInProcess | undefined;

  before(async () => {
    host = await startGpuHost({ shards: 12, shardBytes: 2 * 1024 * 1024, sim: { coldFiles: 'all' } });
  });
  afterEach(async () => {
    await standIn?.stop();
    standIn = undefined;
    test?.dispose();
    test = undefined;
  });
  after(() => host?.stop());

  it('stays loading while the stand-in answers, names it, and is ready once the server holds the port', async () => {
    // 24 MB at 1 MB/s: the weights take about 24 s, time for the stand-in to be seen and to leave.
    await host.configureSimulator({ fault: {}, readMBps: 1, warmReadMBps: 1, warmupSeconds: 1 });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const verdictsWhileStandIn = new Set<Verdict>();
    let standInUp = false;
    const watching = test.session.watch('restart', FAST_WATCH, {
      onState: (s) => {
        states.push(s);
        if (standInUp) verdictsWhileStandIn.add(s.verdict);
      },
    });
    // The old server is gone and the new one reads its weights: the port is free.
    await waitFor(() => states.at(-1)?.phase === 'loading weights' && (states.at(-1)?.shards?.done ?? 0) >= 1, {
      timeoutMs: 60_000,
      message: 'the new run reads its weights',
    });
    standIn = await startStandIn(host, test.dir);
    standInUp = true;
    const named = await waitFor(() => states.at(-1)?.standIn, { timeoutMs: 30_000, message: 'the stand-in named' });
    assert.equal(named.pid, standIn.pid);
    assert.equal(named.command, 'node');
    assert.equal(named.port, host.httpPort);
    // It answered /health (200 "OK") at least twice while named: neither answer counted.
    const before = standIn.requests();
    await waitFor(() => standIn!.requests() >= before + 2, { timeoutMs: 30_000, message: 'the stand-in asked' });
    const last = states.at(-1)!;
    assert.equal(last.verdict, 'loading', `while the stand-in answers: ${last.verdict}`);
    assert.equal(last.http, undefined);
    assert.ok(
      test.logLines.some((l) =>
        l.includes(`port ${host.httpPort} is answered by pid ${standIn!.pid} (node), not by ${host.unitName}`),
      ),
      test.logLines.join('\n'),
    );
    await standIn.stop();
    standIn = undefined;
    standInUp = false;
    const outcome = await watching;
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);
    assert.deepEqual([...verdictsWhileStandIn].sort(), ['loading'], 'the only verdict while the stand-in answered');
    assert.equal(outcome.state.standIn, undefined);
    assert.match(outcome.state.completion!.detail, /completion answered/);
    const firedUp = await host.firedUpAt();
    assert.ok(firedUp !== undefined && outcome.state.readyAt! >= firedUp - 50, 'ready only after the server said so');
  });

  it('a stand-in that keeps the port: the server dies of "address already in use", told as the cause with the holder', async () => {
    await host.configureSimulator({ fault: {}, readMBps: 8, warmReadMBps: 8, warmupSeconds: 1 });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const watching = test.session.watch('restart', FAST_WATCH, { onState: (s) => states.push(s) });
    await waitFor(() => states.at(-1)?.phase === 'loading weights', { timeoutMs: 60_000, message: 'weights' });
    standIn = await startStandIn(host, test.dir);
    const outcome = await watching;
    assert.equal(outcome.end, 'failed', `ended ${outcome.end}`);
    assert.ok(!states.some((s) => s.verdict === 'ready'), 'never ready');
    // Warm only by the server's own word (uvicorn's startup line comes before its bind), never by the stand-in's answers.
    const warm = states.find((s) => s.verdict === 'warming up');
    if (warm)
      assert.match(warm.lastSignal!.text, /Application startup complete|Uvicorn running/, warm.lastSignal!.text);
    const message = failureMessage(test.session.profile, outcome);
    assert.match(message, /address already in use/, message);
    assert.match(message, new RegExp(`port ${host.httpPort} is answered by pid ${standIn.pid} \\(node\\)`), message);
  });

  it('a sampler that comes late: an answer on the port waits for its next round, which names the stand-in', async () => {
    // Rounds of 3 s: the port looks closed for 6 s after the sampler's last word, and a sampler
    // silent for 15 s is no longer waited for.
    const slowRounds = { ...FAST_WATCH, pollIntervalMs: 3000 };
    await host.configureSimulator({ fault: {}, readMBps: 1, warmReadMBps: 1, warmupSeconds: 1 });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const watching = test.session.watch('restart', slowRounds, { onState: (s) => states.push(s) });
    await waitFor(() => (states.at(-1)?.shards?.done ?? 0) >= 2, { timeoutMs: 60_000, message: 'two shards read' });
    // The host is too busy to run the sampler: its shell and nvidia-smi loop stop where they are.
    const sampler = (signal: string) => host.nsExec(`pkill -${signal} -f 'portscan\\(\\)'`);
    const stopped = await sampler('STOP');
    assert.equal(stopped.code, 0, `the sampler stopped: ${stopped.stderr}`);
    const stoppedAt = Date.now();
    const fromStop = states.length;
    standIn = await startStandIn(host, test.dir);
    await waitFor(() => Date.now() - stoppedAt >= 10_000, { timeoutMs: 30_000, message: '10 s of a silent sampler' });
    const resumed = await sampler('CONT');
    assert.equal(resumed.code, 0, resumed.stderr);
    const named = await waitFor(() => states.at(-1)?.standIn, { timeoutMs: 30_000, message: 'the stand-in named' });
    assert.equal(named.pid, standIn.pid);
    const early = states
      .slice(fromStop)
      .find((s) => s.verdict !== 'loading' || s.http === 'healthy' || s.http === 'warming');
    assert.equal(early, undefined, `counted before its owner was read: ${early?.verdict}, ${early?.lastSignal?.text}`);
    await standIn.stop();
    standIn = undefined;
    const outcome = await watching;
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}`);
  });

  describe('logged in as another user than the server’s', () => {
    let other: GpuHost;
    before(async () => {
      other = await startGpuHost({
        shards: 12,
        shardBytes: 2 * 1024 * 1024,
        users: ['kimi'],
        sim: { coldFiles: 'all' },
      });
      await other.addToGroup('kimi', 'systemd-journal');
    });
    after(() => other?.stop());

    it('who holds the port cannot be told: said once, and the answers count as before', async () => {
      await other.configureSimulator({ fault: {}, readMBps: 2, warmReadMBps: 2, warmupSeconds: 1 });
      // Restarted by root on the host; watched by kimi, who cannot read root's /proc/PID/fd.
      const restart = await other.ssh(`systemctl restart --no-block ${other.unit}`);
      assert.equal(restart.code, 0, restart.stderr);
      test = await sessionForHost(other, { server: loginAs(other, 'kimi', false) });
      const states: LoadState[] = [];
      const watching = test.session.watch('watch', FAST_WATCH, { onState: (s) => states.push(s) });
      await waitFor(() => states.at(-1)?.phase === 'loading weights', {
        timeoutMs: 60_000,
        message: `weights (${test.logLines.join('\n')})`,
      });
      standIn = await startStandIn(other, test.dir);
      const said = /Who listens on port \d+ cannot be told: the fds of .* are not readable by this login/;
      await waitFor(() => test!.logLines.some((l) => said.test(l)), { timeoutMs: 30_000, message: 'said why' });
      // Today's behaviour: the stand-in's 200 makes the load warm (and nothing is named).
      await waitFor(() => states.at(-1)?.verdict === 'warming up', { timeoutMs: 30_000, message: 'warming up' });
      assert.ok(states.every((s) => s.standIn === undefined));
      await standIn.stop();
      standIn = undefined;
      const outcome = await watching;
      assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}`);
      assert.equal(test.logLines.filter((l) => said.test(l)).length, 1, 'said once');
    });
  });
});
