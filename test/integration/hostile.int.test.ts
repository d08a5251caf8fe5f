/**
 * A hostile GPU host, end to end: the unit's process says everything wrong
 * (sglang-sim/hostile.js: random and invalid-UTF-8 journal lines, 4 MiB lines, regex traps,
 * SGLang's ready line, garbage HTTP: JSON nested 100k levels, a 2 MB body, broken status lines)
 * and `systemctl show` / `nvidia-smi` add garbage lines. The real watcher follows it through
 * the real sshd. What a user must see: never `ready`, a watch that keeps reporting and stops
 * when asked, the extension's memory bounded; and the same host, clean again, still works.
 */
import { strict as assert } from 'node:assert';
import type { LoadState, Verdict } from '../../src/monitor/state/loadStateTypes';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { retainedHeap } from '../util/heap';
import { waitFor } from '../util/waitFor';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { disposed } from '../util/disposed';

const MiB = 1024 * 1024;

describe('a hostile host through the real sshd and the real watcher', function () {
  this.timeout(300_000);
  let host: GpuHost;
  let test: TestSession | undefined;

  before(async () => {
    host = await startGpuHost({ shards: 4, shardBytes: 1024 * 1024, sim: { hostile: { seed: 17, gapMs: 20 } } });
  });
  afterEach(() => (test = disposed(test)));
  after(() => host?.stop());

  it('never says ready, keeps reporting, keeps its memory bounded; the host clean again is ready', async () => {
    test = await sessionForHost(host);
    const heapBefore = retainedHeap();
    const verdicts: Verdict[] = [];
    const completions = new Set<string>();
    let states = 0;
    let roundsDone = 0;
    let last: LoadState | undefined;
    const session = test.session;
    const watching = session.watch('restart', FAST_WATCH, {
      onState: (s) => {
        states++;
        last = s;
        if (verdicts[verdicts.length - 1] !== s.verdict) verdicts.push(s.verdict);
        if (s.completion && !s.completion.ok) completions.add(s.completion.detail.replace(/\d+/g, 'N'));
        for (const e of s.recentErrors) {
          const m = /hostile round (\d+) done/.exec(e);
          if (m) roundsDone = Math.max(roundsDone, Number(m[1]));
        }
      },
    });
    const seen = (): string =>
      `rounds ${roundsDone}, completions ${[...completions].join(' | ')}; verdicts ${verdicts.join(' -> ')}; last: ${last?.lastSignal?.text.slice(0, 200)}; log: ${test?.logLines.slice(-6).join('\n').slice(0, 2000)}`;
    // Two rounds of journal garbage (the 4 MiB lines among them) read, and completions judged.
    await waitFor(() => roundsDone >= 2 && completions.size >= 5, { timeoutMs: 180_000, intervalMs: 200 }).catch(
      (e: Error) => {
        throw new Error(`${e.message}: ${seen()}`);
      },
    );
    // Still reporting after that: a third round is read.
    await waitFor(() => roundsDone >= 3, {
      timeoutMs: 60_000,
      intervalMs: 200,
      message: 'the watch keeps reading the journal',
    }).catch((e: Error) => {
      throw new Error(`${e.message}: ${seen()}`);
    });
    session.stop('test over');
    const outcome = await watching;
    assert.equal(outcome.end, 'cancelled', `ended ${outcome.end}: ${outcome.message}`);
    assert.ok(!verdicts.includes('ready'), `verdicts: ${verdicts.join(' -> ')}`);
    assert.ok(
      !verdicts.includes('failed'),
      `a process alive and garbage is not failed: ${verdicts.join(' -> ')} (${last?.failure?.summary})`,
    );
    assert.equal(outcome.state.readyAt, undefined);
    assert.ok(outcome.state.readyLogSeen, "SGLang's ready line was read (the completion alone kept it from ready)");
    assert.ok(states > 10);
    for (const e of outcome.state.recentErrors)
      assert.ok(e.length <= 1000, `an error text of ${e.length} characters kept`);
    const grown = retainedHeap() - heapBefore;
    if (process.env['KIMI_HOSTILE_TIMES'])
      process.stdout.write(
        `hostile host: ${states} states, ${roundsDone} rounds, ${completions.size} kinds of bad completion, heap ${Math.round(heapBefore / MiB)} -> ${Math.round((heapBefore + grown) / MiB)} MiB\n`,
      );
    assert.ok(grown < 128 * MiB, `the heap grew by ${Math.round(grown / MiB)} MiB`);

    test.dispose();
    test = undefined;
    await host.configureSimulator({ hostile: false });
    test = await sessionForHost(host);
    const clean = await test.session.watch('restart', FAST_WATCH);
    assert.equal(clean.end, 'ready', `ended ${clean.end}: ${clean.message}`);
    assert.match(clean.state.completion?.detail ?? '', /completion answered/);
  });
});
