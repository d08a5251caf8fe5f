import { strict as assert } from 'node:assert';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { runningUnit } from '../util/loadFixtures';

// In replays of real hangs before the weights, `stalled` turned back into `loading 0%`
// 3-5 s later with nothing new on the host. These reproduce what the host sends meanwhile.

const STALL_MS = 15_000;

const unit = runningUnit;

const gpu = (at: number, usedMiB: number): Signal => ({
  kind: 'gpu',
  at,
  usedMiB,
  totalMiB: 8 * 81920,
  perGpu: [{ index: 0, usedMiB, totalMiB: 81920 }],
});
const tick = (at: number): Signal => ({ kind: 'tick', at, stallMs: STALL_MS });

/** A restart, the process up, "Init torch distributed begin", a first look at the witnesses: then the hang. */
function hungAtInit(): LoadState {
  const signals: Signal[] = [
    { kind: 'restartRequested', at: 0 },
    { kind: 'tiedToRun', at: 500, unit: unit() },
    { kind: 'journal', at: 1000, event: { type: 'phase', phase: 'starting' }, text: 'Init torch distributed begin.' },
    { kind: 'io', at: 1500, readBytes: 40_000_000 },
    gpu(1500, 4000),
  ];
  return signals.reduce(reduce, initialState(0));
}

/** What the host keeps sending while nothing happens: the sampler's identical readings, /health refused (sometimes failing), noise. */
function quietHost(from: number, to: number): Signal[] {
  const out: Signal[] = [];
  let n = 0;
  for (let at = from; at <= to; at += 1000, n++) {
    out.push({ kind: 'io', at, readBytes: 40_000_000 + n * 2048 }); // a few KiB of socket and /proc reads
    out.push(gpu(at, 4000 + (n % 3))); // a MiB or two of jitter
    if (n % 5 === 0)
      out.push({
        kind: 'http',
        at,
        result: n % 10 === 0 ? 'error' : 'refused',
        detail: n % 10 === 0 ? 'timeout' : 'port closed (connection refused)',
      });
    out.push({ kind: 'unit', at, unit: unit() });
    out.push(tick(at));
  }
  return out;
}

describe('stalled holds until a witness moves', () => {
  it('a hang at init: stalled after kimiService.stallSeconds, and still stalled 60 s later while the host only repeats itself', () => {
    let state = hungAtInit();
    const verdicts: string[] = [];
    for (const signal of quietHost(2000, 80_000)) {
      state = reduce(state, signal);
      if (signal.kind === 'tick') verdicts.push(`${signal.at}:${state.verdict}`);
    }
    const firstStalled = verdicts.findIndex((v) => v.endsWith(':stalled'));
    assert.ok(firstStalled >= 0, 'it becomes stalled');
    assert.equal(
      verdicts[firstStalled]!.split(':')[0],
      String(1500 + STALL_MS + 500),
      'at the first tick past kimiService.stallSeconds',
    );
    const after = verdicts.slice(firstStalled);
    assert.deepEqual(
      after.filter((v) => !v.endsWith(':stalled')),
      [],
      'no flip back to loading',
    );
    assert.ok(after.length >= 60, `watched ${after.length} s after the stall`);
  });

  it('/health going from no answer yet to refused is not progress (the flip of the real replays)', () => {
    let state = hungAtInit();
    state = reduce(state, tick(20_000));
    assert.equal(state.verdict, 'stalled');
    // The first /health after the port witness let it through: refused.
    state = reduce(state, { kind: 'http', at: 21_000, result: 'refused', detail: 'port closed (connection refused)' });
    state = reduce(state, tick(22_000));
    assert.equal(state.verdict, 'stalled');
    // A /health that timed out, then refused again.
    state = reduce(state, { kind: 'http', at: 23_000, result: 'error', detail: 'timeout' });
    state = reduce(state, { kind: 'http', at: 24_000, result: 'refused', detail: 'port closed (connection refused)' });
    state = reduce(state, tick(25_000));
    assert.equal(state.verdict, 'stalled');
  });

  it('a reading equal to the last, or GPU memory jitter, is not progress; a real move is, once', () => {
    let state = reduce(hungAtInit(), tick(20_000));
    for (const s of [
      gpu(21_000, 4000),
      gpu(22_000, 4010),
      gpu(23_000, 3990),
      { kind: 'io', at: 24_000, readBytes: 40_100_000 } as Signal,
      tick(25_000),
    ])
      state = reduce(state, s);
    assert.equal(state.verdict, 'stalled');
    state = reduce(state, gpu(26_000, 4000 + 2048)); // 2 GiB allocated: the CUDA context, weights
    assert.equal(state.verdict, 'loading');
    assert.equal(state.lastProgressWitness, 'GPU memory moved');
    for (const s of [gpu(27_000, 6048), tick(26_000 + STALL_MS + 1000)]) state = reduce(state, s);
    assert.equal(state.verdict, 'stalled', 'the same reading again does not keep it loading');
  });

  it('holds while loading weights, capturing CUDA graphs and warming up', () => {
    const phases: Array<{ name: string; signals: Signal[] }> = [
      {
        name: 'loading weights',
        signals: [
          { kind: 'journal', at: 2000, event: { type: 'shards', done: 27, total: 61, percent: 44 }, text: 'shards' },
        ],
      },
      {
        name: 'capturing CUDA graphs',
        signals: [
          {
            kind: 'journal',
            at: 2000,
            event: { type: 'cudaGraphBatches', done: 3, total: 7 },
            text: 'Capturing batches',
          },
        ],
      },
      {
        name: 'warming up',
        signals: [
          { kind: 'journal', at: 2000, event: { type: 'httpUp' }, text: 'Uvicorn running' },
          { kind: 'http', at: 2100, result: 'warming', detail: '/health 503' },
        ],
      },
    ];
    for (const phase of phases) {
      let state = phase.signals.reduce(reduce, hungAtInit());
      assert.equal(state.phase, phase.name);
      const verdicts = new Set<string>();
      for (let at = 3000; at <= 60_000; at += 1000) {
        state = reduce(state, gpu(at, 4000));
        state = reduce(state, { kind: 'cpu', at, cpuSeconds: 10 + at / 100_000 }); // 1 % of a core: idle Python
        if (phase.name === 'warming up')
          state = reduce(state, { kind: 'http', at, result: 'warming', detail: '/health 503' });
        state = reduce(state, tick(at));
        if (at > 2100 + STALL_MS) verdicts.add(state.verdict);
      }
      assert.deepEqual([...verdicts], ['stalled'], phase.name);
    }
  });
});

