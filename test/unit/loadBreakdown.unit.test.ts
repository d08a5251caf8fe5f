import { strict as assert } from 'node:assert';
import type { ServiceStatus } from '../../src/target/target';
import { LoadHistoryStore, recordOf, type LoadRecord, type MementoLike } from '../../src/monitor/history/history';
import { breakdownOf, comparable, latestBreakdown, trackSteps } from '../../src/monitor/history/loadBreakdown';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { breakdownLine, phaseRows } from '../../src/present/loadSummary';
import { readyMessage } from '../../src/present/messages';
import { serverReport } from '../../src/present/report';
import { waitSummaryLine } from '../../src/fronts/cli/format';
import type { ServerProfile } from '../../src/config/config';
import { dashboardModel } from '../../src/fronts/vscode/dashboard/dashboardModel';
import { runningUnit } from '../util/loadFixtures';

const GB = 1e9;
const S = 1000;
const M = 60 * S;

/** A ready load: phases in order with their durations (ms), the load's own start at `at`. */
function load(
  at: number,
  phases: Partial<
    Record<'starting' | 'loading weights' | 'allocating KV cache' | 'capturing CUDA graphs' | 'warming up', number>
  >,
  extra: Partial<LoadRecord> = {},
): LoadRecord {
  const order = ['starting', 'loading weights', 'allocating KV cache', 'capturing CUDA graphs', 'warming up'] as const;
  const phaseMs: Record<string, number> = {};
  const phaseStartMs: Record<string, number> = {};
  let t = 2 * S; // the old process stopping
  for (const p of order) {
    const ms = phases[p];
    if (ms === undefined) continue;
    phaseStartMs[p] = t;
    phaseMs[p] = ms;
    t += ms;
  }
  return {
    startedAt: at,
    outcome: 'ready',
    totalMs: t,
    phaseMs,
    phaseStartMs,
    startingMs: phaseStartMs['loading weights'] ?? 0,
    watchFromMs: 0,
    totalBytes: 600 * GB,
    ...extra,
  };
}

const COLD = { cachedShare: 0.04, coldBps: 1.5 * GB } as const;
const WARM = { cachedShare: 0.96, warmBps: 6 * GB } as const;

