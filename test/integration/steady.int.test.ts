/**
 * The truth around a load, not only during it, against a real sshd and the simulated
 * GPU host: a server that dies after ready, a restart by someone else, a slow stop, a journal
 * the user may not read, /health failing after ready, a completion that fails while /health
 * says up.
 */
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import type { LoadState, Verdict } from '../../src/monitor/state/loadStateTypes';
import type { WatchAlert, WatchOptions, WatchOutcome } from '../../src/monitor/watch/watchTypes';
import { connectionOf, FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { sshdSessions } from '../gpu-host/execLog';
import { waitFor } from '../util/waitFor';
import { maskSecrets } from '../../src/util/secrets';
import { CountingProxy } from '../../scripts/countingProxy';

/** Everything a steady watch tells its listener. */
class Witness {
  readonly verdicts: Verdict[] = [];
  readonly ends: WatchOutcome[] = [];
  readonly alerts: WatchAlert[] = [];
  readonly states: { at: number; state: LoadState }[] = [];
  closed = false;
  readonly listener = {
    onState: (state: LoadState) => {
      this.states.push({ at: Date.now(), state });
      if (this.verdicts[this.verdicts.length - 1] !== state.verdict) this.verdicts.push(state.verdict);
    },
    onEnd: (outcome: WatchOutcome) => void this.ends.push(outcome),
    onAlert: (alert: WatchAlert) => void this.alerts.push(alert),
    onClosed: () => void (this.closed = true),
  };
  /** When the state first had this verdict after `since`. */
  firstAt(verdict: Verdict, since = 0): number | undefined {
    return this.states.find((s) => s.at >= since && s.state.verdict === verdict)?.at;
  }
}

/** Journal time (ms) of the first line matching `pattern`, from the host's own journal. */
async function journalTime(host: GpuHost, pattern: RegExp): Promise<number | undefined> {
  const entry = (await host.journalEntries()).find((e) => pattern.test(e.msg));
  return entry ? entry.t / 1000 : undefined;
}

describe('steady state: the status is true after ready too', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  const steady = (intervalMs: number, extra: Partial<WatchOptions> = {}): WatchOptions => ({
    ...FAST_WATCH,
    steadyIntervalMs: intervalMs,
    ...extra,
  });

  before(async () => {
    host = await startGpuHost({
      shards: 6,
      shardBytes: 1024 * 1024,
      sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.5 },
    });
  });
  afterEach(async () => {
    test?.dispose();
    test = undefined;
    await host.setJournalAccess('allowed');
    await host.configureSimulator({ fault: {}, stopDelayMs: 0, readMBps: 40, warmReadMBps: 40, coldFiles: undefined });
  });
  after(() => host?.stop());

  it('a server killed after ready is failed within seconds of its exit line, long before the next /health', async () => {
    await host.configureSimulator({ fault: {} });
    test = await sessionForHost(host);
    const seen = new Witness();
    // /health every 60 s: a failure seen sooner came from the journal and the unit.
    const first = await test.session.watch('restart', steady(60_000), seen.listener);
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    assert.equal(test.session.watching, true, 'still watched after ready');
    assert.equal(test.session.busy, false, 'a ready server can be restarted again');
    const killedAt = Date.now();
    await host.killServer('SIGKILL');
    const failed = await waitFor(() => seen.ends.find((e) => e.end === 'failed'), {
      timeoutMs: 30_000,
      message: 'a failed end after ready',
    });
    assert.match(failed.state.failure!.summary, /killed by signal 9 after it was ready/);
    const exitLine = (await journalTime(host, /Main process exited/)) ?? killedAt;
    const latency = seen.firstAt('failed', killedAt)! - exitLine;
    assert.ok(latency < 20_000, `failed ${latency} ms after the exit line: well before the 60 s /health round`);
    assert.equal(test.session.state?.verdict, 'failed');
    assert.equal(test.session.watching, true, 'the watch goes on after a failure, to follow the next start');
  });

  it('a restart by someone else is followed as a new load, to ready', async () => {
    await host.configureSimulator({ fault: {} });
    test = await sessionForHost(host);
    const seen = new Witness();
    const first = await test.session.watch('watch', steady(60_000), seen.listener);
    if (first.end !== 'ready') {
      // The previous test left the unit failed: start it from outside, the watch follows.
      assert.equal(first.end, 'failed');
    }
    const before = seen.ends.length;
    const r = await host.ssh(`systemctl restart ${host.unit}`);
    assert.equal(r.code, 0, r.stderr);
    const again = await waitFor(() => seen.ends.slice(before).find((e) => e.end === 'ready'), {
      timeoutMs: 60_000,
      message: 'the new load to end ready',
    });
    assert.equal(again.state.restartedBy, 'someone else');
    assert.ok(again.state.mainPid === (await host.mainPid()), 'follows the new process');
    const after = seen.verdicts.slice(seen.verdicts.lastIndexOf('ready', seen.verdicts.length - 2) + 1);
    assert.ok(
      after.includes('loading') || after.includes('restarting') || after.includes('warming up'),
      `verdicts after the outside restart: ${seen.verdicts}`,
    );
  });

  it('a slow stop shows as stopping, never unreachable, and the restart happens once', async () => {
    await host.configureSimulator({ fault: {}, stopDelayMs: 6000 });
    test = await sessionForHost(host);
    const seen = new Witness();
    await test.session.transport.connect();
    const ours = await connectionOf(test.session.transport);
    const execsBefore = (await host.execEntries()).length;
    const outcome = await test.session.watch('restart', steady(60_000), seen.listener);
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    assert.ok(seen.verdicts.includes('stopping'), `verdicts: ${seen.verdicts}`);
    assert.ok(
      !seen.verdicts.includes('unreachable') && !seen.verdicts.includes('failed'),
      `verdicts: ${seen.verdicts}`,
    );
    const ran = (await host.execEntries()).slice(execsBefore);
    const restarts = ran.filter((e) => e.ssh === ours && e.name === 'systemctl' && /\brestart\b/.test(e.args));
    assert.equal(restarts.length, 1, `one restart command on ${ours}:\n${ran.map((e) => e.line).join('\n')}`);
  });

  it('a long load costs a handful of remote commands, not one per round: one sampler, nvidia-smi started once', async () => {
    // ~12 s of weights at 500 ms rounds: the per-round exec design ran ~24 systemctl/nvidia-smi here.
    await host.configureSimulator({ fault: {}, readMBps: 0.5, warmReadMBps: 0.5, coldFiles: 'all' });
    test = await sessionForHost(host);
    await test.session.transport.connect();
    // A previous test's session may still be winding down on the host: count this connection's only.
    // sshd logs a session's start a little after it (through its monitor process), so connectionOf's
    // own may come after any mark taken here: count from before it and leave it out.
    const sshdBefore = host.sshdLog().length;
    const ours = await connectionOf(test.session.transport);
    const before = (await host.execEntries()).length;
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    const sessions = sshdSessions(host.sshdLog().slice(sshdBefore), ours).length - 1;
    const loadMs = outcome.state.readyAt! - outcome.state.restartRequestedAt!;
    const commands = (await host.execEntries())
      .slice(before)
      .filter((e) => e.ssh === ours)
      .map((e) => `${e.name} ${e.args}`);
    const count = (re: RegExp) => commands.filter((c) => re.test(c)).length;
    assert.ok(loadMs > 8000, `the load took ${loadMs} ms: long enough to tell per-round commands apart`);
    assert.equal(
      count(/^nvidia-smi .*-lms 500\b/),
      1,
      `one nvidia-smi -lms for the whole load: ${commands.join(' | ')}`,
    );
    assert.equal(count(/^nvidia-smi (?!.*-lms)/), 0, 'no per-round nvidia-smi');
    // A look before the restart, the restart, a look per round until the new run (one or two).
    assert.ok(
      count(/^systemctl show/) <= 3,
      `systemctl show ran ${count(/^systemctl show/)} times in ${loadMs} ms: ${commands.join(' | ')}`,
    );
    // ...and the journal follow and the sampler (the model size in its first line): no other session.
    assert.ok(sessions <= 6, `${sessions} SSH sessions for the load: ${commands.join(' | ')}`);
    assert.ok(outcome.state.io !== undefined && outcome.state.io.readBytes > 0, 'bytes read came from the sampler');
    assert.ok(outcome.state.gpu !== undefined, 'GPU memory came from the sampler');
  });

  it('while the weights load, a round costs a few hundred bytes over SSH: journal lines without their address fields, /health paced by the port', async () => {
    // The same ~12 s load as above, through a byte-counting proxy in front of sshd.
    await host.configureSimulator({ fault: {}, readMBps: 0.5, warmReadMBps: 0.5, coldFiles: 'all' });
    const proxy = new CountingProxy(host.sshPort);
    await proxy.listen();
    try {
      test = await sessionForHost(host, {
        server: { port: proxy.port },
        knownHosts: `[127.0.0.1]:${proxy.port} ${host.hostPublicKey}\n`,
      });
      const journalLines: string[] = [];
      const transport = test.session.transport;
      const stream = transport.stream.bind(transport);
      transport.stream = (command, onLine, onStderr) =>
        stream(
          command,
          (line) => {
            if (command.includes('journalctl')) journalLines.push(line);
            onLine(line);
          },
          onStderr,
        );
      // The window: from 2 s into the weights (the follow and the sampler started) to their end.
      let window: { from?: { at: number; bytes: number }; to?: { at: number; bytes: number } } = {};
      const outcome = await test.session.watch('restart', FAST_WATCH, {
        onState: (state) => {
          const now = { at: Date.now(), bytes: proxy.bytes };
          const since = state.phaseTimes['loading weights'];
          if (
            state.phase === 'loading weights' &&
            since !== undefined &&
            window.from === undefined &&
            now.at - since >= 2000
          )
            window = { from: now };
          if (state.phase !== 'loading weights' && window.from !== undefined && window.to === undefined)
            window = { ...window, to: now };
        },
      });
      assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
      const { from, to } = window;
      assert.ok(from && to && to.at - from.at >= 3000, `a window of the weights phase: ${JSON.stringify(window)}`);
      const rounds = (to.at - from.at) / FAST_WATCH.pollIntervalMs;
      const perRound = (to.bytes - from.bytes) / rounds;
      console.log(
        `      weights phase: ${to.bytes - from.bytes} bytes in ${((to.at - from.at) / 1000).toFixed(1)} s, ${Math.round(perRound)} per ${FAST_WATCH.pollIntervalMs} ms round`,
      );
      assert.ok(journalLines.length > 10, `${journalLines.length} journal lines`);
      assert.deepEqual(
        journalLines.filter((l) => /"(__CURSOR|_BOOT_ID|__SEQNUM)"/.test(l)),
        [],
        'address fields cut on the host',
      );
      // Measured on this load: ~460 bytes a round; 819 before the journal cuts (journal lines
      // with their address fields, a /health channel every round while the port is closed, the
      // GPU totals in every sampler line).
      assert.ok(perRound < 600, `${Math.round(perRound)} bytes per round`);
    } finally {
      test?.dispose();
      test = undefined;
      await proxy.close();
    }
  });

  for (const mode of ['denied-hint', 'denied-no-files'] as const) {
    it(`journal ${mode}: ready from systemd and HTTP alone, the journal problem said once, a crash after ready seen within a health interval`, async () => {
      await host.configureSimulator({ fault: {} });
      await host.setJournalAccess(mode);
      test = await sessionForHost(host);
      const seen = new Witness();
      const outcome = await test.session.watch('restart', steady(2000), seen.listener);
      assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
      assert.equal(outcome.state.journal?.readable, false);
      assert.match(outcome.state.journal!.detail!, /systemd-journal/);
      const journalAlerts = seen.alerts.filter((a) => a.kind === 'journal');
      assert.equal(journalAlerts.length, 1, 'said once');
      assert.ok(
        test.logLines.some((l) => /journalctl ended/.test(l)),
        'journalctl exit and stderr logged',
      );
      await host.killServer('SIGKILL');
      const failed = await waitFor(() => seen.ends.find((e) => e.end === 'failed'), {
        timeoutMs: 30_000,
        message: 'failed after ready without the journal',
      });
      assert.match(failed.state.failure!.summary, /after it was ready/);
    });
  }

  it('/health failing three times in a row after ready is unhealthy (the process still runs)', async () => {
    await host.configureSimulator({ fault: { http: 'html500', httpPaths: ['/health'] } });
    test = await sessionForHost(host);
    const seen = new Witness();
    const outcome = await test.session.watch('restart', steady(500), seen.listener);
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    await waitFor(() => test!.session.state?.verdict === 'unhealthy', { timeoutMs: 30_000, message: 'unhealthy' });
    assert.ok(
      seen.alerts.some((a) => a.kind === 'unhealthy'),
      'an alert says so',
    );
    assert.ok(test.session.state!.healthFailures >= 3);
    assert.ok((await host.mainPid()) > 0, 'the process still runs');
  });

  it('a server frozen after ready (SIGSTOP: alive, its port open, nothing answers) becomes unhealthy, then ready once it goes on', async () => {
    await host.configureSimulator({ fault: {} });
    test = await sessionForHost(host);
    const seen = new Witness();
    const outcome = await test.session.watch('restart', steady(500), seen.listener);
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    await host.killServer('SIGSTOP');
    const frozenAt = Date.now();
    try {
      await waitFor(() => test!.session.state?.verdict === 'unhealthy', { timeoutMs: 60_000, message: 'unhealthy' });
      console.log(`      unhealthy ${Date.now() - frozenAt} ms after SIGSTOP`);
      assert.ok(
        seen.alerts.some((a) => a.kind === 'unhealthy'),
        'an alert says so',
      );
    } finally {
      await host.killServer('SIGCONT');
    }
    await waitFor(() => test!.session.state?.verdict === 'ready', { timeoutMs: 30_000, message: 'ready again' });
  });

  it('/health up but the completion fails: not ready, and an alert says what the server answered', async () => {
    await host.configureSimulator({ fault: { http: 'errorWithChoices' } });
    test = await sessionForHost(host);
    const seen = new Witness();
    const watch = test.session.watch(
      'restart',
      steady(500, { completionAlertMs: 3000, loadTimeoutMs: 60_000 }),
      seen.listener,
    );
    const alert = await waitFor(() => seen.alerts.find((a) => a.kind === 'completion'), {
      timeoutMs: 60_000,
      message: 'the completion alert',
    });
    assert.match(alert.message, /completion fails: .*400/);
    assert.notEqual(test.session.state?.verdict, 'ready');
    test.session.stop('test over');
    const outcome = await watch;
    assert.equal(outcome.end, 'cancelled');
    assert.equal(test.session.watching, false, 'Stop watching ends the steady watch too');
  });
});

