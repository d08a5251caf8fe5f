import { strict as assert } from 'node:assert';
import type { ServiceStatus } from '../../src/target/target';
import { decideRestart, type RestartSituation } from '../../src/fleet/restart/restartRule';
import { followedHere } from '../../src/present/words/restartWords';
import { isNewRun, NO_RUN_YET, processKey } from '../../src/monitor/state/unitChange';
import { runningUnit } from '../util/loadFixtures';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const LOAD_TIMEOUT = 30 * 60_000;

const unit = (patch: Partial<ServiceStatus>): ServiceStatus =>
  runningUnit({ execMainStartedAt: NOW - 3 * 3600_000, id: 'sglang.service', ...patch });

const decide = (situation: RestartSituation, force = false) =>
  decideRestart(situation, { force, now: NOW, loadTimeoutMs: LOAD_TIMEOUT });

describe('restart rule (state x request -> follow / restart / refuse)', () => {
  const underWay: [string, RestartSituation, RegExp][] = [
    ['a load this fleet follows', { kind: 'followed' }, /already loading/],
    [
      'the old process stopping (deactivating)',
      { kind: 'unit', unit: unit({ activeState: 'deactivating', subState: 'stop-sigterm' }) },
      /sglang\.service is being stopped or restarted right now/,
    ],
    [
      'the old process gone, the new one not started (activating, no main process)',
      { kind: 'unit', unit: unit({ activeState: 'activating', subState: 'start', mainPid: 0 }) },
      /sglang\.service is being started right now/,
    ],
    [
      'a young process activating',
      { kind: 'unit', unit: unit({ activeState: 'activating', execMainStartedAt: NOW - 40_000 }) },
      /started 40 s ago and is still loading/,
    ],
    [
      'a young active process not serving yet (Type=simple)',
      { kind: 'unit', unit: unit({ execMainStartedAt: NOW - 90_000 }), serving: false },
      /started 90 s ago and is still loading/,
    ],
  ];
  for (const [what, situation, reason] of underWay) {
    it(`${what}: follows; forced: restarts`, () => {
      const decision = decide(situation);
      assert.equal(decision.action, 'follow');
      assert.match((decision as { reason: string }).reason, reason);
      assert.deepEqual(decide(situation, true), { action: 'restart' });
    });
  }

  it('the followed load says so in the words every front shows', () => {
    assert.deepEqual(decide({ kind: 'followed' }), { action: 'follow', reason: followedHere() });
  });

  const idle: [string, RestartSituation][] = [
    ['a process older than the load timeout', { kind: 'unit', unit: unit({}) }],
    [
      'a young process that serves already',
      { kind: 'unit', unit: unit({ execMainStartedAt: NOW - 90_000 }), serving: true },
    ],
    ['a stopped unit', { kind: 'unit', unit: unit({ activeState: 'inactive', subState: 'dead', mainPid: 0 }) }],
    ['a failed unit', { kind: 'unit', unit: unit({ activeState: 'failed', subState: 'failed', mainPid: 0 }) }],
    ['a unit that could not be read (the restart reads it again itself)', { kind: 'unknown' }],
  ];
  for (const [what, situation] of idle) {
    it(`${what}: restarts`, () => assert.deepEqual(decide(situation), { action: 'restart' }));
  }

  it('a young active process whose serving is not known yet: asks /health first', () => {
    assert.deepEqual(decide({ kind: 'unit', unit: unit({ execMainStartedAt: NOW - 90_000 }) }), {
      action: 'ask health',
    });
  });

  it('a refused connection: refused, forced or not', () => {
    const refused: RestartSituation = { kind: 'refused', reason: 'host key changed' };
    assert.deepEqual(decide(refused), { action: 'refuse', reason: 'host key changed' });
    assert.deepEqual(decide(refused, true), { action: 'refuse', reason: 'host key changed' });
  });
});

describe('a restart followed across its start (unitChange)', () => {
  it('a start job with no main process yet is not the new run; the process it starts is', () => {
    const old = unit({ invocationId: 'old' });
    const starting = unit({ activeState: 'activating', subState: 'start', mainPid: 0, invocationId: 'new' });
    const started = unit({ activeState: 'active', mainPid: 5151, invocationId: 'new', execMainStartedAt: NOW });
    assert.equal(isNewRun(processKey(old), starting), false);
    assert.equal(isNewRun(processKey(old), started), true);
    // A watch begun during the start: its InvocationID is already the new run's.
    assert.equal(isNewRun(NO_RUN_YET, starting), false);
    assert.equal(isNewRun(NO_RUN_YET, started), true);
    // ...not a leftover state of the old run, read as the new supervisor starts.
    assert.equal(isNewRun(NO_RUN_YET, unit({ activeState: 'inactive', subState: 'dead', mainPid: 0 })), false);
  });

  it('a run that crashed and waits for its restart (systemd auto-restart, Docker restarting) is a new run, ended', () => {
    const old = unit({ invocationId: 'old' });
    const crashed = (subState: string) =>
      unit({ activeState: 'activating', subState, mainPid: 0, invocationId: 'new', execMainStartedAt: NOW });
    assert.equal(isNewRun(processKey(old), crashed('auto-restart')), true);
    assert.equal(isNewRun(processKey(old), crashed('auto-restart-queued')), true);
    assert.equal(isNewRun(processKey(crashed('auto-restart')), crashed('auto-restart')), false, 'the same run');
    // A watch begun while it waits: no run of this watch's yet (the next live or failed one is).
    assert.equal(isNewRun(NO_RUN_YET, crashed('auto-restart')), false);
  });
});
