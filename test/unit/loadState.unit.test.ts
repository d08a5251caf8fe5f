import { strict as assert } from 'node:assert';
import { reduce } from '../../src/monitor/state/loadState';
import type { Signal } from '../../src/monitor/state/loadStateTypes';
import { wantsCompletionProbe } from '../../src/monitor/state/loadVerdict';
import { formatDuration } from '../../src/util/duration';
import { runningUnit, foldSignals, shardsLine } from '../util/loadFixtures';

const unit = runningUnit;

const run = foldSignals;

const restarted: Signal[] = [
  { kind: 'restartRequested', at: 1 },
  { kind: 'tiedToRun', at: 2, unit: unit() },
];

describe('load state reducer', () => {
  it('goes restarting -> loading with a growing percentage -> warming up -> ready', () => {
    let state = run([{ kind: 'restartRequested', at: 1 }]);
    assert.equal(state.verdict, 'restarting');
    state = run(restarted.slice(1), state);
    assert.equal(state.verdict, 'loading');
    const seen: number[] = [];
    for (const done of [1, 16, 32, 64]) {
      state = reduce(state, {
        kind: 'journal',
        at: 10 + done,
        event: { type: 'shards', done, total: 64, percent: Math.floor((done / 64) * 100) },
        text: 'shards',
      });
      assert.equal(state.verdict, 'loading');
      seen.push(state.progress!);
    }
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      seen,
      'progress only grows',
    );
    state = reduce(state, { kind: 'journal', at: 100, event: { type: 'httpUp' }, text: 'Uvicorn running' });
    assert.equal(state.verdict, 'warming up');
    state = reduce(state, { kind: 'http', at: 101, result: 'warming', detail: '/health 503' });
    assert.equal(state.verdict, 'warming up');
    assert.equal(wantsCompletionProbe(state), false);
    state = reduce(state, {
      kind: 'journal',
      at: 102,
      event: { type: 'ready' },
      text: 'The server is fired up and ready to roll!',
    });
    assert.equal(state.verdict, 'warming up', 'the log line alone is not enough');
    assert.equal(wantsCompletionProbe(state), true);
    state = reduce(state, { kind: 'completion', at: 103, ok: true, detail: 'ok' });
    assert.equal(state.verdict, 'ready');
    assert.equal(state.readyAt, 103);
  });

  it('is not ready when the completion fails, even with /health 200', () => {
    let state = run([...restarted, { kind: 'http', at: 5, result: 'healthy', detail: '/health 200' }]);
    assert.equal(wantsCompletionProbe(state), true);
    state = reduce(state, { kind: 'completion', at: 6, ok: false, detail: 'error JSON mentions choices' });
    assert.notEqual(state.verdict, 'ready');
  });

  it('a unit that fails is failed, with exit status and the error lines', () => {
    const state = run([
      ...restarted,
      {
        kind: 'journal',
        at: 3,
        event: { type: 'error', text: 'torch.OutOfMemoryError: CUDA out of memory', fatal: true },
        text: 'torch.OutOfMemoryError: CUDA out of memory',
      },
      {
        kind: 'unit',
        at: 4,
        unit: unit({
          activeState: 'failed',
          subState: 'failed',
          mainPid: 0,
          result: 'exit-code',
          execMainStatus: 1,
          execMainCode: 'exited',
        }),
      },
    ]);
    assert.equal(state.verdict, 'failed');
    assert.match(state.failure!.summary, /exited with status 1/);
    assert.deepEqual(state.failure!.lines, ['torch.OutOfMemoryError: CUDA out of memory']);
  });

  it('a unit restarted by systemd is a crash loop, not loading', () => {
    const state = run([...restarted, { kind: 'unit', at: 5, unit: unit({ mainPid: 5000, nRestarts: 1 }) }]);
    assert.equal(state.verdict, 'failed');
    assert.match(state.failure!.summary, /crash loop/);
  });

  describe('a crash loop first seen with the next run already started (systemd zeroed its exit fields)', () => {
    const nextRun = unit({ mainPid: 5000, nRestarts: 1, execMainStatus: 0 });
    const exitLine = 'sglang-k26.service: Main process exited, code=exited, status=1/FAILURE';

    it("names the crashed run's exit from the journal's exit line, never the next run's zeros", () => {
      const state = run([
        ...restarted,
        { kind: 'journal', at: 4, event: { type: 'error', text: exitLine, fatal: true }, text: exitLine },
        { kind: 'unit', at: 5, unit: nextRun },
      ]);
      assert.equal(
        state.failure!.summary,
        'the service crashed and systemd restarted it (exited with status 1; NRestarts=1: crash loop)',
      );
    });

    it('says no exit status when the exit line was not seen', () => {
      const state = run([...restarted, { kind: 'unit', at: 5, unit: nextRun }]);
      assert.equal(state.failure!.summary, 'the service crashed and systemd restarted it (NRestarts=1: crash loop)');
    });

    it('a signal in the exit line is said as one', () => {
      const killed = 'sglang-k26.service: Main process exited, code=killed, status=9/KILL';
      const state = run([
        ...restarted,
        { kind: 'journal', at: 4, event: { type: 'error', text: killed, fatal: true }, text: killed },
        { kind: 'unit', at: 5, unit: nextRun },
      ]);
      assert.match(state.failure!.summary, /\(killed by signal 9; NRestarts=1: crash loop\)/);
    });
  });

  it('a restart whose process is gone at once is failed', () => {
    const state = run([
      { kind: 'restartRequested', at: 1 },
      {
        kind: 'tiedToRun',
        at: 2,
        unit: unit({ activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 2 }),
      },
    ]);
    assert.equal(state.verdict, 'failed');
  });

  it('watching a load under way shows no percentage until the journal says where it is', () => {
    let state = run([{ kind: 'tiedToRun', at: 2, unit: unit() }]);
    assert.equal(state.verdict, 'loading');
    assert.equal(state.progress, undefined);
    state = reduce(state, shardsLine(3, 32, 's'));
    assert.equal(Math.round(state.progress! * 100), 45);
  });

  it('watching a stopped unit says stopped', () => {
    const state = run([
      { kind: 'tiedToRun', at: 2, unit: unit({ activeState: 'inactive', subState: 'dead', mainPid: 0 }) },
    ]);
    assert.equal(state.verdict, 'stopped');
  });

  it('a lost connection is unreachable, then back to the phase and percentage it had', () => {
    let state = run([...restarted, shardsLine(3, 32, 's')]);
    const progress = state.progress;
    state = reduce(state, { kind: 'connection', at: 4, up: false, error: 'ECONNRESET' });
    assert.equal(state.verdict, 'unreachable');
    state = reduce(state, { kind: 'connection', at: 9, up: true });
    assert.equal(state.verdict, 'loading');
    assert.equal(state.progress, progress);
  });

  it('never says ready while unreachable', () => {
    let state = run([...restarted, { kind: 'journal', at: 3, event: { type: 'ready' }, text: 'fired up' }]);
    state = reduce(state, { kind: 'connection', at: 4, up: false });
    assert.equal(wantsCompletionProbe(state), false);
    state = reduce(state, { kind: 'completion', at: 5, ok: true, detail: 'late answer' });
    assert.notEqual(state.verdict, 'ready');
  });

  it('no progress for the stall time while alive is stalled; progress clears it', () => {
    let state = run([...restarted, { kind: 'unit', at: 2, unit: unit() }]);
    state = reduce(state, { kind: 'tick', at: 50_000, stallMs: 120_000 });
    assert.equal(state.verdict, 'loading');
    state = reduce(state, { kind: 'tick', at: 130_000, stallMs: 120_000 });
    assert.equal(state.verdict, 'stalled');
    state = reduce(state, shardsLine(131_000, 3, 's'));
    assert.equal(state.verdict, 'loading');
  });

  it('a replayed journal (after a reconnect) does not move progress backwards', () => {
    let state = run([...restarted, shardsLine(3, 40, 's')]);
    const progress = state.progress;
    state = reduce(state, {
      kind: 'journal',
      at: 4,
      event: { type: 'phase', phase: 'starting' },
      text: 'Init torch distributed begin.',
    });
    state = reduce(state, shardsLine(5, 10, 's'));
    assert.equal(state.phase, 'loading weights');
    assert.equal(state.progress, progress);
  });

  it('formats durations as the notification shows them', () => {
    assert.equal(formatDuration(582_000), '9m 42s');
    assert.equal(formatDuration(42_000), '42s');
    assert.equal(formatDuration(3_780_000), '1h 3m');
  });
});

describe('a restart by someone else, between its stop and its start', () => {
  // systemd turns a restart job into a start job once the stop is done: for that moment the unit
  // is inactive/dead with no process, and its Job is still set.
  const between = (jobPending: boolean) =>
    foldSignals([
      { kind: 'restartRequested', at: 1, external: true },
      {
        kind: 'unit',
        at: 2,
        unit: runningUnit({
          activeState: 'inactive',
          subState: 'dead',
          mainPid: 0,
          result: 'success',
          ...(jobPending ? { jobPending } : {}),
        }),
      },
    ]);

  it('with the restart job still pending: restarting, not stopped', () => {
    assert.equal(between(true).verdict, 'restarting');
  });

  it('with no job: the unit was stopped', () => {
    assert.equal(between(false).verdict, 'stopped');
  });
});
