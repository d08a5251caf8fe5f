import { strict as assert } from 'node:assert';
import type { ServiceStatus } from '../../src/target/target';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { Signal } from '../../src/monitor/state/loadStateTypes';
import {
  DEFAULT_AFTER_WEIGHTS_MIN_MS,
  DEFAULT_AFTER_WEIGHTS_SHARE,
  DEFAULT_WARM_BPS,
  estimateEta,
  type EtaInput,
} from '../../src/monitor/eta/eta';
import {
  blendRate,
  learnedRate,
  liveRate,
  pushSample,
  residencyHolds,
  windowRate,
  windowSpanMs,
  type IoSample,
} from '../../src/monitor/eta/ioRate';
import { formatEta, formatRate, visibleEta } from '../../src/present/etaText';
import { runningUnit } from '../util/loadFixtures';

const MB = 1e6;

function linear(fromMs: number, toMs: number, stepMs: number, bps: number, startBytes = 0, cold = true): IoSample[] {
  const out: IoSample[] = [];
  for (let t = fromMs; t <= toMs; t += stepMs) {
    const bytes = startBytes + (bps * (t - fromMs)) / 1000;
    out.push({ at: t, bytes, ...(cold ? { coldBytes: bytes } : {}) });
  }
  return out;
}

describe('eta: rates', () => {
  it('windowRate is the slope over the last 30 s, robust to a jittered sample', () => {
    const s = linear(0, 60_000, 2000, 100 * MB);
    assert.ok(Math.abs(windowRate(s)! - 100 * MB) < 1);
    const jittered = s.map((x, i) => (i === s.length - 3 ? { ...x, bytes: x.bytes + 20 * MB } : x));
    const r = windowRate(jittered)!;
    assert.ok(Math.abs(r - 100 * MB) / (100 * MB) < 0.1, `rate ${r}`);
  });
  it('windowRate follows a rate change within the window', () => {
    const s = [...linear(0, 60_000, 2000, 100 * MB), ...linear(62_000, 120_000, 2000, 400 * MB, 6000 * MB)];
    assert.ok(Math.abs(windowRate(s)! - 400 * MB) / (400 * MB) < 0.05);
  });
  it('needs two samples and a time span', () => {
    assert.equal(windowRate([]), undefined);
    assert.equal(windowRate([{ at: 1, bytes: 5 }]), undefined);
    assert.equal(
      windowRate([
        { at: 1, bytes: 5 },
        { at: 1, bytes: 6 },
      ]),
      undefined,
    );
  });
  it('pushSample keeps a bounded recent window', () => {
    let s: IoSample[] = [];
    for (let t = 0; t <= 200_000; t += 1000) s = pushSample(s, { at: t, bytes: t });
    assert.ok(s[0]!.at >= 200_000 - 60_000);
    assert.equal(s[s.length - 1]!.at, 200_000);
    assert.equal(windowSpanMs(s), 30_000);
  });
  it('blendRate leans on the prior while the window is short', () => {
    assert.equal(blendRate(undefined, 0, 50), 50);
    assert.equal(blendRate(100, 10_000, 50), 75);
    assert.ok(blendRate(100, 30_000, 50) > 85);
  });
});

