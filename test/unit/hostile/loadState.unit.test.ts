import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
import { initialState, reduce } from '../../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../../src/monitor/state/loadStateTypes';
import type { ServiceStatus } from '../../../src/target/target';
import { JournalReader } from '../../../src/engine/logReader';
import { parseShow, toServiceStatus } from '../../../src/target/systemd/systemd';
import { check, junk, MiB, numberWords, repeatTo, retainedHeap, TEN_MB, wordSoup } from './hostileInputs';
import { runningUnit } from '../../util/loadFixtures';

const ALIVE: ServiceStatus = runningUnit({ execMainStartedAt: 1 });

/** Lines that read as progress, errors, ready lines and HTTP up, with huge numbers in them. */
const LINE = wordSoup([
  '[2025-03-08 12:29:21 TP0] ',
  'Load weight begin.',
  'Multi-thread loading shards: ',
  '100% Completed | ',
  '9'.repeat(400),
  '/',
  '0',
  '1',
  'Capture cuda graph begin',
  'Capturing batches (bs=1): ',
  '%|',
  '|',
  'Capture cuda graph end.',
  'KV Cache is allocated. #tokens: ',
  'Uvicorn running on http://x:1',
  'The server is fired up and ready to roll!',
  'Traceback (most recent call last):',
  'RuntimeError: x',
  'CUDA out of memory',
  'Killed',
  'Available KV cache memory: -',
  'sglang.service: Main process exited, code=exited, status=0/SUCCESS',
  'Started x',
  'Stopping x',
  ' ',
  '\r',
]);
const longLine = fc.constantFrom(
  repeatTo('RuntimeError: x', 1_000_000),
  `Traceback (most recent call last):${repeatTo(' ', 100_000)}`,
);

const unit = fc.oneof(
  fc.constant(ALIVE),
  fc
    .record({
      ActiveState: fc.constantFrom('active', 'activating', 'failed', 'inactive', 'deactivating'),
      SubState: fc.constantFrom('running', 'auto-restart', 'dead'),
      MainPID: fc.oneof(fc.constantFrom('4242', '0', '7'), numberWords),
      NRestarts: fc.oneof(fc.constantFrom('0', '1'), numberWords),
      ExecMainStatus: numberWords,
      ExecMainStartTimestamp: fc.oneof(numberWords, fc.constant('@' + '9'.repeat(400))),
      LoadState: fc.constantFrom('loaded', 'not-found'),
    })
    .map((p) =>
      toServiceStatus(
        parseShow(
          Object.entries(p)
            .map(([k, v]) => `${k}=${v}`)
            .join('\n'),
        ),
      ),
    ),
);
const finiteNumber = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true, min: 0, max: 1e15 }),
  fc.constantFrom(0, 1, 2 ** 53),
);

/** Every signal kind but a passing completion, with host-fed content. */
function signalsWithout(completionOk: boolean): fc.Arbitrary<Array<{ s: Signal } | { line: string }>> {
  const at = fc.integer({ min: 0, max: 100_000_000 });
  const signal: fc.Arbitrary<Signal> = fc.oneof(
    at.map((a): Signal => ({ kind: 'restartRequested', at: a })),
    fc.tuple(at, unit).map(([a, u]): Signal => ({ kind: 'tiedToRun', at: a, unit: u })),
    fc.tuple(at, unit).map(([a, u]): Signal => ({ kind: 'unit', at: a, unit: u })),
    fc
      .tuple(
        at,
        fc.constantFrom('refused', 'warming', 'healthy', 'error') as fc.Arbitrary<
          'refused' | 'warming' | 'healthy' | 'error'
        >,
        junk,
      )
      .map(([a, r, d]): Signal => ({ kind: 'http', at: a, result: r, detail: d.slice(0, 300) })),
    fc
      .tuple(at, fc.boolean(), junk)
      .map(([a, ok, d]): Signal => ({ kind: 'completion', at: a, ok: ok && completionOk, detail: d })),
    fc.tuple(at, fc.boolean(), junk).map(([a, up, e]): Signal => ({ kind: 'connection', at: a, up, error: e })),
    fc.tuple(at, fc.integer({ min: 1, max: 100_000 })).map(([a, ms]): Signal => ({ kind: 'tick', at: a, stallMs: ms })),
    fc
      .tuple(at, finiteNumber, finiteNumber, finiteNumber)
      .map(([a, r, c, t]): Signal => ({ kind: 'io', at: a, readBytes: r, coldBytes: c, totalBytes: t })),
    fc.tuple(at, finiteNumber, finiteNumber).map(
      ([a, u, t]): Signal => ({
        kind: 'gpu',
        at: a,
        usedMiB: u,
        totalMiB: t,
        perGpu: [{ index: 0, usedMiB: u, totalMiB: t }],
      }),
    ),
    fc
      .tuple(at, fc.boolean(), junk)
      .map(([a, r, d]): Signal => ({ kind: 'journalStatus', at: a, readable: r, detail: d })),
  );
  return fc.array(
    fc.oneof(
      signal.map((s) => ({ s })),
      fc.oneof(LINE, junk, longLine).map((line) => ({ line })),
    ),
    { maxLength: 40 },
  );
}

