import { strict as assert } from 'node:assert';
import { readRestart } from '../../src/agent/run';
import type { RestartAnswer, ServerSnapshot } from '../../src/fleet/fleetTypes';
import { initialState } from '../../src/monitor/state/loadState';

// The one reading of a restart's answer that the agent tools and the CLI both tell.

const outcome = Promise.resolve(undefined);
const restarted = (issued: boolean, snapshot: Partial<ServerSnapshot>): RestartAnswer => ({
  kind: 'restarted',
  issued,
  outcome,
  snapshot: snapshot as ServerSnapshot,
});

describe('restart reading (agent/run.ts, used by the CLI)', () => {
  it('a followed load is watched, not restarted, with its reason', () => {
    assert.deepEqual(readRestart({ kind: 'watched', reason: 'a load is under way', outcome }), {
      kind: 'watched',
      reason: 'a load is under way',
    });
  });

  it('issued when the host has it, whatever the snapshot says', () => {
    const snapshot = { state: { ...initialState(0), connected: false, connectionError: 'gone' } };
    assert.equal(readRestart(restarted(true, snapshot)).kind, 'issued');
  });

  it('not issued: failed with the refusal, else the failure, else the connection error', () => {
    const failure = { summary: 'the service exited with status 1', lines: [] };
    const refusal = { kind: 'auth' as const, message: 'Authentication failed' };
    const read = (s: Partial<ServerSnapshot>) => readRestart(restarted(false, s));
    assert.deepEqual(read({ refusal, state: { ...initialState(0), failure } }), {
      kind: 'failed',
      problem: 'Authentication failed',
      snapshot: { refusal, state: { ...initialState(0), failure } },
    });
    assert.equal((read({ state: { ...initialState(0), failure } }) as { problem: string }).problem, failure.summary);
    assert.equal(
      (read({ state: { ...initialState(0), connected: false, connectionError: 'reset' } }) as { problem: string })
        .problem,
      'reset',
    );
  });

  it('not issued and nothing wrong known: unconfirmed', () => {
    assert.equal(readRestart(restarted(false, { state: initialState(0) })).kind, 'unconfirmed');
    assert.equal(readRestart(restarted(false, {})).kind, 'unconfirmed');
  });
});