describe('eta: estimate', () => {
  const total = 10_000 * MB;
  /** The estimate while the weights load (begun at 0), at `now`, from `samples`. */
  const whileLoading = (now: number, samples: EtaInput['samples'], more: Partial<EtaInput> = {}) =>
    estimateEta({ now, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples, ...more });
  it('says nothing before 2 % of the bytes or 4 s of samples', () => {
    const few = linear(0, 3000, 1000, 200 * MB); // 600 MB = 6 %, 3 s
    assert.equal(
      estimateEta({ now: 3000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: few }),
      undefined,
    );
    const slow = linear(0, 20_000, 1000, 7.5 * MB); // 150 MB = 1.5 %
    assert.equal(
      estimateEta({ now: 20_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: slow }),
      undefined,
    );
    assert.equal(estimateEta({ now: 0, phase: 'starting', samples: [] }), undefined);
  });
  it('remaining bytes over the measured rate plus the phases after the weights', () => {
    const s = linear(0, 20_000, 1000, 200 * MB); // 4000 MB read, 6000 MB left at 200 MB/s = 30 s
    const eta = whileLoading(20_000, s, { prior: { coldBps: 200 * MB, afterWeightsMs: 5000 } })!;
    assert.equal(eta.basis, 'bytes');
    assert.ok(Math.abs(eta.weightsMs - 30_000) < 500, `${eta.weightsMs}`);
    assert.equal(eta.afterWeightsMs, 5000);
    assert.ok(Math.abs(eta.remainingMs - 35_000) < 500);
  });
  it('without history the phases after the weights are a share of the weights time', () => {
    const s = linear(0, 20_000, 1000, 200 * MB);
    const eta = whileLoading(20_000, s)!;
    assert.ok(eta.afterWeightsMs >= DEFAULT_AFTER_WEIGHTS_MIN_MS);
    assert.ok(Math.abs(eta.afterWeightsMs - DEFAULT_AFTER_WEIGHTS_SHARE * (20_000 + eta.weightsMs)) < 1);
  });
  it('with the page-cache residency, cold and warm bytes go at their own rates (rate changes mid-way)', () => {
    // half the model cached; cold half read first at 100 MB/s; the warm half will go at 1000 MB/s
    const s = linear(0, 25_000, 1000, 100 * MB); // 2500 MB cold read
    const prior = { residentBytes: 5000 * MB, warmBps: 1000 * MB, afterWeightsMs: 2000 };
    const eta = whileLoading(25_000, s, { prior })!;
    assert.equal(eta.basis, 'bytes+cache');
    // cold left 2500 MB at ~100 MB/s (blended with the default 240 MB/s prior) + warm 5000 MB at 1000 MB/s
    const truth = 25_000 + 5000 + 2000;
    assert.ok(Math.abs(eta.remainingMs - truth) / truth < 0.2, `${eta.remainingMs} vs ${truth}`);
    // the naive estimate would say 75 s of weights
    assert.ok(eta.remainingMs < 50_000);
  });
  it('warm bytes counted by rchar (not read_bytes) reduce the warm part', () => {
    const cold = linear(0, 20_000, 1000, 100 * MB); // 2000 MB cold
    const warm = linear(21_000, 23_000, 1000, 1000 * MB, 2000 * MB, false).map((x) => ({ ...x, coldBytes: 2000 * MB }));
    const prior = { residentBytes: 8000 * MB, warmBps: 1000 * MB, afterWeightsMs: 0 };
    const eta = whileLoading(23_000, [...cold, ...warm], { prior })!;
    // cold done (2000 = total - resident); warm read 2000 of 8000 -> 6000 MB at ~1000 MB/s = 6 s
    assert.ok(Math.abs(eta.weightsMs - 6000) < 1200, `${eta.weightsMs}`);
  });
  it('falls back to shards when bytes show nothing (page-cached mmap load)', () => {
    const eta = estimateEta({
      now: 20_000,
      phase: 'loading weights',
      weightsStartedAt: 0,
      totalBytes: total,
      samples: [{ at: 20_000, bytes: 0 }],
      shards: { done: 16, total: 64 },
      prior: { afterWeightsMs: 1000 },
    })!;
    assert.equal(eta.basis, 'shards');
    assert.equal(eta.weightsMs, 60_000);
  });
  it('after the weights only history can tell; without it, nothing', () => {
    assert.equal(estimateEta({ now: 10, phase: 'capturing CUDA graphs', weightsEndedAt: 0, samples: [] }), undefined);
    const eta = estimateEta({
      now: 10_000,
      phase: 'capturing CUDA graphs',
      weightsEndedAt: 0,
      samples: [],
      prior: { afterWeightsMs: 40_000 },
    })!;
    assert.equal(eta.remainingMs, 30_000);
  });
  it('formats', () => {
    assert.equal(formatEta(180_000), '3m left');
    assert.equal(formatEta(42_000), '42s left');
    assert.equal(formatEta(3_900_000), '1h 5m left');
    assert.equal(formatRate(240e6), '240 MB/s');
    assert.equal(formatRate(3.2e9), '3.20 GB/s');
  });
});

