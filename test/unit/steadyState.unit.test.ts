import { strict as assert } from 'node:assert';
import type { ServiceStatus } from '../../src/target/target';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import { UNHEALTHY_AFTER_FAILURES, type LoadState, type Signal } from '../../src/monitor/state/loadStateTypes';
import { isNewRun, processKey, unitChangeAfterSettled } from '../../src/monitor/state/unitChange';
import { journalProblem } from '../../src/target/journalctl';
import { KILLED, runningUnit, foldSignals } from '../util/loadFixtures';

const unit = (overrides: Partial<ServiceStatus> = {}): ServiceStatus =>
  runningUnit({ invocationId: 'run-1', ...overrides });

const run = foldSignals;

function readyState(): LoadState {
  return run([
    { kind: 'restartRequested', at: 1 },
    { kind: 'tiedToRun', at: 2, unit: unit() },
    { kind: 'journal', at: 3, event: { type: 'ready' }, text: 'The server is fired up and ready to roll!' },
    { kind: 'completion', at: 4, ok: true, detail: 'ok' },
  ]);
}

const health = (at: number, ok: boolean): Signal => ({
  kind: 'http',
  at,
  result: ok ? 'healthy' : 'error',
  detail: ok ? '/health 200' : '/health 503',
});

describe('steady state after ready', () => {
  it('a process that exits after ready is failed, with the exit and the last error lines', () => {
    let state = readyState();
    assert.equal(state.verdict, 'ready');
    state = reduce(state, {
      kind: 'journal',
      at: 10,
      event: { type: 'error', text: 'CUDA error', fatal: true },
      text: 'RuntimeError: CUDA error: an illegal memory access',
    });
    state = reduce(state, {
      kind: 'unit',
      at: 11,
      unit: unit(KILLED),
    });
    assert.equal(state.verdict, 'failed');
    assert.match(state.failure!.summary, /killed by signal 9 after it was ready/);
    assert.deepEqual(state.failure!.lines, ['RuntimeError: CUDA error: an illegal memory access']);
    assert.equal(state.confirmedAt, 11);
  });

  it(`/health failing ${UNHEALTHY_AFTER_FAILURES} times in a row is unhealthy; one success is ready again`, () => {
    let state = readyState();
    for (let i = 1; i < UNHEALTHY_AFTER_FAILURES; i++) {
      state = reduce(state, health(10 + i, false));
      assert.equal(state.verdict, 'ready', `${i} failure(s) are not enough`);
    }
    state = reduce(state, health(20, false));
    assert.equal(state.verdict, 'unhealthy');
    state = reduce(state, health(21, true));
    assert.equal(state.verdict, 'ready');
    assert.equal(state.healthFailures, 0);
    assert.equal(state.confirmedAt, 21);
  });

  it('a dropped connection after ready is unreachable, then ready again when it comes back', () => {
    let state = readyState();
    state = reduce(state, { kind: 'connection', at: 30, up: false, error: 'keepalive timeout', errorKind: 'timeout' });
    assert.equal(state.verdict, 'unreachable');
    assert.equal(state.connectionErrorKind, 'timeout');
    state = reduce(state, { kind: 'connection', at: 40, up: true });
    assert.equal(state.verdict, 'ready');
  });

  it('journal readability is kept whatever the load state', () => {
    let state = reduce(initialState(0), { kind: 'journalStatus', at: 1, readable: false, detail: 'not readable' });
    assert.deepEqual(state.journal, { readable: false, detail: 'not readable' });
    state = run(
      [
        { kind: 'restartRequested', at: 1 },
        { kind: 'tiedToRun', at: 2, unit: unit() },
      ],
      state,
    );
    assert.equal(state.journal?.readable, false);
    state = reduce(readyState(), { kind: 'journalStatus', at: 5, readable: true });
    assert.equal(state.verdict, 'ready');
    assert.equal(state.journal?.readable, true);
  });
});