describe('load breakdown', () => {
  it('a first load: its phases, the weights rate and cache share, and no comparison', () => {
    const b = breakdownOf(
      load(0, { starting: 20 * S, 'loading weights': 6 * M + 2 * S, 'capturing CUDA graphs': 100 * S }, COLD),
      [],
    )!;
    assert.deepEqual(
      b.phases.map((p) => [p.phase, p.startMs, p.ms]),
      [
        ['restart', 0, 2000],
        ['starting', 2000, 20_000],
        ['loading weights', 22_000, 362_000],
        ['capturing CUDA graphs', 384_000, 100_000],
      ],
    );
    assert.deepEqual(b.weights, { bps: 1.5 * GB, source: 'cold', cachedShare: 0.04 });
    assert.equal(b.comparison, undefined);
    assert.equal(
      breakdownLine(b),
      'loaded in 8m 4s: weights 6m 2s cold at 1.50 GB/s, CUDA graphs 1m 40s; the first load on record here',
    );
  });

  it('slower than last time: the page cache held less of the weights (measured both times)', () => {
    const last = load(0, { starting: 20 * S, 'loading weights': 4 * M, 'capturing CUDA graphs': 100 * S }, WARM);
    const now = load(
      M * 60,
      { starting: 20 * S, 'loading weights': 6 * M + 10 * S, 'capturing CUDA graphs': 100 * S },
      COLD,
    );
    const b = breakdownOf(now, [last])!;
    assert.equal(b.comparison!.deltaMs, 130_000);
    assert.deepEqual(b.comparison!.reason, { kind: 'page cache', share: 0.04, previousShare: 0.96 });
    assert.equal(
      breakdownLine(b),
      'loaded in 8m 12s: weights 6m 10s cold at 1.50 GB/s, CUDA graphs 1m 40s; 2m 10s slower than last time: the page cache held 4 % of the weights, 96 % last time',
    );
  });

  it('faster than last time: the page cache held more (its share from the residency before the restart, for an older record)', () => {
    // An older record: no cachedShare, no phase starts, no watchFromMs; the residency measured at the restart.
    const old: LoadRecord = {
      startedAt: 0,
      outcome: 'ready',
      totalMs: 9 * M,
      startingMs: 22 * S,
      phaseMs: { starting: 20 * S, 'loading weights': 7 * M, 'capturing CUDA graphs': 98 * S },
      totalBytes: 600 * GB,
      residentBytesAtStart: 0,
      coldBps: 1.4 * GB,
    };
    const b = breakdownOf(
      load(M, { starting: 20 * S, 'loading weights': 2 * M, 'capturing CUDA graphs': 98 * S }, WARM),
      [old],
    )!;
    assert.ok(b.comparison!.deltaMs < 0);
    assert.deepEqual(b.comparison!.reason, { kind: 'page cache', share: 0.96, previousShare: 0 });
    assert.match(
      breakdownLine(b),
      /; 5m 0s faster than last time: the page cache held 96 % of the weights, 0 % last time$/,
    );
    assert.match(breakdownLine(b), /weights 2m 0s from the page cache at 6.00 GB/);
  });

  it('the same cache share but a slower storage read is the read rate', () => {
    const last = load(0, { 'loading weights': 3 * M }, { ...COLD, coldBps: 3 * GB });
    const b = breakdownOf(load(M, { 'loading weights': 6 * M }, COLD), [last])!;
    assert.deepEqual(b.comparison!.reason, { kind: 'read rate', bps: 1.5 * GB, previousBps: 3 * GB });
    assert.match(
      breakdownLine(b),
      /3m 0s slower than last time: the weights were read at 1.50 GB\/s, 3.00 GB\/s last time$/,
    );
  });

  it('a JIT compile this time and not last time explains a slower CUDA-graph phase', () => {
    const last = load(0, { 'loading weights': 2 * M, 'capturing CUDA graphs': 40 * S }, WARM);
    const now = load(
      M,
      { 'loading weights': 2 * M, 'capturing CUDA graphs': 4 * M },
      { ...WARM, steps: [{ kind: 'deepgemm', startMs: 2 * S + 2 * M + 5 * S, ms: 3 * M + 10 * S }] },
    );
    const b = breakdownOf(now, [last])!;
    assert.deepEqual(b.comparison!.reason, { kind: 'step', step: 'deepgemm', ms: 190_000, now: true });
    assert.equal(
      breakdownLine(b),
      'loaded in 6m 2s: weights 2m 0s from the page cache at 6.00 GB/s, CUDA graphs 4m 0s (DeepGEMM compile 3m 10s); 3m 20s slower than last time: DeepGEMM compile 3m 10s this time, none last time',
    );
  });

  it('faster: a compile last time and none this time (its cache kept) is said so', () => {
    const last = load(
      0,
      { 'loading weights': 2 * M, 'capturing CUDA graphs': 3 * M },
      { ...WARM, steps: [{ kind: 'torch-compile', startMs: 2 * S + 2 * M, ms: 125 * S }] },
    );
    const b = breakdownOf(load(M, { 'loading weights': 2 * M, 'capturing CUDA graphs': 50 * S }, WARM), [last])!;
    assert.deepEqual(b.comparison!.reason, { kind: 'step', step: 'torch-compile', ms: 125_000, now: false });
    assert.match(breakdownLine(b), /2m 10s faster than last time: no torch.compile this time \(2m 5s last time\)$/);
    // A compile too short to account for the difference is not its cause.
    const small = load(
      0,
      { 'loading weights': 2 * M, 'capturing CUDA graphs': 3 * M },
      { ...WARM, steps: [{ kind: 'torch-compile', startMs: 2 * S + 2 * M, ms: 10 * S }] },
    );
    const c = breakdownOf(load(M, { 'loading weights': 2 * M, 'capturing CUDA graphs': 50 * S }, WARM), [small])!;
    assert.equal(c.comparison!.reason!.kind, 'phase');
  });

  it('no cause measured: only the phase that took the time, never a guess', () => {
    // Neither load measured its cache share nor its rates: the weights phase is named, nothing more.
    const last = load(0, { 'loading weights': 3 * M, 'warming up': 10 * S }, { totalBytes: undefined });
    const b = breakdownOf(load(M, { 'loading weights': 5 * M, 'warming up': 10 * S }, { totalBytes: undefined }), [
      last,
    ])!;
    assert.deepEqual(b.comparison!.reason, {
      kind: 'phase',
      phase: 'loading weights',
      ms: 5 * M,
      previousMs: 3 * M,
    });
    assert.match(breakdownLine(b), /2m 0s slower than last time: weights took 5m 0s, 3m 0s last time$/);
  });

  it('a phase missing this time (no CUDA graphs) is said so, and shown as none on its row', () => {
    const last = load(0, { 'loading weights': 2 * M, 'capturing CUDA graphs': 90 * S }, WARM);
    const b = breakdownOf(load(M, { 'loading weights': 2 * M, 'warming up': 5 * S }, WARM), [last])!;
    assert.deepEqual(b.comparison!.reason, {
      kind: 'phase',
      phase: 'capturing CUDA graphs',
      ms: 0,
      previousMs: 90 * S,
    });
    assert.match(
      breakdownLine(b),
      /1m 25s faster than last time: no CUDA graphs phase this time \(1m 30s last time\)$/,
    );
    const rows = phaseRows(b);
    assert.deepEqual(
      rows.map((r) => [r.label, r.previousMs]),
      [
        ['restart', [2000]],
        ['weights', [120_000]],
        ['warm-up', [null]],
      ],
    );
    assert.equal(rows[2]!.text, '5s; last time none');
  });

  it('the old process taking long to stop is the restart part, before the first phase', () => {
    const last = load(0, { starting: 20 * S, 'loading weights': 2 * M }, WARM);
    const slowStop = load(M, { starting: 20 * S, 'loading weights': 2 * M }, WARM);
    const shifted = {
      ...slowStop,
      totalMs: slowStop.totalMs! + 38 * S,
      phaseStartMs: { starting: 40 * S, 'loading weights': 60 * S },
    };
    const b = breakdownOf(shifted, [last])!;
    assert.deepEqual(b.comparison!.reason, { kind: 'phase', phase: 'restart', ms: 40 * S, previousMs: 2 * S });
    assert.match(
      breakdownLine(b),
      /^loaded in 3m 0s: restart 40s, start 20s, weights 2m 0s .*; 38s slower than last time: restart took 40s, 2s last time$/,
    );
  });

  it('about as long as last time: no explanation is looked for', () => {
    const last = load(0, { 'loading weights': 3 * M }, COLD);
    const b = breakdownOf(load(M, { 'loading weights': 3 * M + 4 * S }, COLD), [last])!;
    assert.equal(b.comparison!.same, true);
    assert.equal(b.comparison!.reason, undefined);
    assert.match(breakdownLine(b), /; about as long as last time \(3m 2s\)$/);
  });

  it('compares only with loads watched from their start: a watch begun on a running server is not one', () => {
    const late = load(0, { 'loading weights': 1 * S }, { watchFromMs: 3 * 24 * 3600 * S, totalMs: 3 * 24 * 3600 * S });
    const oldLate: LoadRecord = {
      startedAt: 0,
      outcome: 'ready',
      totalMs: 86_400_000,
      startingMs: 86_399_000,
      phaseMs: { 'loading weights': 10 },
    };
    assert.equal(comparable(late), false);
    // `kimi-service wait` begun 2 s after the process started: the phases so far came at once.
    assert.equal(comparable(load(0, { 'loading weights': M }, { watchFromMs: 2 * S })), false);
    assert.equal(comparable(load(0, { 'loading weights': M }, { watchFromMs: 0 })), true);
    assert.equal(comparable(oldLate), false);
    assert.equal(breakdownOf(late, []), undefined);
    const failed: LoadRecord = { ...load(0, { 'loading weights': M }), outcome: 'failed' };
    const b = breakdownOf(load(M, { 'loading weights': 2 * M }), [late, failed, oldLate])!;
    assert.equal(b.comparison, undefined, 'nothing to compare with');
    const history = [late, load(2 * M, { 'loading weights': 2 * M }), failed, load(0, { 'loading weights': M })];
    const latest = latestBreakdown(history)!;
    assert.equal(latest.startedAt, 2 * M, 'the newest load watched from its start');
    assert.equal(latest.previous.length, 1);
  });

  it('records a load from its states: phase starts, steps, the cache share from its own reads; the store reads old and new records', async () => {
    const unit: ServiceStatus = runningUnit({ mainPid: 7, execMainStartedAt: undefined });
    const signals: Signal[] = [
      { kind: 'restartRequested', at: 0 },
      { kind: 'tiedToRun', at: 1000, unit },
      { kind: 'journal', at: 2000, event: { type: 'phase', phase: 'loading weights' }, text: 'Load weight begin.' },
      // 3 GB model: 1 GB from storage, 2 GB from the page cache
      { kind: 'io', at: 3000, readBytes: 0, coldBytes: 0, totalBytes: 3e9 },
      { kind: 'io', at: 8000, readBytes: 3e9, coldBytes: 1e9, totalBytes: 3e9 },
      { kind: 'journal', at: 9000, event: { type: 'kvCache' }, text: 'KV' },
      { kind: 'journal', at: 10_000, event: { type: 'cudaGraphBatches', done: 0, total: 4 }, text: 'graphs' },
      {
        kind: 'journal',
        at: 11_000,
        event: { type: 'activity', activity: 'deepgemm', edge: 'start' },
        text: 'Entering DeepGEMM JIT Pre-Compile session',
      },
      { kind: 'journal', at: 20_000, event: { type: 'cudaGraphBatches', done: 4, total: 4 }, text: 'graphs' },
      { kind: 'journal', at: 21_000, event: { type: 'httpUp' }, text: 'up' },
      { kind: 'journal', at: 22_000, event: { type: 'ready' }, text: 'ready' },
      { kind: 'completion', at: 23_000, ok: true, detail: 'ok' },
    ];
    let state: LoadState = initialState(0);
    let track = undefined as ReturnType<typeof trackSteps> | undefined;
    for (const sig of signals) {
      state = reduce(state, sig);
      track = trackSteps(track, state, sig.at);
    }
    assert.deepEqual(track!.steps, [{ kind: 'deepgemm', since: 11_000, until: 20_000 }]);
    const record = recordOf(state, 'ready', 24_000, undefined, track!.steps);
    assert.deepEqual(record.phaseStartMs, {
      starting: 1000,
      'loading weights': 2000,
      'allocating KV cache': 9000,
      'capturing CUDA graphs': 10_000,
      'warming up': 21_000,
      ready: 23_000,
    });
    assert.deepEqual(record.steps, [{ kind: 'deepgemm', startMs: 11_000, ms: 9000 }]);
    assert.ok(Math.abs(record.cachedShare! - 2 / 3) < 1e-9);
    assert.equal(record.watchFromMs, 0);

    const data = new Map<string, unknown>();
    const memento: MementoLike = {
      get: <T>(k: string) => data.get(k) as T,
      update: async (k, v) => void data.set(k, v),
    };
    // A record written before the breakdown existed, then this one.
    data.set('kimi.loadHistory:sim:sglang.service', [
      { startedAt: -M, outcome: 'ready', totalMs: 20_000, startingMs: 2000, phaseMs: { 'loading weights': 8000 } },
    ]);
    const store = new LoadHistoryStore(memento);
    const list = await store.add('sim', 'sglang.service', record);
    const b = latestBreakdown(list)!;
    assert.equal(b.comparison!.deltaMs, 3000);
    // The older record kept no steps: the compile is not said to be new, only where the time went.
    assert.match(
      breakdownLine(b),
      /^loaded in 23s: weights 7s 67 % from the page cache at 400 MB\/s, CUDA graphs 11s \(DeepGEMM compile 9s\); 3s slower than last time: CUDA graphs 11s this time, none last time$/,
    );
  });
});