describe('eta: noise', () => {
  it('a trickle of warm bytes (sockets, imports) is not taken as the warm rate', () => {
    const s = linear(0, 20_000, 1000, 100 * 1e6).map((x) => ({ ...x, bytes: x.bytes + x.at * 2 }));
    const eta = estimateEta({
      now: 20_000,
      phase: 'loading weights',
      weightsStartedAt: 0,
      totalBytes: 10_000e6,
      samples: s,
      prior: { residentBytes: 5000e6, afterWeightsMs: 0 },
    })!;
    // cold 3000 MB left at 100 MB/s + 5000 MB warm at the default 3 GB/s
    assert.ok(Math.abs(eta.weightsMs - (30_000 + 5000 / 3)) < 1000, `${eta.weightsMs}`);
  });
});

// --- an ETA that learns ---------------------------------------------------------

/** A load's io samples every `stepMs` up to `toMs`, kept as the reducer keeps them (last 60 s). */
function loadSamples(at: (t: number) => { bytes: number; coldBytes: number }, toMs: number, stepMs = 2000): IoSample[] {
  let s: IoSample[] = [];
  for (let t = 0; t <= toMs; t += stepMs) s = pushSample(s, { at: t, ...at(t) });
  return s;
}

/** Bytes read by `t` at `bps1` until `switchBytes`, then at `bps2`. */
function piecewise(t: number, bps1: number, switchBytes: number, bps2: number, total: number): number {
  const tSwitch = (switchBytes / bps1) * 1000;
  const b = t <= tSwitch ? (bps1 * t) / 1000 : switchBytes + (bps2 * (t - tSwitch)) / 1000;
  return Math.min(total, b);
}

/** (predicted - actual ready time) / time actually left, at `now`. */
function errorOfTimeLeft(eta: { remainingMs: number } | undefined, now: number, readyAt: number): number {
  assert.ok(eta, `an ETA at ${now}`);
  return (now + eta.remainingMs - readyAt) / (readyAt - now);
}

/** The ETA at `now` of a load of `total` bytes whose weights began at 0 and read as `reads` says. */
function weightsEta(
  now: number,
  total: number,
  reads: (t: number) => { bytes: number; coldBytes: number },
  prior: Parameters<typeof estimateEta>[0]['prior'],
) {
  return estimateEta({
    now,
    phase: 'loading weights',
    weightsStartedAt: 0,
    totalBytes: total,
    samples: loadSamples(reads, now),
    prior,
  });
}

