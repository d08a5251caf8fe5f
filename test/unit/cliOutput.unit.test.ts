import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import { EXIT, exitForRefusal, exitForSignal, exitForWait } from '../../src/fronts/cli/exitCodes';
import {
  INITIAL_PRINTER,
  nextWaitLine,
  PROGRESS_LINE_MS,
  restartLine,
  statusLine,
  waitLine,
  waitSummaryLine,
  type WaitPrinterState,
} from '../../src/fronts/cli/format';
import { askLine, hostKeyQuestion, isYes } from '../../src/fronts/cli/prompt';
import type { ServerReport, WaitReport } from '../../src/present/report';
import { firstRoundDone } from '../../src/fleet/restart/observe';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { runningUnit } from '../util/loadFixtures';

function report(patch: Partial<ServerReport> = {}): ServerReport {
  return {
    server: 'gpu1',
    host: 'gpu1.lan',
    unit: 'sglang.service',
    state: 'loading',
    watching: true,
    phase: 'loading weights',
    activity: null,
    stall: null,
    progressPercent: 45,
    etaSeconds: 240,
    since: '2026-11-30T10:00:00.000Z',
    confirmedAt: '2026-11-30T10:01:00.000Z',
    lastError: null,
    parsers: null,
    url: 'http://gpu1.lan:30001',
    summary: 'gpu1: loading 45% (loading weights, 29/64 shards) · about 4 min left · for 1m 2s',
    ...patch,
  };
}

describe('cli: exit codes', () => {
  const snap = (refusal?: { kind: string }, verdict?: string) => ({
    refusal: refusal as never,
    state: verdict ? { verdict } : undefined,
  });

  it('wait: 0 ready, 1 failed or stopped, 2 timed out, 130/143 interrupted', () => {
    assert.equal(exitForWait({ kind: 'ready', snapshot: snap() }), 0);
    assert.equal(exitForWait({ kind: 'failed', snapshot: snap() }), 1);
    assert.equal(exitForWait({ kind: 'stopped', snapshot: snap() }), 1);
    assert.equal(exitForWait({ kind: 'timeout', snapshot: snap() }), 2);
    assert.equal(exitForWait({ kind: 'cancelled', snapshot: snap() }, 'SIGINT'), 130);
    assert.equal(exitForWait({ kind: 'cancelled', snapshot: snap() }, 'SIGTERM'), 143);
  });

  it('a watch that ended without a verdict: its refusal, else unreachable or timed out', () => {
    assert.equal(exitForWait({ kind: 'not watched', snapshot: snap({ kind: 'host-key-changed' }) }), 4);
    assert.equal(exitForWait({ kind: 'not watched', snapshot: snap({ kind: 'refused' }) }), 3);
    assert.equal(exitForWait({ kind: 'not watched', snapshot: snap(undefined, 'unreachable') }), 3);
    assert.equal(exitForWait({ kind: 'not watched', snapshot: snap(undefined, 'loading') }), 2);
  });

  it('refusals: host keys 4, unreachable 3, settings and credentials 5', () => {
    for (const kind of ['host-key-changed', 'host-key-rejected', 'host-key-unknown'])
      assert.equal(exitForRefusal(kind), EXIT.hostKey);
    for (const kind of ['dns', 'refused', 'timeout', 'closed', 'other', 'command-timeout'])
      assert.equal(exitForRefusal(kind), EXIT.unreachable);
    for (const kind of ['config', 'auth', 'sudo-password']) assert.equal(exitForRefusal(kind), EXIT.config);
    assert.equal(exitForSignal('SIGINT'), 130);
    assert.equal(exitForSignal('SIGTERM'), 143);
  });
});

