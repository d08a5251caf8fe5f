import { strict as assert } from 'node:assert';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { wantsCompletionProbe } from '../../src/monitor/state/loadVerdict';
import type { StandIn } from '../../src/host/portOwner';
import { failureMessage } from '../../src/present/messages';
import type { ServerProfile } from '../../src/config/config';
import { runningUnit } from '../util/loadFixtures';

const unit = runningUnit;

const standIn: StandIn = { port: 30001, pid: 777, command: 'python3', service: 'sglang-k26.service', since: 5 };

/** Restarted, tied to the new run, 3 of 8 shards read. */
function loadingWeights(): LoadState {
  const signals: Signal[] = [
    { kind: 'restartRequested', at: 1 },
    { kind: 'tiedToRun', at: 2, unit: unit() },
    { kind: 'journal', at: 3, event: { type: 'shards', done: 3, total: 8, percent: 37 }, text: 'shards 3/8' },
  ];
  return signals.reduce(reduce, initialState(0));
}

const healthy: Signal = { kind: 'http', at: 10, result: 'healthy', detail: '/health 200' };
const completed: Signal = { kind: 'completion', at: 11, ok: true, detail: '1-token completion answered ("x")' };

describe('load state: a stand-in on the port', () => {
  it('its /health 200 and its completion move nothing: the load keeps its phase, named in the last signal', () => {
    let state = reduce(loadingWeights(), { kind: 'listener', at: 5, standIn });
    assert.equal(state.verdict, 'loading');
    assert.equal(state.lastSignal?.text, 'port 30001 is answered by pid 777 (python3), not by sglang-k26.service');
    state = reduce(state, healthy);
    // The same answer again is not a new signal.
    assert.equal(reduce(state, { ...healthy, at: 12 }), state);
    assert.equal(state.verdict, 'loading');
    assert.equal(state.phase, 'loading weights');
    assert.equal(state.http, undefined);
    assert.equal(wantsCompletionProbe(state), false);
    assert.match(state.lastSignal!.text, /\/health 200 \(from pid 777, not counted\)/);
    state = reduce(state, completed);
    assert.equal(state.readyAt, undefined);
    assert.equal(state.verdict, 'loading');
  });

  it('answers taken before the stand-in was named are taken back: warming up goes back to the real phase', () => {
    let state = reduce(loadingWeights(), healthy);
    assert.equal(state.verdict, 'warming up', 'an answer before the sampler said who listens');
    state = reduce(state, { kind: 'listener', at: 12, standIn });
    assert.equal(state.verdict, 'loading');
    assert.equal(state.phase, 'loading weights');
    assert.equal(state.phaseTimes['warming up'], undefined);
  });

  it('a phase the engine itself said is kept when a stand-in is named later', () => {
    let state = reduce(loadingWeights(), healthy);
    state = reduce(state, { kind: 'journal', at: 11, event: { type: 'httpUp' }, text: 'Uvicorn running' });
    state = reduce(state, { kind: 'listener', at: 12, standIn });
    assert.equal(state.verdict, 'warming up');
  });

  it('the stand-in gone and the server on its port: warming up, then ready from the server’s own answers', () => {
    let state = reduce(loadingWeights(), { kind: 'listener', at: 5, standIn });
    state = reduce(state, healthy);
    state = reduce(state, { kind: 'listener', at: 20, standIn: undefined });
    assert.match(state.lastSignal!.text, /port 30001: pid 777 \(python3\) no longer listens/);
    assert.equal(state.standIn, undefined);
    assert.equal(state.verdict, 'loading');
    state = reduce(state, { ...healthy, at: 21 });
    assert.equal(state.verdict, 'warming up');
    assert.equal(wantsCompletionProbe(state), true);
    state = reduce(state, { ...completed, at: 22 });
    assert.equal(state.verdict, 'ready');
    assert.equal(state.readyAt, 22);
  });

  it('the same stand-in seen again is no change; none named before and none now is no change', () => {
    const named = reduce(loadingWeights(), { kind: 'listener', at: 5, standIn });
    assert.equal(reduce(named, { kind: 'listener', at: 6, standIn: { ...standIn, since: 6 } }), named);
    const plain = loadingWeights();
    assert.equal(reduce(plain, { kind: 'listener', at: 6, standIn: undefined }), plain);
  });

  it('the server dying on the occupied port is failed with that cause, and the holder named', () => {
    let state = reduce(loadingWeights(), { kind: 'listener', at: 5, standIn });
    const bind =
      "ERROR: [Errno 98] error while attempting to bind on address ('127.0.0.1', 30001): address already in use";
    state = reduce(state, { kind: 'journal', at: 30, event: { type: 'error', text: bind, fatal: true }, text: bind });
    state = reduce(state, {
      kind: 'unit',
      at: 31,
      unit: unit({ activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 }),
    });
    assert.equal(state.verdict, 'failed');
    const server = { name: 'gpu1', unit: 'sglang-k26' } as ServerProfile;
    const message = failureMessage(server, { end: 'failed', state });
    assert.match(message, /Cause: .*address already in use.*\(port 30001 is answered by pid 777 \(python3\)/, message);
  });
});