describe('eta: the forecast is a prior, what the load shows wins', () => {
  const total = 5000 * MB;
  const afterWeightsMs = 5000;

  it('files evicted between the forecast and the load: the residency is disproved and stops driving the split', () => {
    // The forecast: 100 % cached, history's warm rate 1 GB/s -> "~10 s". The load: every byte
    // read cold at 100 MB/s (history's cold rate): 50 s of weights, ready at 55 s.
    const prior = { residentBytes: total, warmBps: 1000 * MB, coldBps: 100 * MB, afterWeightsMs, loads: 5 };
    const cold = (t: number) => {
      const b = Math.min(total, 100 * MB * (t / 1000));
      return { bytes: b + t * 2 /* rchar of sockets and imports */, coldBytes: b };
    };
    const readyAt = 50_000 + afterWeightsMs;
    for (const now of [12_000, 20_000, 28_000, 40_000]) {
      const eta = weightsEta(now, total, cold, prior);
      assert.equal(eta?.residencyDisproved, true);
      assert.equal(eta?.basis, 'bytes');
      const err = errorOfTimeLeft(eta, now, readyAt);
      assert.ok(Math.abs(err) <= 0.15, `at ${now}: ${(err * 100).toFixed(1)} % of the time left`);
    }
  });

  it('a residency contradicted the other way (files read in after the forecast) is disproved too', () => {
    const prior = { residentBytes: 0, coldBps: 100 * MB, warmBps: 1000 * MB, afterWeightsMs };
    const warm = (t: number) => ({ bytes: Math.min(total, 400 * MB * (t / 1000)), coldBytes: 0 });
    const now = 6000 + 4000;
    const eta = weightsEta(now, total, warm, prior)!;
    assert.equal(eta.residencyDisproved, true);
    const readyAt = 12_500 + afterWeightsMs;
    assert.ok(Math.abs(errorOfTimeLeft(eta, now, readyAt)) <= 0.15, `${eta.remainingMs}`);
  });

  it('the read rate halves midway: at half of the load the error is within 15 % of the time left', () => {
    // all cold and the residency right; 200 MB/s (as history says) for the first half of the
    // bytes, 100 MB/s after: 50 s + 100 s of weights, ready at 155 s
    const big = 20_000 * MB;
    const prior = { residentBytes: 0, coldBps: 200 * MB, warmBps: 2000 * MB, afterWeightsMs, loads: 5 };
    const halves = (t: number) => {
      const b = piecewise(t, 200 * MB, big / 2, 100 * MB, big);
      return { bytes: b, coldBytes: b };
    };
    const readyAt = 50_000 + 100_000 + afterWeightsMs;
    for (const now of [78_000 /* half */, 116_000 /* three quarters */]) {
      const eta = estimateEta({
        now,
        phase: 'loading weights',
        weightsStartedAt: 0,
        totalBytes: big,
        samples: loadSamples(halves, now),
        prior,
      });
      assert.equal(eta?.basis, 'bytes+cache');
      const err = errorOfTimeLeft(eta, now, readyAt);
      assert.ok(Math.abs(err) <= 0.15, `at ${now}: ${(err * 100).toFixed(1)} % of the time left`);
    }
    // 12 s after the change (two 4 s witness rounds would be 3 samples) it is already followed
    const soon = 62_000;
    const err = errorOfTimeLeft(
      estimateEta({
        now: soon,
        phase: 'loading weights',
        weightsStartedAt: 0,
        totalBytes: big,
        samples: loadSamples(halves, soon),
        prior,
      }),
      soon,
      readyAt,
    );
    assert.ok(Math.abs(err) <= 0.15, `12 s after the change: ${(err * 100).toFixed(1)} %`);
  });

  it('the same halving without a measured residency (bytes basis)', () => {
    const big = 20_000 * MB;
    const halves = (t: number) => ({ bytes: piecewise(t, 200 * MB, big / 2, 100 * MB, big) });
    const readyAt = 50_000 + 100_000 + afterWeightsMs;
    const samples = loadSamples((t) => ({ ...halves(t), coldBytes: 0 }), 78_000).map((s) => ({
      at: s.at,
      bytes: s.bytes,
    }));
    const eta = estimateEta({
      now: 78_000,
      phase: 'loading weights',
      weightsStartedAt: 0,
      totalBytes: big,
      samples,
      prior: { coldBps: 200 * MB, afterWeightsMs },
    });
    assert.equal(eta?.basis, 'bytes');
    const err = errorOfTimeLeft(eta, 78_000, readyAt);
    assert.ok(Math.abs(err) <= 0.15, `${(err * 100).toFixed(1)} % of the time left`);
  });

  it('normal cold load (forecast right): within 5 % at a quarter, half and three quarters', () => {
    const prior = { residentBytes: 0, coldBps: 100 * MB, warmBps: 1000 * MB, afterWeightsMs, loads: 3 };
    const cold = (t: number) => {
      const b = Math.min(total, 100 * MB * (t / 1000));
      return { bytes: b, coldBytes: b };
    };
    const readyAt = 50_000 + afterWeightsMs;
    for (const now of [14_000, 28_000, 42_000]) {
      const eta = weightsEta(now, total, cold, prior);
      assert.equal(eta?.basis, 'bytes+cache');
      assert.ok(Math.abs(errorOfTimeLeft(eta, now, readyAt)) <= 0.05, `at ${now}: ${eta?.remainingMs}`);
    }
  });

  it('normal warm load (forecast right: all cached, read through rchar): within 5 %', () => {
    const prior = { residentBytes: total, coldBps: 100 * MB, warmBps: 250 * MB, afterWeightsMs, loads: 3 };
    const warm = (t: number) => ({ bytes: Math.min(total, 250 * MB * (t / 1000)), coldBytes: 1 * MB });
    const readyAt = 20_000 + afterWeightsMs;
    for (const now of [10_000, 14_000]) {
      const eta = weightsEta(now, total, warm, prior);
      assert.equal(eta?.basis, 'bytes+cache');
      assert.ok(Math.abs(errorOfTimeLeft(eta, now, readyAt)) <= 0.05, `at ${now}: ${eta?.remainingMs}`);
    }
  });

  it("a history warm rate below the trickle (a cold load's sockets and imports) is not taken as the page-cache rate", () => {
    // cold half read; history's "warm rate" is 2 kB/s: the cached half would take 29 days
    const cold = (t: number) => {
      const b = Math.min(2500 * MB, 100 * MB * (t / 1000));
      return { bytes: b, coldBytes: b };
    };
    const prior = { residentBytes: 2500 * MB, coldBps: 100 * MB, warmBps: 2000, afterWeightsMs };
    const eta = estimateEta({
      now: 20_000,
      phase: 'loading weights',
      weightsStartedAt: 0,
      totalBytes: total,
      samples: loadSamples(cold, 20_000),
      prior,
    })!;
    // 500 MB cold at 100 MB/s + 2500 MB at the default page-cache rate + 5 s
    assert.ok(
      Math.abs(eta.remainingMs - (5000 + ((2500 * MB) / DEFAULT_WARM_BPS) * 1000 + afterWeightsMs)) < 300,
      `${eta.remainingMs}`,
    );
  });

  it('prior rates weigh less as the live window grows, and not at all once the live rate disproves them', () => {
    assert.ok(blendRate(100, 60_000, 50) > blendRate(100, 30_000, 50));
    assert.ok(Math.abs(blendRate(100, 60_000, 50) - (100 * 6 + 50) / 7) < 1e-9);
    // 10 % off: blended; 50 % off after 10 s of measurement: the prior is disproved
    assert.ok(
      Math.abs(learnedRate({ bps: 110, spanMs: 20_000, evidenceMs: 20_000 }, 100, 1) - (110 * 2 + 100) / 3) < 1e-9,
    );
    assert.equal(learnedRate({ bps: 50, spanMs: 20_000, evidenceMs: 20_000 }, 100, 1), 50);
    // with too little measurement the prior still counts
    assert.ok(learnedRate({ bps: 50, spanMs: 4000, evidenceMs: 4000 }, 100, 1) > 50);
  });

  it('liveRate follows a rate change within the short window and averages a steady one over 30 s', () => {
    const steady = loadSamples((t) => ({ bytes: 100 * MB * (t / 1000), coldBytes: 0 }), 60_000);
    const r = liveRate(steady, (s) => s.bytes, false)!;
    assert.ok(Math.abs(r.bps - 100 * MB) < 1);
    assert.equal(r.spanMs, 30_000);
    const changed = loadSamples(
      (t) => ({ bytes: piecewise(t, 200 * MB, 8000 * MB, 100 * MB, 1e15), coldBytes: 0 }),
      54_000,
    );
    // the change happened at 40 s: 14 s ago
    const c = liveRate(changed, (s) => s.bytes, true)!;
    assert.ok(Math.abs(c.bps - 100 * MB) / (100 * MB) < 0.1, `${c.bps / MB} MB/s`);
    assert.ok(c.spanMs <= 16_000);
  });

  it('residencyHolds: more cold bytes than the residency leaves cold, or more warm than it says are cached, disprove it', () => {
    assert.equal(residencyHolds(1000, 500, 400, 0), true);
    assert.equal(residencyHolds(1000, 500, 505, 0), true); // within 1 % of the model
    assert.equal(residencyHolds(1000, 500, 600, 0), false);
    assert.equal(residencyHolds(1000, 1000, 20, 100), false);
    assert.equal(residencyHolds(1000, 0, 100, 20), false);
  });
});

