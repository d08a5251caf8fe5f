import { strict as assert } from 'node:assert';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { clockTime } from '../../src/monitor/state/witnessMoves';
import { lastSeen, stallNotice } from '../../src/present/stallNotice';
import { foldNodeStates } from '../../src/monitor/state/multiNodeState';
import { waitReport } from '../../src/present/report';
import { EXIT, exitForWait } from '../../src/fronts/cli/exitCodes';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import type { ServerProfile } from '../../src/config/config';
import { runningUnit } from '../util/loadFixtures';

const unit = runningUnit;

const T0 = Date.UTC(2026, 11, 1, 10, 30, 0);
const STALL_MS = 120_000;

/** Loading weights, shard 27/61 at T0+62 s, then nothing. */
function weightsThenSilence(): { before: LoadState; stalled: LoadState } {
  const signals: Signal[] = [
    { kind: 'restartRequested', at: T0 },
    { kind: 'tiedToRun', at: T0 + 500, unit: unit() },
    {
      kind: 'journal',
      at: T0 + 2000,
      event: { type: 'phase', phase: 'loading weights' },
      text: 'Load weight begin. avail mem=50.69 GB',
    },
    {
      kind: 'journal',
      at: T0 + 62_000,
      event: { type: 'shards', done: 27, total: 61, percent: 44 },
      text: 'Multi-thread loading shards:  44% Completed | 27/61',
    },
  ];
  const before = signals.reduce(reduce, initialState(T0));
  const stalled = reduce(before, { kind: 'tick', at: T0 + 62_000 + STALL_MS + 10_000, stallMs: STALL_MS });
  return { before, stalled };
}

describe('the stall notice', () => {
  it('says once what was last seen and since when', () => {
    const { before, stalled } = weightsThenSilence();
    assert.equal(stalled.verdict, 'stalled');
    const now = T0 + 62_000 + STALL_MS + 10_000;
    const text = stallNotice('gpu1', before, stalled, now);
    assert.equal(
      text,
      `Kimi on gpu1 is stalled: no witness has moved for 2m 10s; last seen: loading weights 39% (shard 27/61; last move: shard 27/61) at ${clockTime(T0 + 62_000)}`,
    );
    assert.equal(
      stallNotice('gpu1', stalled, reduce(stalled, { kind: 'tick', at: now + 5000, stallMs: STALL_MS }), now + 5000),
      undefined,
      'not again while it stays stalled',
    );
    assert.match(
      stalled.lastSignal?.text ?? '',
      /^no witness has moved for 130 s \(last: shard 27\/61 at \d\d:\d\d:\d\d\)$/,
    );
  });

  it('multi-node: names the node that holds the group back, with its own last move', () => {
    const { stalled: node1 } = weightsThenSilence();
    // Node 0 finished its weights and waits at the barrier: it stalls too, but it is not the cause.
    const node0Signals: Signal[] = [
      { kind: 'restartRequested', at: T0 },
      { kind: 'tiedToRun', at: T0 + 500, unit: unit() },
      { kind: 'journal', at: T0 + 90_000, event: { type: 'kvCache', tokens: 1 }, text: 'KV Cache is allocated.' },
      { kind: 'tick', at: T0 + 62_000 + STALL_MS + 10_000, stallMs: STALL_MS },
    ];
    const node0 = node0Signals.reduce(reduce, initialState(T0));
    const nodes = [
      { label: 'node 0 (gpu-a)', state: node0 },
      { label: 'node 1 (gpu-b)', state: node1 },
    ];
    const folded = foldNodeStates(nodes)!;
    assert.equal(folded.verdict, 'stalled');
    const text = stallNotice(
      'k2-pair',
      { ...folded, verdict: 'loading' },
      folded,
      T0 + 62_000 + STALL_MS + 10_000,
      nodes,
    );
    assert.equal(
      text,
      `Kimi on k2-pair is stalled (node 1 (gpu-b)): no witness has moved for 2m 10s; last seen: ${lastSeen(node1)} at ${clockTime(T0 + 62_000)}`,
    );
  });

  it("the agents' wait: 'stalled' with the evidence and what to do, exit code 6; a timeout while stalled says so", () => {
    const { stalled } = weightsThenSilence();
    const now = T0 + 62_000 + STALL_MS + 10_000;
    const snapshot = {
      server: { name: 'gpu1', unit: 'sglang.service', host: 'gpu1' } as ServerProfile,
      state: stalled,
      watching: true,
      loading: true,
      refusal: undefined,
    } as unknown as ServerSnapshot;
    const report = waitReport({ kind: 'stalled', snapshot }, 30_000, 'kimi_wait', now);
    assert.equal(report.result, 'stalled');
    assert.match(
      report.next,
      /^Kimi on gpu1 is stalled: no witness has moved for 2m 10s; last seen: loading weights 39% \(shard 27\/61/,
    );
    assert.match(report.next, /read the logs/);
    assert.equal(report.report.stall?.startsWith('Kimi on gpu1 is stalled'), true);
    assert.equal(exitForWait({ kind: 'stalled', snapshot }), EXIT.stalled);
    assert.equal(EXIT.stalled, 6);
    assert.equal(exitForWait({ kind: 'timeout', snapshot }), EXIT.timeout, 'the other outcomes keep their codes');
    const timedOut = waitReport({ kind: 'timeout', snapshot }, 30_000, 'kimi_wait', now);
    assert.match(timedOut.next, /^Still stalled after waiting 30s: Kimi on gpu1 is stalled/);
  });
});
