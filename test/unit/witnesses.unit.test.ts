import { strict as assert } from 'node:assert';
import { reduce } from '../../src/monitor/state/loadState';
import { bytesFraction } from '../../src/monitor/state/loadProgress';
import type { Signal } from '../../src/monitor/state/loadStateTypes';
import { liveRate } from '../../src/monitor/eta/ioRate';
import { runningUnit, foldSignals, shardsLine } from '../util/loadFixtures';

const unit = runningUnit;
const run = foldSignals;
const GB = 1e9;
const weights: Signal[] = [
  { kind: 'restartRequested', at: 0 },
  { kind: 'tiedToRun', at: 0, unit: unit() },
  { kind: 'journal', at: 1000, event: { type: 'phase', phase: 'loading weights' }, text: 'Load weight begin.' },
];

describe('load state: witnesses (bytes, GPU memory)', () => {
  it('progress comes from bytes when the journal gives no shard lines, and only grows', () => {
    let s = run(weights);
    const seen: number[] = [];
    for (let i = 1; i <= 10; i++) {
      s = reduce(s, { kind: 'io', at: 1000 + i * 2000, readBytes: i * 10 * GB, totalBytes: 100 * GB });
      seen.push(s.progress!);
    }
    assert.ok(Math.abs(seen[4]! - 0.5 * 0.9) < 1e-9);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      seen,
    );
    // a lower reading (a child exited) does not lower progress
    s = reduce(s, { kind: 'io', at: 30_000, readBytes: 50 * GB });
    assert.equal(s.progress, seen[seen.length - 1]);
    assert.equal(bytesFraction(s), 1);
  });

  it('shards win over bytes when the journal gives them', () => {
    let s = run([...weights, shardsLine(2000, 32, 'x')]);
    s = reduce(s, { kind: 'io', at: 3000, readBytes: 40 * GB, totalBytes: 100 * GB });
    assert.ok(Math.abs(s.progress! - 0.45) < 1e-9);
    assert.equal(s.witnessWarning, undefined);
  });

  it('keeps the read rate and the latest GPU reading', () => {
    let s = run(weights);
    for (let i = 0; i <= 10; i++)
      s = reduce(s, {
        kind: 'io',
        at: 1000 + i * 1000,
        readBytes: i * 200e6,
        coldBytes: i * 200e6,
        totalBytes: 100 * GB,
      });
    assert.ok(Math.abs(s.readRate! - 200e6) < 1);
    s = reduce(s, {
      kind: 'gpu',
      at: 12_000,
      usedMiB: 1000,
      totalMiB: 8000,
      perGpu: [
        { index: 0, usedMiB: 500, totalMiB: 4000 },
        { index: 1, usedMiB: 500, totalMiB: 4000 },
      ],
    });
    assert.equal(s.gpu?.usedMiB, 1000);
    assert.equal(s.gpu?.perGpu.length, 2);
    assert.equal(s.gpuPeakMiB, 1000);
  });

  it('a growing witness counts as progress for stall detection; none growing -> stalled -> back', () => {
    const stallMs = 10_000;
    let s = run(weights);
    // bytes grow every 2 s: never stalled
    for (let t = 2000; t <= 30_000; t += 2000) {
      s = reduce(s, { kind: 'io', at: t, readBytes: t * 1e6, totalBytes: 100 * GB });
      s = reduce(s, { kind: 'tick', at: t, stallMs });
      assert.equal(s.stalled, false);
    }
    // bytes stop; GPU memory grows: still not stalled
    for (let t = 32_000; t <= 50_000; t += 2000) {
      s = reduce(s, { kind: 'io', at: t, readBytes: 30_000e6, totalBytes: 100 * GB });
      s = reduce(s, { kind: 'gpu', at: t, usedMiB: t, totalMiB: 80_000, perGpu: [] });
      s = reduce(s, { kind: 'tick', at: t, stallMs });
      assert.equal(s.stalled, false);
    }
    // nothing moves (GPU memory flat, bytes flat)
    for (let t = 52_000; t <= 62_000; t += 2000) {
      s = reduce(s, { kind: 'io', at: t, readBytes: 30_000e6 });
      s = reduce(s, { kind: 'gpu', at: t, usedMiB: 50_000, totalMiB: 80_000, perGpu: [] });
      s = reduce(s, { kind: 'tick', at: t, stallMs });
    }
    assert.equal(s.stalled, true);
    assert.equal(s.verdict, 'stalled');
    s = reduce(s, { kind: 'io', at: 64_000, readBytes: 31_000e6 });
    assert.equal(s.stalled, false);
    assert.equal(s.verdict, 'loading');
  });

  it('flags shard % vs byte % more than 25 points apart after 20 % of the load, once', () => {
    let s = run([...weights, { kind: 'io', at: 1500, readBytes: 1 * GB, totalBytes: 100 * GB }]);
    s = reduce(s, shardsLine(2000, 10, 'x'));
    assert.equal(s.witnessWarning, undefined, 'not before 20 %');
    s = reduce(s, shardsLine(3000, 32, 'x'));
    assert.match(s.witnessWarning ?? '', /shards 50% vs bytes read 1%.*page cache/);
    const first = s.witnessWarning;
    s = reduce(s, shardsLine(4000, 40, 'x'));
    assert.equal(s.witnessWarning, first, 'once');
    // the line is at 25 points, whichever witness is ahead
    const warningAt = (shardsDone: number, readGB: number) =>
      run([
        ...weights,
        { kind: 'io', at: 1500, readBytes: readGB * GB, totalBytes: 100 * GB },
        {
          kind: 'journal',
          at: 2000,
          event: { type: 'shards', done: shardsDone, total: 100, percent: shardsDone },
          text: 'x',
        },
      ]).witnessWarning;
    assert.match(warningAt(50, 24) ?? '', /shards 50% vs bytes read 24%.*page cache/);
    assert.equal(warningAt(50, 26), undefined, '24 points apart');
    assert.match(warningAt(24, 50) ?? '', /shards 24% vs bytes read 50%.*something else/);
    assert.equal(warningAt(26, 50), undefined, '24 points apart');
  });

  it('records when each phase began and gives an ETA once there is enough signal', () => {
    let s = run([{ kind: 'prior', at: 0, prior: { afterWeightsMs: 5000 } }, ...weights]);
    assert.equal(s.phaseTimes['starting'], 0);
    assert.equal(s.phaseTimes['loading weights'], 1000);
    s = reduce(s, { kind: 'io', at: 2000, readBytes: 2 * GB, totalBytes: 100 * GB });
    // Too little read for a rate, a second into the weights: no forecast the reads could disprove at once.
    assert.equal(s.eta, undefined);
    for (let t = 3000; t <= 20_000; t += 1000)
      s = reduce(s, { kind: 'io', at: t, readBytes: (t / 1000) * GB, totalBytes: 100 * GB });
    assert.ok(s.eta);
    // 80 GB left at 1 GB/s + 5 s after the weights: in the range
    assert.ok(s.eta!.lowAt! <= 105_000 && s.eta!.highAt! >= 105_000, JSON.stringify(s.eta));
    for (let t = 21_000; t <= 35_000; t += 1000)
      s = reduce(s, { kind: 'io', at: t, readBytes: (t / 1000) * GB, totalBytes: 100 * GB });
    assert.ok(Math.abs(s.eta!.readyAt - (35_000 + 65_000 + 5000)) < 1000, `${s.eta!.readyAt}`);
    s = reduce(s, { kind: 'journal', at: 101_000, event: { type: 'kvCache' }, text: 'KV Cache is allocated.' });
    assert.equal(s.phaseTimes['allocating KV cache'], 101_000);
    assert.ok(Math.abs(s.eta!.readyAt - 106_000) < 1);
  });

  it('liveRate, active: the intervals in which a kind did not read are left out, and the first after a pause (it began part-way)', () => {
    const samples = [
      { at: 0, bytes: 0 },
      { at: 1000, bytes: 100 },
      { at: 5000, bytes: 100 },
      { at: 6000, bytes: 300 },
    ];
    assert.deepEqual(
      liveRate(samples, (x) => x.bytes, true),
      { bps: 100, spanMs: 1000, evidenceMs: 1000 },
    );
    // Every interval counts when the kind is not one that stops and starts.
    assert.deepEqual(
      liveRate(samples, (x) => x.bytes, false),
      { bps: 50, spanMs: 6000, evidenceMs: 6000 },
    );
  });
});