describe('eta: elapsed time disproves an ETA', () => {
  const total = 5000 * MB;

  it('a stall near the end: the ETA is not re-anchored to now, and is gone once overdue', () => {
    // 95 % read at 100 MB/s, then nothing: the old estimate said "~5 s left" for as long as it hung
    const hung = (t: number) => {
      const b = Math.min(4750 * MB, 100 * MB * (t / 1000));
      return { bytes: b, coldBytes: b };
    };
    const prior = { residentBytes: 0, coldBps: 100 * MB, afterWeightsMs: 2000 };
    const at = (now: number) => weightsEta(now, total, hung, prior);
    // 4750 MB reached at 47.5 s; the sample at 48 s is the last that saw growth: ready at 48 + 2.5 + 2 s
    const readyAt = (now: number) => now + at(now)!.remainingMs;
    assert.ok(Math.abs(readyAt(48_000) - 52_500) < 100, `${readyAt(48_000)}`);
    // a sample that saw nothing move does not push the ready time back (the rate may shift by
    // a few ms as old intervals leave the window)
    assert.ok(Math.abs(readyAt(50_000) - readyAt(48_000)) < 50, `${readyAt(50_000)}`);
    assert.ok(Math.abs(readyAt(52_000) - readyAt(48_000)) < 50, `${readyAt(52_000)}`);
    for (const now of [52_600, 54_000, 60_000, 120_000, 300_000]) assert.equal(at(now), undefined, `no ETA at ${now}`);
  });

  it('a stall with a long way to go: no ETA from 10 s minus one sample interval after the first sample without progress', () => {
    const hung = (t: number) => {
      const b = Math.min(2000 * MB, 100 * MB * (t / 1000));
      return { bytes: b, coldBytes: b };
    };
    const prior = { residentBytes: 0, coldBps: 100 * MB, afterWeightsMs: 2000 };
    const at = (now: number, step = 2000) =>
      estimateEta({
        now,
        phase: 'loading weights',
        weightsStartedAt: 0,
        totalBytes: total,
        samples: loadSamples(hung, now, step),
        prior,
      });
    // last growth seen at 20 s, first flat sample at 22 s; samples every 2 s: dropped after 8 s
    assert.ok(at(30_000));
    assert.equal(at(30_001), undefined);
    for (const now of [32_000, 60_000, 200_000]) assert.equal(at(now), undefined);
    // samples every 4 s (the default witness cadence): last growth 20 s, first flat 24 s, dropped after 6 s
    assert.ok(at(28_000, 4000));
    assert.equal(at(30_001, 4000), undefined);
  });

  it('a stall with the bytes+cache basis (the rate of the last active interval is not kept forever)', () => {
    const hung = (t: number) => {
      const b = Math.min(2000 * MB, 100 * MB * (t / 1000));
      return { bytes: b, coldBytes: b };
    };
    const prior = { residentBytes: 2500 * MB, coldBps: 100 * MB, warmBps: 200 * MB, afterWeightsMs: 2000 };
    const at = (now: number) => weightsEta(now, total, hung, prior);
    assert.equal(at(18_000)?.basis, 'bytes+cache');
    assert.ok(at(30_000));
    assert.equal(at(30_001), undefined);
  });

  it('all bytes read: the phases after them count from when the last byte was, and an overrun hides the ETA', () => {
    const done = (t: number) => {
      const b = Math.min(total, 250 * MB * (t / 1000));
      return { bytes: b, coldBytes: b };
    };
    const prior = { residentBytes: 0, coldBps: 250 * MB, afterWeightsMs: 8000 };
    const at = (now: number) => weightsEta(now, total, done, prior);
    assert.ok(Math.abs(at(24_000)!.remainingMs - 4000) < 1, `${at(24_000)?.remainingMs}`); // all read at 20 s (sample), 8 s after
    assert.equal(at(28_001), undefined);
  });

  it("history's time for the phases after the weights, overrun: no ETA (not '1s left' forever)", () => {
    const input = {
      phase: 'capturing CUDA graphs' as const,
      weightsEndedAt: 0,
      samples: [],
      prior: { afterWeightsMs: 40_000 },
    };
    assert.equal(estimateEta({ ...input, now: 40_000 })?.remainingMs, 0);
    assert.equal(estimateEta({ ...input, now: 40_001 }), undefined);
    assert.equal(estimateEta({ ...input, now: 600_000 }), undefined);
  });

  it('shards basis: no shard (no progress) for longer than a shard takes plus 10 s hides the ETA', () => {
    const input = {
      phase: 'loading weights' as const,
      weightsStartedAt: 0,
      totalBytes: total,
      samples: [{ at: 20_000, bytes: 0 }],
      shards: { done: 16, total: 64 },
      prior: { afterWeightsMs: 1000 },
    };
    assert.equal(estimateEta({ ...input, now: 20_000, lastProgressAt: 20_000 })?.basis, 'shards');
    // a shard takes 1.25 s .. 2 s here
    assert.ok(estimateEta({ ...input, now: 30_000, lastProgressAt: 20_000 }));
    assert.equal(estimateEta({ ...input, now: 33_000, lastProgressAt: 20_000 }), undefined);
  });

  it('visibleEta: what is left, 0 when due, nothing once 10 s overdue', () => {
    const eta = { at: 0, readyAt: 30_000, basis: 'bytes' };
    assert.equal(visibleEta(undefined, 0), undefined);
    assert.equal(visibleEta(eta, 10_000), 20_000);
    assert.equal(visibleEta(eta, 35_000), 0);
    assert.equal(visibleEta(eta, 40_000), 0);
    assert.equal(visibleEta(eta, 40_001), undefined);
    assert.equal(visibleEta(eta, 31_000, 0), undefined);
  });
});

