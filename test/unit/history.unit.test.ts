import { strict as assert } from 'node:assert';
import type { ServiceStatus } from '../../src/target/target';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import {
  appendRecord,
  LoadHistoryStore,
  median,
  priorFrom,
  recordOf,
  type LoadRecord,
  type MementoLike,
  watchedFromStart,
} from '../../src/monitor/history/history';
import { lateWatchRecord, runAfterReloads, runCase, SHAPES } from '../util/etaHarness';
import { captureSizesUpTo } from '../../src/engine/cudaGraphs';
import { predictLoad } from '../../src/monitor/history/loadPrediction';
import { runningUnit } from '../util/loadFixtures';

const unit: ServiceStatus = runningUnit({ mainPid: 7, execMainStartedAt: undefined });

function load(): LoadState {
  const signals: Signal[] = [
    { kind: 'restartRequested', at: 0 },
    { kind: 'tiedToRun', at: 1000, unit },
    { kind: 'journal', at: 5000, event: { type: 'phase', phase: 'loading weights' }, text: 'Load weight begin.' },
  ];
  // 10 s cold at 100 MB/s, then 2 s warm at 1 GB/s
  for (let t = 6000; t <= 15_000; t += 1000)
    signals.push({ kind: 'io', at: t, readBytes: (t - 5000) * 1e5, coldBytes: (t - 5000) * 1e5, totalBytes: 3e9 });
  for (let t = 16_000; t <= 17_000; t += 1000)
    signals.push({ kind: 'io', at: t, readBytes: 1e9 + (t - 15_000) * 1e6, coldBytes: 1e9, totalBytes: 3e9 });
  signals.push(
    { kind: 'journal', at: 18_000, event: { type: 'kvCache' }, text: 'KV' },
    { kind: 'journal', at: 30_000, event: { type: 'httpUp' }, text: 'up' },
    { kind: 'journal', at: 31_000, event: { type: 'ready' }, text: 'ready' },
    { kind: 'completion', at: 32_000, ok: true, detail: 'ok' },
  );
  return signals.reduce(reduce, initialState(0));
}