describe('restart: stopping is a state', () => {
  it('the old process stopping shows as stopping, the gap as restarting; old unit states are not failures', () => {
    let state = reduce(initialState(0), { kind: 'restartRequested', at: 1 });
    state = reduce(state, {
      kind: 'unit',
      at: 2,
      unit: unit({ activeState: 'deactivating', subState: 'stop-sigterm' }),
    });
    assert.equal(state.verdict, 'stopping');
    assert.equal(state.failure, undefined);
    state = reduce(state, {
      kind: 'unit',
      at: 3,
      unit: unit({ activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 }),
    });
    assert.equal(state.verdict, 'restarting', 'the old run failing on its way out is not this load failing');
    assert.equal(state.failure, undefined);
    state = reduce(state, { kind: 'tiedToRun', at: 4, unit: unit({ mainPid: 5000, invocationId: 'run-2' }) });
    assert.equal(state.verdict, 'loading');
  });

  it('a stop by someone else that starts nothing is stopped', () => {
    let state = reduce(initialState(0), { kind: 'restartRequested', at: 1, external: true });
    state = reduce(state, {
      kind: 'unit',
      at: 2,
      unit: unit({ activeState: 'deactivating', subState: 'stop-sigterm' }),
    });
    assert.equal(state.verdict, 'stopping');
    state = reduce(state, {
      kind: 'unit',
      at: 3,
      unit: unit({ activeState: 'inactive', subState: 'dead', mainPid: 0 }),
    });
    assert.equal(state.verdict, 'stopped');
    assert.equal(state.restartedBy, 'someone else');
  });
});

describe('unit changes after a settled load', () => {
  it('tells a new run by its InvocationID, else by start time and PID', () => {
    assert.equal(processKey(unit()), 'run-1');
    assert.equal(processKey(unit({ invocationId: undefined, execMainStartedMonotonicUs: 77, mainPid: 9 })), '77:9');
    assert.equal(isNewRun('run-1', unit()), false);
    assert.equal(isNewRun('run-1', unit({ invocationId: 'run-2', mainPid: 5000 })), true);
    assert.equal(
      isNewRun('run-1', unit({ invocationId: 'run-2', activeState: 'deactivating' })),
      false,
      'deactivating is the old run',
    );
  });

  it('after ready: same run, a new run, stopping, stopped by someone, or a crash for the reducer', () => {
    const state = readyState();
    assert.equal(unitChangeAfterSettled(state, unit(), false), 'same');
    assert.equal(unitChangeAfterSettled(state, unit({ invocationId: 'run-2', mainPid: 5000 }), false), 'new run');
    assert.equal(
      unitChangeAfterSettled(state, unit({ activeState: 'deactivating', subState: 'stop-sigterm' }), false),
      'stopping',
    );
    const dead = unit({ activeState: 'inactive', subState: 'dead', mainPid: 0 });
    assert.equal(unitChangeAfterSettled(state, dead, true), 'stopped', 'a stop was seen: stopped on purpose');
    assert.equal(unitChangeAfterSettled(state, dead, false), 'same', 'no stop seen: the reducer calls it a failure');
  });

  it('after a failure only a new run matters', () => {
    const failed = reduce(readyState(), {
      kind: 'unit',
      at: 11,
      unit: unit({ activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 }),
    });
    assert.equal(failed.verdict, 'failed');
    assert.equal(
      unitChangeAfterSettled(failed, unit({ activeState: 'failed', subState: 'failed', mainPid: 0 }), false),
      'same',
    );
    assert.equal(
      unitChangeAfterSettled(
        failed,
        unit({ activeState: 'activating', subState: 'start', mainPid: 6000, invocationId: 'run-3' }),
        false,
      ),
      'new run',
    );
  });
});

describe('journalctl complaints', () => {
  it('recognises the hint, "no journal files", and a non-zero exit; says nothing when all is well', () => {
    assert.match(
      journalProblem(['Hint: You are currently not seeing messages from other users and the system.'], undefined)!,
      /not readable/,
    );
    assert.match(journalProblem(['No journal files were opened due to insufficient permissions.'], 1)!, /not readable/);
    assert.match(journalProblem(['Failed to add match'], 1)!, /exited with status 1: Failed to add match/);
    assert.equal(journalProblem([], 0), undefined);
    assert.equal(journalProblem([], undefined), undefined);
  });
});