describe('cli: output', () => {
  it('status: the report summary, or the ServerReport as one JSON line', () => {
    assert.equal(statusLine(report(), false), report().summary);
    const parsed = JSON.parse(statusLine(report(), true));
    assert.deepEqual(parsed, { event: 'status', ...report() });
    assert.ok(!statusLine(report(), true).includes('\n'));
  });

  it('restart says whether it restarted or watched a load under way instead', () => {
    assert.match(
      restartLine('restarted', undefined, report(), false),
      /^gpu1: restart issued \(systemctl restart sglang\.service on gpu1\.lan\)\. Now: gpu1: loading 45%/,
    );
    assert.match(
      restartLine('attached', 'sglang.service was started 42 s ago and is still loading', report(), false),
      /^gpu1: watching, not restarted: sglang\.service was started 42 s ago/,
    );
    const json = JSON.parse(restartLine('attached', 'why', report(), true));
    assert.equal(json.action, 'attached');
    assert.equal(json.reason, 'why');
    assert.equal(json.state, 'loading');
  });

  it('wait lines carry the time waited; the summary line is the wait report', () => {
    assert.equal(waitLine('state', report(), 61_000, false), `[+1m 1s] ${report().summary}`);
    const json = JSON.parse(waitLine('progress', report(), 61_400, true));
    assert.equal(json.event, 'progress');
    assert.equal(json.elapsedSeconds, 61);
    assert.equal(json.state, 'loading');
    const wr: WaitReport = {
      result: 'timeout',
      report: report(),
      next: 'Still loading 45 %: call kimi-service wait again.',
    };
    assert.equal(waitSummaryLine(wr, false), wr.next);
    const last = JSON.parse(waitSummaryLine(wr, true));
    assert.equal(last.event, 'result');
    assert.equal(last.state, 'loading');
    assert.equal(last.result, 'timeout');
    assert.equal(last.next, wr.next);
  });

  it('wait prints every state change, and progress at most every 10 s', () => {
    let printer: WaitPrinterState = INITIAL_PRINTER;
    const lines: [number, string][] = [];
    const feed = (at: number, r: ServerReport) => {
      const next = nextWaitLine(printer, r, at);
      printer = next.printer;
      if (next.line) lines.push([at, next.line]);
    };
    feed(0, report({ state: 'restarting', phase: null, summary: 'gpu1: restarting · for 0s' }));
    // A progress signal every 500 ms for 60 s: the percentage climbs.
    for (let t = 500; t <= 60_000; t += 500) {
      const percent = Math.floor(t / 1000);
      feed(
        t,
        report({
          progressPercent: percent,
          summary: `gpu1: loading ${percent}% (loading weights) · for ${Math.floor(t / 1000)}s`,
        }),
      );
    }
    feed(60_100, report({ state: 'warming up', phase: 'warming up', summary: 'gpu1: warming up · for 1m 0s' }));
    feed(60_200, report({ state: 'ready', phase: 'ready', summary: 'gpu1: ready · ready for 0s' }));
    const states = lines.filter(([, kind]) => kind === 'state').length;
    const progress = lines.filter(([, kind]) => kind === 'progress');
    assert.equal(states, 4, JSON.stringify(lines)); // restarting, loading, warming up, ready
    assert.ok(progress.length <= 60_000 / PROGRESS_LINE_MS, JSON.stringify(lines));
    assert.ok(progress.length >= 5, JSON.stringify(lines));
    for (let i = 1; i < lines.length; i++) {
      if (lines[i]![1] === 'progress')
        assert.ok(lines[i]![0] - lines[i - 1]![0] >= PROGRESS_LINE_MS, JSON.stringify(lines));
    }
  });

  it('no progress line when only the clock moved', () => {
    let printer = nextWaitLine(INITIAL_PRINTER, report({ summary: 'gpu1: loading 45% · for 1m 0s' }), 0).printer;
    const next = nextWaitLine(printer, report({ summary: 'gpu1: loading 45% · for 1m 30s' }), 30_000);
    assert.equal(next.line, undefined);
    printer = next.printer;
    assert.equal(nextWaitLine(printer, report({ summary: 'gpu1: loading 46% · for 1m 31s' }), 31_000).line, 'progress');
  });
});

describe('cli: terminal questions', () => {
  it('only y or yes is yes', () => {
    for (const yes of ['y', 'Y', 'yes', ' YES ']) assert.ok(isYes(yes), yes);
    for (const no of ['', 'n', 'no', 'yep', 'sure', undefined]) assert.ok(!isYes(no), String(no));
  });

  it('the host-key question shows the SHA256 fingerprint and the file it would be added to', () => {
    const text = hostKeyQuestion({
      host: '10.0.0.5',
      port: 22,
      alias: 'gpu1',
      keyType: 'ssh-ed25519',
      fingerprint: 'SHA256:abc',
      otherKeyTypes: ['ssh-rsa'],
      knownHostsFile: '/home/a/.ssh/known_hosts',
    });
    assert.match(text, /gpu1 \(10\.0\.0\.5\) is not known/);
    assert.match(text, /ssh-ed25519 SHA256:abc/);
    assert.match(text, /ssh-rsa/);
    assert.match(text, /\/home\/a\/\.ssh\/known_hosts\?$/);
  });

  it('askLine reads one answer; end of input is no answer', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const answer = askLine({ input, output }, 'Restart? ');
    input.write('y\n');
    assert.equal(await answer, 'y');
    const input2 = new PassThrough();
    const none = askLine({ input: input2, output: new PassThrough() }, 'Restart? ');
    input2.end();
    assert.equal(await none, undefined);
  });
});

describe('cli: status after one probe round (fleet/servers/standalone firstRoundDone)', () => {
  const unit = runningUnit({ mainPid: 7 });
  const tiedToRun = (): LoadState => reduce(initialState(0), { kind: 'tiedToRun', at: 2000, unit });

  it('not before /health was asked, nor between a healthy /health and its completion', () => {
    assert.equal(firstRoundDone(tiedToRun()), false);
    const healthy = reduce(tiedToRun(), { kind: 'http', at: 2100, result: 'healthy', detail: '/health 200' });
    assert.equal(firstRoundDone(healthy), false);
    assert.equal(firstRoundDone(reduce(healthy, { kind: 'completion', at: 2200, ok: true, detail: 'ok' })), true);
  });

  it('a closed port (loading), a stopped unit or a lost connection is an answer', () => {
    assert.equal(
      firstRoundDone(reduce(tiedToRun(), { kind: 'http', at: 2100, result: 'refused', detail: 'port closed' })),
      true,
    );
    const stopped = reduce(initialState(0), {
      kind: 'tiedToRun',
      at: 2000,
      unit: { ...unit, activeState: 'inactive', subState: 'dead', mainPid: 0 },
    });
    assert.equal(firstRoundDone(stopped), true);
    assert.equal(
      firstRoundDone(reduce(tiedToRun(), { kind: 'connection', at: 2100, up: false, error: 'reset' })),
      true,
    );
  });
});
