import { strict as assert } from 'node:assert';
import { blendRate, estimateEta, formatEta, formatRate, pushSample, windowRate, windowSpanMs, type IoSample } from '../../src/monitor/eta';

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
    assert.equal(windowRate([{ at: 1, bytes: 5 }, { at: 1, bytes: 6 }]), undefined);
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
  it('says nothing before 5 % of the bytes or 10 s of samples', () => {
    const few = linear(0, 4000, 1000, 200 * MB); // 800 MB = 8 %, 4 s
    assert.equal(estimateEta({ now: 4000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: few }), undefined);
    const slow = linear(0, 20_000, 1000, 10 * MB); // 200 MB = 2 %
    assert.equal(estimateEta({ now: 20_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: slow }), undefined);
    assert.equal(estimateEta({ now: 0, phase: 'starting', samples: [] }), undefined);
  });
  it('remaining bytes over the measured rate plus the phases after the weights', () => {
    const s = linear(0, 20_000, 1000, 200 * MB); // 4000 MB read, 6000 MB left at 200 MB/s = 30 s
    const eta = estimateEta({ now: 20_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: s, prior: { coldBps: 200 * MB, afterWeightsMs: 5000 } })!;
    assert.equal(eta.basis, 'bytes');
    assert.ok(Math.abs(eta.weightsMs - 30_000) < 500, `${eta.weightsMs}`);
    assert.equal(eta.afterWeightsMs, 5000);
    assert.ok(Math.abs(eta.remainingMs - 35_000) < 500);
  });
  it('without history the phases after the weights are a share of the weights time', () => {
    const s = linear(0, 20_000, 1000, 200 * MB);
    const eta = estimateEta({ now: 20_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: s })!;
    assert.ok(eta.afterWeightsMs >= 5000);
    assert.ok(Math.abs(eta.afterWeightsMs - 0.2 * (20_000 + eta.weightsMs)) < 1);
  });
  it('with the page-cache residency, cold and warm bytes go at their own rates (rate changes mid-way)', () => {
    // half the model cached; cold half read first at 100 MB/s; the warm half will go at 1000 MB/s
    const s = linear(0, 25_000, 1000, 100 * MB); // 2500 MB cold read
    const prior = { residentBytes: 5000 * MB, warmBps: 1000 * MB, afterWeightsMs: 2000 };
    const eta = estimateEta({ now: 25_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: s, prior })!;
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
    const eta = estimateEta({ now: 23_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: [...cold, ...warm], prior })!;
    // cold done (2000 = total - resident); warm read 2000 of 8000 -> 6000 MB at ~1000 MB/s = 6 s
    assert.ok(Math.abs(eta.weightsMs - 6000) < 1200, `${eta.weightsMs}`);
  });
  it('falls back to shards when bytes show nothing (page-cached mmap load)', () => {
    const eta = estimateEta({ now: 20_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: total, samples: [{ at: 20_000, bytes: 0 }], shards: { done: 16, total: 64 }, prior: { afterWeightsMs: 1000 } })!;
    assert.equal(eta.basis, 'shards');
    assert.equal(eta.weightsMs, 60_000);
  });
  it('after the weights only history can tell; without it, nothing', () => {
    assert.equal(estimateEta({ now: 10, phase: 'capturing CUDA graphs', weightsEndedAt: 0, samples: [] }), undefined);
    const eta = estimateEta({ now: 10_000, phase: 'capturing CUDA graphs', weightsEndedAt: 0, samples: [], prior: { afterWeightsMs: 40_000 } })!;
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
    const eta = estimateEta({ now: 20_000, phase: 'loading weights', weightsStartedAt: 0, totalBytes: 10_000e6, samples: s, prior: { residentBytes: 5000e6, afterWeightsMs: 0 } })!;
    // cold 3000 MB left at 100 MB/s + 5000 MB warm at the default 3 GB/s
    assert.ok(Math.abs(eta.weightsMs - (30_000 + 5000 / 3)) < 1000, `${eta.weightsMs}`);
  });
});
