import { strict as assert } from 'node:assert';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import type { ServiceStatus } from '../../src/target/target';
import { queuedEta, queuedEtaLine } from '../../src/present/queueWords';
import { wholeLoadForecast } from '../../src/monitor/eta/etaLoad';
import { statusTooltip } from '../../src/fronts/vscode/status/statusBarText';
import { hourMinute } from '../../src/util/duration';

const now = Date.UTC(2026, 11, 6, 13, 0, 0);
const start = Date.UTC(2026, 11, 6, 14, 5, 0);

/** A run waiting in a scheduler's queue (a Slurm job PENDING), with what the scheduler and history say. */
function queued(estimatedStartAt: number | undefined, prior?: LoadState['prior']): LoadState {
  const unit: ServiceStatus = {
    loadState: 'loaded',
    activeState: 'activating',
    subState: 'queued',
    mainPid: 0,
    nRestarts: 0,
    result: 'success',
    dropInPaths: [],
    needDaemonReload: false,
    manager: 'scheduler',
    managerName: 'Slurm',
    mainPidElsewhere: true,
    queued: { reason: 'Resources', ...(estimatedStartAt !== undefined ? { estimatedStartAt } : {}) },
  };
  return { ...initialState(now - 60_000), verdict: 'restarting', unit, prior };
}

const HISTORY = {
  loads: 3,
  totalBytes: 60e9,
  coldBps: 1e9,
  warmBps: 3e9,
  startingMs: 20_000,
  afterWeightsMs: 40_000,
  afterShardsMs: 0,
} as const;

describe('the ETA of a queued run counts the wait in the queue', () => {
  it("the scheduler's start plus the whole load as history has it", () => {
    const state = queued(start, HISTORY);
    const load = wholeLoadForecast(state);
    assert.ok(load);
    const eta = queuedEta(state, now);
    assert.equal(eta?.kind, 'estimate');
    if (eta?.kind !== 'estimate') return;
    assert.equal(eta.readyAt, start + load.midMs);
    // 20 s starting, 60 GB at 1 GB/s, 40 s after the weights: two minutes after the start.
    assert.equal(eta.loadMs, 120_000);
    assert.ok(eta.lowAt <= eta.readyAt && eta.readyAt <= eta.highAt);
    assert.equal(
      queuedEtaLine(state, now),
      `ETA: ready ~${hourMinute(start + 120_000)} (in 1h 7m), counting the wait in the queue: the scheduler's start at ${hourMinute(start)} (in 1h 5m), then a load of about 2m 0s (from this server's 3 previous loads)`,
    );
    // The tooltip says it in place of the load's own ETA; the report's seconds are the same estimate.
    const tooltip = statusTooltip({ server: undefined, state, watching: true }, now);
    assert.match(tooltip, /\nETA: ready ~\d\d:\d\d \(in 1h 7m\), counting the wait in the queue/);
  });

  it('the start known, the load not (no model size, no history): not before the start, the rest said unknown', () => {
    assert.equal(
      queuedEtaLine(queued(start), now),
      `ETA: not before the scheduler's start at ${hourMinute(start)} (in 1h 5m); how long the load then takes is not known yet`,
    );
  });

  it('no estimate of the start: the wait is said unknown, not invented', () => {
    assert.deepEqual(queuedEta(queued(undefined, HISTORY), now), { kind: 'unknown', loadMs: 120_000 });
    assert.equal(
      queuedEtaLine(queued(undefined, HISTORY), now),
      'ETA: unknown: the wait in the queue is not known (the scheduler has no estimate of the start yet); once it starts, the load takes about 2m 0s',
    );
    // A start already past is no estimate either (the scheduler's pass has not caught up).
    assert.equal(queuedEta(queued(now - 1_000), now)?.kind, 'unknown');
    assert.match(
      statusTooltip({ server: undefined, state: queued(undefined), watching: true }, now),
      /ETA: unknown: the wait in the queue is not known/,
    );
  });

  it('a run that is not queued has no queued ETA', () => {
    const running = { ...queued(start, HISTORY), unit: { ...queued(start).unit!, queued: undefined, mainPid: 42 } };
    assert.equal(queuedEta(running, now), undefined);
    assert.equal(queuedEtaLine({ ...queued(start), verdict: 'failed' }, now), undefined);
  });
});