describe('load breakdown in the fronts', () => {
  const server = { name: 'sim', host: 'h', unit: 'sglang.service' } as unknown as ServerProfile;
  const readyState = (): LoadState => ({
    ...initialState(0),
    verdict: 'ready',
    phase: 'ready',
    restartRequestedAt: M,
    processStartedAt: M + 2 * S,
    readyAt: M + 3 * M,
  });
  const lastLoad = breakdownOf(load(M, { 'loading weights': 2 * M, 'warming up': 58 * S }, COLD), [])!;

  it('the ready notification says how the load went, when the breakdown is of this load', () => {
    assert.equal(readyMessage(server, readyState(), lastLoad), `Kimi on sim is ready (${breakdownLine(lastLoad)})`);
    const other = breakdownOf(load(0, { 'loading weights': 2 * M }), [])!;
    assert.equal(readyMessage(server, readyState(), other), 'Kimi on sim is ready (loaded in 3m 0s)');
  });

  it('the status summary (CLI, MCP, LM tools) says it while that load serves, and wait ends with it', () => {
    const snapshot = {
      server,
      state: readyState(),
      watching: true,
      loading: false,
      refusal: undefined,
      verification: undefined,
      lastLoad,
    };
    const r = serverReport(snapshot, 5 * M);
    assert.equal(r.lastLoad, breakdownLine(lastLoad));
    assert.ok(r.summary.endsWith(` · ${breakdownLine(lastLoad)}`), r.summary);
    const loading = serverReport(
      { ...snapshot, state: { ...readyState(), verdict: 'loading', readyAt: undefined } },
      5 * M,
    );
    assert.equal(loading.lastLoad, undefined);
    const text = waitSummaryLine(
      { result: 'ready', report: r, next: 'sim is ready: it answered a real completion.' },
      false,
    );
    assert.deepEqual(text.split('\n'), [
      `sim: ${breakdownLine(lastLoad)}`,
      'sim is ready: it answered a real completion.',
    ]);
  });

  it('the dashboard: one row per phase with the previous loads on the same scale', () => {
    const last = load(0, { 'loading weights': 4 * M, 'capturing CUDA graphs': 100 * S }, WARM);
    const b = breakdownOf(load(M, { 'loading weights': 6 * M, 'capturing CUDA graphs': 100 * S }, COLD), [last])!;
    const model = dashboardModel({ state: readyState(), lastLoad: b, series: [], now: 5 * M });
    const d = model.breakdown!;
    assert.equal(d.heading, 'This load against the previous ones');
    assert.equal(d.scaleMs, 6 * M);
    assert.deepEqual(
      d.rows.map((r) => [r.label, r.ms, r.previousMs]),
      [
        ['restart', 2 * S, [2 * S]],
        ['weights', 6 * M, [4 * M]],
        ['CUDA graphs', 100 * S, [100 * S]],
      ],
    );
    assert.equal(d.rows[1]!.text, '6m 0s cold at 1.50 GB/s; last time 4m 0s');
    assert.match(d.line, /2m 0s slower than last time: the page cache held 4 % of the weights, 96 % last time$/);
    assert.equal(dashboardModel({ state: readyState(), series: [], now: 5 * M }).breakdown, undefined);
  });
});