describe('what is not a move', () => {
  it('an idle tree (a fifth of a core), a new log line that says nothing of the load, a changed last signal', () => {
    let state = reduce(hungAtInit(), tick(20_000));
    assert.equal(state.verdict, 'stalled');
    const quiet: Signal[] = [
      { kind: 'cpu', at: 21_000, cpuSeconds: 50 },
      { kind: 'cpu', at: 31_000, cpuSeconds: 52 }, // 0.2 cores
      {
        kind: 'journal',
        at: 32_000,
        event: { type: 'error', text: 'Health check failed', fatal: false },
        text: 'Health check failed',
      },
      {
        kind: 'journal',
        at: 33_000,
        event: { type: 'systemd', what: 'started', text: 'Started x' },
        text: 'Started x',
      },
      { kind: 'connection', at: 34_000, up: true },
      tick(35_000),
    ];
    for (const s of quiet) {
      state = reduce(state, s);
      assert.equal(state.verdict, 'stalled', `after ${s.kind}`);
    }
    assert.equal(state.lastProgressAt, 1500, 'the last move is still the first look at the witnesses');
  });
});

describe('a busy silence is not stalled', () => {
  it('CPU time growing at a core or more keeps a silent load loading for minutes; when it stops, stalled', () => {
    let state = hungAtInit();
    for (let at = 2000; at <= 300_000; at += 1000) {
      state = reduce(state, { kind: 'cpu', at, cpuSeconds: at / 1000 }); // one core busy (a compiler)
      state = reduce(state, tick(at));
      assert.equal(state.verdict, 'loading', `at ${at}`);
    }
    assert.match(state.lastProgressWitness ?? '', /^CPU busy \(1\.0 cores\)$/);
    for (let at = 301_000; at <= 330_000; at += 1000) {
      state = reduce(state, { kind: 'cpu', at, cpuSeconds: 300 });
      state = reduce(state, tick(at));
    }
    assert.equal(state.verdict, 'stalled');
  });

  it('a busy GPU keeps it loading; bytes read keep it loading', () => {
    let state = hungAtInit();
    for (let at = 2000; at <= 120_000; at += 1000) {
      state = reduce(state, { ...gpu(at, 4000), utilPercent: 97 } as Signal);
      state = reduce(state, tick(at));
    }
    assert.equal(state.verdict, 'loading');
    let bytes = hungAtInit();
    for (let at = 2000; at <= 120_000; at += 1000) {
      bytes = reduce(bytes, { kind: 'io', at, readBytes: 40_000_000 + at * 10_000 }); // 10 MB/s
      bytes = reduce(bytes, tick(at));
    }
    assert.equal(bytes.verdict, 'loading');
    assert.equal(bytes.lastProgressWitness, 'bytes read');
  });
});
