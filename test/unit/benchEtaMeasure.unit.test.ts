// The ETA benchmark's arithmetic (scripts/benchEta/measure.ts): reading the status bar's text,
// the error at a point of the load, the largest jump, and the truth from the journal.
import { strict as assert } from 'node:assert';
import {
  coverage,
  errorAt,
  inRangeShare,
  largestJump,
  parseLeft,
  truthOf,
  truthPhases,
  type Sample,
} from '../../scripts/benchEta/measure';

const bar = (left?: string) => `$(sync~spin) Kimi: loading 40%${left ? ` · ${left}` : ''}`;
const at = (s: number, text: string, phase = 'loading weights'): Sample => ({ at: s * 1000, text, phase });

describe('bench:eta measure', () => {
  it('reads the time left of the status bar: seconds, minutes, hours, ranges, none', () => {
    assert.deepEqual(parseLeft(bar('45s left')), { lowMs: 45_000, highMs: 45_000 });
    assert.deepEqual(parseLeft(bar('3m left')), { lowMs: 180_000, highMs: 180_000 });
    assert.deepEqual(parseLeft(bar('1h 5m left')), { lowMs: 3_900_000, highMs: 3_900_000 });
    assert.deepEqual(parseLeft(bar('4-6m left')), { lowMs: 240_000, highMs: 360_000 });
    assert.deepEqual(parseLeft(bar('45s-2m left')), { lowMs: 45_000, highMs: 120_000 });
    assert.deepEqual(parseLeft(bar('1h 5m-1h 20m left')), { lowMs: 3_900_000, highMs: 4_800_000 });
    assert.equal(parseLeft(bar()), undefined);
    assert.equal(parseLeft('$(server-process) Kimi: not watched'), undefined);
  });

  it('the error at a point of the load: against the time really left, from the last reading before it', () => {
    const truth = { start: 0, ready: 100_000 };
    const samples = [at(40, bar('80s left')), at(49, bar('60s left')), at(51, bar('10s left'))];
    // at 50 s the reading of 49 s counts: 60 s shown, 51 s left
    assert.ok(Math.abs(errorAt(samples, truth, 0.5)! - (60 - 51) / 51) < 1e-9);
    assert.equal(errorAt(samples, truth, 0.25), undefined, 'no reading yet');
    assert.equal(errorAt([at(40, bar())], truth, 0.41), undefined, 'no ETA on screen');
  });

  it('a jump is the shown time against what the earlier reading implied for then, within 10 s and one phase', () => {
    // 5 s left, then 26 s left a second later (a wrong forecast): 26 / 5 (4 s implied, floored at 5)
    const j = largestJump([at(0, bar('5s left')), at(1, bar('26s left'))]);
    assert.ok(j && Math.abs(j.ratio - 26 / 5) < 1e-9, JSON.stringify(j));
    const k = largestJump([at(0, bar('40s left')), at(2, bar('19s left'))]);
    assert.ok(k && Math.abs(k.ratio - 38 / 19) < 1e-9, JSON.stringify(k));
    // a few seconds at the end: under the floor
    assert.equal(largestJump([at(0, bar('3s left')), at(1, bar('1s left'))])!.ratio, 1);
    // counting down as it should: no jump
    assert.equal(largestJump([at(0, bar('20s left')), at(5, bar('15s left')), at(10, bar('10s left'))])!.ratio, 1);
    // a phase change in between, or more than 10 s apart: not compared
    assert.equal(largestJump([at(0, bar('5s left')), at(1, bar('26s left'), 'capturing CUDA graphs')]), undefined);
    assert.equal(largestJump([at(0, bar('5s left')), at(11, bar('26s left'))]), undefined);
  });

  it('the truth is in the range shown, or not (1 s of slack)', () => {
    const truth = { start: 0, ready: 30_000 };
    // 20 s left at 10 s: in 10-25s; 15 s left at 15 s: not in 20-40s; 10 s left at 20 s: "9s" within the slack
    const r = inRangeShare(
      [at(10, bar('10-25s left')), at(15, bar('20-40s left')), at(20, bar('9s left')), at(25, bar())],
      truth,
    );
    assert.deepEqual(r, { inRange: 2, shown: 3 });
  });

  it('coverage per phase counts the readings before ready with an ETA', () => {
    const c = coverage(
      [{ at: 1000, text: bar(), phase: undefined }, at(2, bar('9s left')), at(3, bar(), 'warming up'), at(9, bar())],
      { start: 0, ready: 5000 },
    );
    assert.deepEqual(
      [...c],
      [
        ['loading weights', { samples: 1, shown: 1 }],
        ['warming up', { samples: 1, shown: 0 }],
      ],
    );
  });

  it("the truth: the journal's lines of this load, and the phases between them", () => {
    const e = (s: number, msg: string) => ({ t: s * 1e6, msg });
    const entries = [
      e(1, 'The server is fired up and ready to roll!'), // the previous load
      e(12, '[2026-12-01 12:00:12 TP0] Load weight begin. avail mem=78.22 GB'),
      e(27, '\rMulti-thread loading shards: 100% Completed | 12/12 [00:15<00:00,  0.80it/s]'),
      e(39, '[2026-12-01 12:00:39 TP0] Load weight end. elapsed=27.00 s'),
      e(40, 'Capture cuda graph begin. This can take up to several minutes.'),
      e(43, 'Capture cuda graph end. Time elapsed: 3.00 s.'),
      e(45, 'The server is fired up and ready to roll!'),
    ];
    const t = truthOf(entries, 10_000)!;
    assert.equal(t.ready, 45_000);
    assert.equal(t.lastShard, 27_000);
    assert.deepEqual(truthPhases(t), {
      starting: 2000,
      'loading weights': 27_000,
      'allocating KV cache': 1000,
      'capturing CUDA graphs': 3000,
      'warming up': 2000,
    });
    assert.equal(truthOf(entries.slice(0, 6), 10_000), undefined, 'no ready line yet');
  });
});