describe('HTTP the way the host allows it: API key, announced URL, forwarding refused', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  const API_KEY = 'sk-kimi-test-4f1c9e';

  before(async () => {
    host = await startGpuHost({
      shards: 4,
      shardBytes: 1024 * 1024,
      sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.5 },
    });
  });
  afterEach(async () => {
    test?.dispose();
    test = undefined;
    await host.writeUnit(host.defaultUnitText, { reload: true });
    await host.setTcpForwarding(true);
  });
  after(() => host?.stop());

  it('--api-key in ExecStart: ready (the key is sent as a Bearer token), and the key is in no log line', async () => {
    await host.writeUnit(
      host.defaultUnitText.replace('--trust-remote-code', `--trust-remote-code --api-key ${API_KEY}`),
      { reload: true },
    );
    test = await sessionForHost(host);
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    const unauthorized = await host.ssh(`curl -s -o /dev/null -w '%{http_code}' ${host.serverUrl}/v1/models`);
    assert.equal(unauthorized.stdout, '401', 'the simulated server does demand the key');
    assert.ok(test.logLines.length > 0, 'the session logged');
    assert.deepEqual(
      test.logLines.filter((l) => l.includes(API_KEY)),
      [],
      'no log line holds the key',
    );
    const unitText = (await host.ssh(`systemctl cat ${host.unit}`)).stdout;
    assert.ok(
      unitText.includes(API_KEY) && !maskSecrets(unitText).includes(API_KEY),
      'the unit text (shown in the parser flow) is masked',
    );
  });

  it('a wrong API key: not ready, and the completion probe says the key was refused', async () => {
    await host.writeUnit(
      host.defaultUnitText.replace('--trust-remote-code', `--trust-remote-code --api-key ${API_KEY}`),
      { reload: true },
    );
    test = await sessionForHost(host);
    const watch = test.session.watch('watch', { ...FAST_WATCH, completionAlertMs: 1000 }, {});
    // The watch reads the key from ExecStart: replace it to see what a wrong key looks like.
    await waitFor(() => test!.session.client.hasApiKey, { message: 'the key read from ExecStart' });
    test.session.client.setApiKey('wrong-key');
    await waitFor(() => /401/.test(test!.session.state?.completion?.detail ?? ''), {
      timeoutMs: 60_000,
      message: 'a 401 completion',
    });
    assert.match(test.session.state!.completion!.detail, /refused the API key/);
    assert.notEqual(test.session.state?.verdict, 'ready');
    test.session.stop('test over');
    await watch;
  });

  it('a url that is not where SGLang listens: warned with both, and the announced one is used', async () => {
    test = await sessionForHost(host, { server: { url: 'http://127.0.0.1:1' } });
    const alerts: WatchAlert[] = [];
    const outcome = await test.session.watch('restart', FAST_WATCH, { onAlert: (a) => void alerts.push(a) });
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    const url = alerts.find((a) => a.kind === 'url');
    assert.ok(url, `alerts: ${JSON.stringify(alerts)}`);
    assert.match(url.message, /127\.0\.0\.1:1\b/);
    assert.ok(url.message.includes(String(new URL(host.serverUrl).port)));
  });

  it('TCP forwarding refused by sshd: HTTP goes through curl on the host, and the watch still reaches ready', async () => {
    await host.setTcpForwarding(false);
    test = await sessionForHost(host);
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}`);
    assert.equal(test.session.client.viaFallback, true);
    assert.ok(
      test.logLines.some((l) => /forward/i.test(l) && /curl/i.test(l)),
      'the fallback is logged',
    );
  });
});