describe('eta: through the load state (a hung load, as the watcher feeds it)', () => {
  it("a hang near the end: the state's ETA is gone 10 s after the first sample without progress, and comes back when bytes move", () => {
    const unit: ServiceStatus = runningUnit({ execMainStartedAt: 0 });
    const total = 5000 * MB;
    let s = [
      {
        kind: 'prior',
        at: 0,
        prior: { residentBytes: 0, coldBps: 100 * MB, warmBps: 1000 * MB, afterWeightsMs: 2000 },
      },
      { kind: 'restartRequested', at: 0 },
      { kind: 'tiedToRun', at: 0, unit },
      { kind: 'journal', at: 0, event: { type: 'phase', phase: 'loading weights' }, text: 'Load weight begin.' },
    ].reduce((st, sig) => reduce(st, sig as Signal), initialState(0));
    const bytesAt = (t: number) => Math.min(4600 * MB, 100 * MB * (t / 1000)); // hangs at 46 s with ~4 s left
    const shown: { at: number; left: number | undefined }[] = [];
    for (let t = 2000; t <= 120_000; t += 2000) {
      s = reduce(s, { kind: 'io', at: t, readBytes: bytesAt(t), coldBytes: bytesAt(t), totalBytes: total });
      s = reduce(s, { kind: 'tick', at: t + 1000, stallMs: 120_000 });
      for (const at of [t, t + 1000]) shown.push({ at, left: visibleEta(s.eta, at) });
    }
    const firstFlat = 48_000;
    assert.ok(shown.find((x) => x.at === 44_000)?.left !== undefined, 'an ETA while loading');
    const late = shown.filter((x) => x.at > firstFlat + 10_000 && x.left !== undefined);
    assert.deepEqual(late, [], 'no ETA on screen 10 s after the stall showed');
    // the load goes on: an ETA again once the new rate is measured
    for (let t = 122_000; t <= 140_000; t += 2000)
      s = reduce(s, {
        kind: 'io',
        at: t,
        readBytes: 4600 * MB + 20 * MB * ((t - 120_000) / 1000),
        coldBytes: 4600 * MB + 20 * MB * ((t - 120_000) / 1000),
        totalBytes: total,
      });
    assert.ok(s.eta, 'an ETA again');
  });
});