describe('load history', () => {
  it('records phase durations, bytes, rates and residency of a load', () => {
    const r = recordOf(load(), 'ready', 40_000, 2e9);
    assert.equal(r.totalMs, 32_000);
    assert.equal(r.startingMs, 5000);
    assert.equal(r.phaseMs['starting'], 4000);
    assert.equal(r.phaseMs['loading weights'], 13_000);
    assert.equal(r.phaseMs['allocating KV cache'], 12_000);
    assert.equal(r.phaseMs['warming up'], 2000);
    assert.equal(r.afterWeightsMs, 14_000);
    assert.equal(r.bytesRead, 3e9);
    assert.ok(Math.abs(r.coldBps! - 1e8) < 1);
    assert.ok(Math.abs(r.warmBps! - 1e9) < 1);
    assert.equal(r.residentBytesAtStart, 2e9);
  });
  it('keeps the last 20, newest first', () => {
    let list: LoadRecord[] = [];
    for (let i = 0; i < 25; i++) list = appendRecord(list, { startedAt: i, outcome: 'ready', phaseMs: {} });
    assert.equal(list.length, 20);
    assert.equal(list[0]!.startedAt, 24);
  });
  it('keeps 20 loads it watched from their start however many late watches come after', () => {
    let list: LoadRecord[] = [];
    for (let i = 0; i < 20; i++) list = appendRecord(list, { ...recordOf(load(), 'ready', 40_000), startedAt: i });
    for (let i = 0; i < 10; i++) list = appendRecord(list, lateWatchRecord(100_000 + i * 60_000));
    assert.equal(list.filter(watchedFromStart).length, 20, 'no real load pushed out');
    assert.equal(list.length, 23, 'the newest 3 late watches kept besides');
  });
  it('takes no prior from watches begun on a server already serving', () => {
    const real = recordOf(load(), 'ready', 40_000);
    const junk = [1, 2, 3, 4, 5].map((k) => lateWatchRecord(k * 60_000));
    assert.ok(junk.every((r) => r.outcome === 'ready' && r.afterWeightsMs !== undefined));
    assert.deepEqual(priorFrom([...junk, real]), priorFrom([real]));
    // Older records without watchFromMs: the whole age before the weights.
    const old: LoadRecord = {
      startedAt: 0,
      outcome: 'ready',
      totalMs: 86_400_000,
      startingMs: 86_399_000,
      phaseMs: {},
      afterWeightsMs: 1,
    };
    assert.deepEqual(priorFrom([old, real]), priorFrom([real]));
    // What the user sees: the second load's ETA after five window reloads is that of a clean history.
    const plain = SHAPES[0]!;
    const after = runAfterReloads(plain, 5);
    assert.equal(after.errors[50], runCase(plain).second.errors[50]);
    assert.ok(Math.abs(after.errors[50]!) <= 0.1, `ETA error at half ${after.errors[50]}`);
  });
  it("records the quiet time from the weights' last byte or shard line to the phase's end, and the prior keeps it", () => {
    for (const [name, expected] of [
      ['silent 150 s after the last shard', 150_000],
      ['plain cold, no shard lines', 500],
    ] as const) {
      const first = runCase(SHAPES.find((s) => s.name === name)!).first;
      const r = recordOf(first.final, 'ready', first.totalMs);
      assert.ok(Math.abs(r.afterShardsMs! - expected) <= 1_000, `${name}: ${r.afterShardsMs}`);
      assert.equal(priorFrom([r]).afterShardsMs, r.afterShardsMs);
    }
    assert.equal(recordOf(load(), 'ready', 40_000).afterShardsMs, 1_000, 'bytes all read at 17 s, KV cache at 18 s');
  });
  it('gives a prior: medians of rates and fixed phases, spread of totals', () => {
    const recs: LoadRecord[] = [
      {
        startedAt: 0,
        outcome: 'ready',
        totalMs: 100,
        phaseMs: {},
        coldBps: 100,
        warmBps: 1000,
        afterWeightsMs: 10,
        startingMs: 5,
      },
      { startedAt: 1, outcome: 'ready', totalMs: 300, phaseMs: {}, coldBps: 300, afterWeightsMs: 30, startingMs: 7 },
      { startedAt: 2, outcome: 'failed', phaseMs: {}, coldBps: 200, afterWeightsMs: 999 },
    ];
    const p = priorFrom(recs, { residentBytes: 5 });
    assert.equal(p.coldBps, 200);
    assert.equal(p.warmBps, 1000);
    assert.equal(p.afterWeightsMs, 20);
    assert.deepEqual(p.totalMsRange, [100, 300]);
    assert.equal(p.residentBytes, 5);
    assert.equal(p.loads, 2);
    assert.deepEqual(priorFrom([]), { loads: 0 });
    // every byte read cold: its "page-cache rate" (sockets, imports) is no reading rate
    const cold: LoadRecord = { ...recs[0]!, coldBps: 10e6, warmBps: 5e3 };
    assert.equal(priorFrom([cold]).warmBps, undefined);
    assert.ok(predictLoad([cold], 302e6, 302e6) < 60_000, 'a forecast of cached files does not say minutes');
    assert.equal(median([]), undefined);
  });
  it("scales history's CUDA-graph capture by the graphs the unit's --cuda-graph-max-bs gives now", () => {
    // SGLang's list 1, 2, 4, 8, 12, then steps of 8: 6 graphs up to 16, 10 up to 48, 24 up to 160
    assert.deepEqual([0, 1, 8, 16, 48, 160].map(captureSizesUpTo), [0, 1, 4, 6, 10, 24]);
    const last: LoadRecord = {
      startedAt: 0,
      outcome: 'ready',
      totalMs: 60_000,
      phaseMs: { 'capturing CUDA graphs': 12_000 },
      afterWeightsMs: 20_000,
      captureBatches: 10,
      cudaGraphMaxBs: 48,
      watchFromMs: 0,
    };
    // 8 s besides the capture, and 12 s x 24 / 10 of it
    assert.equal(priorFrom([last], { cudaGraphMaxBs: 160 }).afterWeightsMs, 8_000 + 28_800);
    assert.equal(priorFrom([last], { cudaGraphMaxBs: 48 }).afterWeightsMs, 20_000, 'the same bound');
    assert.equal(priorFrom([last]).afterWeightsMs, 20_000, 'the bound not known now');
    const { cudaGraphMaxBs: _, ...unbounded } = last;
    assert.equal(priorFrom([unbounded], { cudaGraphMaxBs: 160 }).afterWeightsMs, 20_000, 'nor then');
  });
  it('stores per server+unit in a Memento and ignores garbage', async () => {
    const data = new Map<string, unknown>();
    const memento: MementoLike = {
      get: <T>(k: string) => data.get(k) as T | undefined,
      update: async (k, v) => void data.set(k, v),
    };
    const store = new LoadHistoryStore(memento);
    await store.add('gpu1', 'sglang.service', { startedAt: 1, outcome: 'ready', phaseMs: {} });
    await store.add('gpu2', 'sglang.service', { startedAt: 2, outcome: 'failed', phaseMs: {} });
    assert.equal(store.list('gpu1', 'sglang.service').length, 1);
    data.set('kimi.loadHistory:gpu3:u', [{ nonsense: true }, 5]);
    assert.deepEqual(store.list('gpu3', 'u'), []);
    await store.clear('gpu1', 'sglang.service');
    assert.deepEqual(store.list('gpu1', 'sglang.service'), []);
  });
});