/** Folds the items as the watcher does: journal lines through one JournalReader. */
function fold(items: ReadonlyArray<{ s: Signal } | { line: string }>): { state: LoadState; completionOk: boolean } {
  let state = reduce(initialState(0), { kind: 'tiedToRun', at: 0, unit: ALIVE });
  const reader = new JournalReader();
  let completionOk = false;
  let at = 0;
  for (const item of items) {
    at += 1000;
    if ('s' in item) {
      if (item.s.kind === 'completion' && item.s.ok) completionOk = true;
      state = reduce(state, item.s);
    } else {
      for (const event of reader.read(item.line, at))
        state = reduce(state, { kind: 'journal', at, event, text: item.line });
    }
    check1(state);
  }
  return { state, completionOk };
}

function check1(s: LoadState): void {
  // While a load runs: its first 12 error lines (the root cause) and its last 12.
  assert.ok(s.recentErrors.length <= 24, `${s.recentErrors.length} errors kept`);
  for (const e of [...s.recentErrors, ...(s.failure?.lines ?? []), s.lastSignal?.text ?? ''])
    assert.ok(e.length <= 1_000, `an error text of ${e.length} characters kept`);
  if (s.progress !== undefined) assert.ok(s.progress >= 0 && s.progress <= 1, `progress ${s.progress}`);
  if (s.eta !== undefined) assert.ok(Number.isFinite(s.eta.readyAt), `eta ${s.eta.readyAt}`);
  if (s.readRate !== undefined) assert.ok(!Number.isNaN(s.readRate), 'read rate NaN');
}

describe('hostile input: the load state fed random signals and journal lines', () => {
  it('never `ready` without a passing completion, whatever the journal, HTTP and unit say', () => {
    check(
      1751,
      fc.property(signalsWithout(false), (items) => {
        const { state } = fold(items);
        assert.notEqual(state.verdict, 'ready');
        assert.equal(state.readyAt, undefined);
      }),
    );
  });

  it('ready only after a passing completion; errors bounded in count and length, progress within 0..1, finite ETA', () => {
    check(
      1752,
      fc.property(signalsWithout(true), (items) => {
        const { state, completionOk } = fold(items);
        if (state.verdict === 'ready' || state.readyAt !== undefined) assert.ok(completionOk);
      }),
    );
  });

  it('shard and graph counts of 400 digits keep progress within 0..1', () => {
    const { state } = fold([
      { line: '[2025-03-08 12:29:21 TP0] Load weight begin.' },
      {
        line: `[2025-03-08 12:29:21 TP0] Multi-thread loading shards: 100% Completed | ${'9'.repeat(400)}/${'9'.repeat(400)} [00:01<00:00]`,
      },
      {
        line: `[2025-03-08 12:29:21 TP0] Capturing batches (bs=1): 100%|██| ${'9'.repeat(400)}/${'9'.repeat(400)} [00:01<00:00]`,
      },
    ]);
    assert.ok(state.progress !== undefined && state.progress >= 0 && state.progress <= 1, `progress ${state.progress}`);
  });

  it('10 MB error lines keep no more than their clipped text (memory of the state stays bounded)', function () {
    this.timeout(60_000);
    let state = reduce(initialState(0), { kind: 'tiedToRun', at: 0, unit: ALIVE });
    const before = retainedHeap();
    for (let i = 0; i < 30; i++) {
      const big = `RuntimeError: ${i} ${repeatTo('x', TEN_MB)}`;
      state = reduce(state, {
        kind: 'journal',
        at: i,
        event: { type: 'error', text: big, fatal: false },
        text: big.slice(0, 300),
      });
    }
    const grown = retainedHeap() - before;
    assert.ok(grown < 16 * MiB, `the state keeps ${Math.round(grown / MiB)} MiB after 30 lines of 10 MB`);
    // The first 12 (the root cause) and the last 12, while the load runs.
    assert.equal(state.recentErrors.length, 24);
  });
});
