import { strict as assert } from 'node:assert';
import type { NodeProfile, ServerProfile } from '../../src/config/config';
import { MultiNodeSession } from '../../src/fleet/sessions/multiNodeSession';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import type { ServerSession, SessionListener } from '../../src/monitor/watch/session';
import type { WatchOptions, WatchOutcome } from '../../src/monitor/watch/watchTypes';
import type { ServiceStatus } from '../../src/target/target';
import { KILLED, runningUnit } from '../util/loadFixtures';

const unit: ServiceStatus = runningUnit({ mainPid: 7, execMainStartedAt: 1 });
const OPTIONS: WatchOptions = {
  pollIntervalMs: 500,
  stallMs: 60_000,
  loadTimeoutMs: 60_000,
  unreachableTimeoutMs: 60_000,
  steadyIntervalMs: 30_000,
};

/** A node's session as the composite sees it: its watch is driven by the test. */
class FakeNodeSession {
  state: LoadState | undefined;
  watching = false;
  busy = false;
  listener: SessionListener = {};
  options: WatchOptions | undefined;
  mode: string | undefined;
  stops: string[] = [];
  readonly transport = {} as ServerSession['transport'];
  readonly client = {} as ServerSession['client'];
  watch(mode: 'restart' | 'watch', options: WatchOptions, listener: SessionListener): Promise<WatchOutcome> {
    this.mode = mode;
    // As a LoadWatcher does: its first state (restart requested) comes before watch() returns.
    this.state = undefined;
    this.options = options;
    this.listener = listener;
    this.watching = true;
    this.busy = true;
    if (mode === 'restart') this.signal({ kind: 'restartRequested', at: 1 });
    return new Promise(() => undefined);
  }
  signal(...signals: Signal[]): void {
    const previous = this.state ?? initialState(0);
    this.state = signals.reduce(reduce, previous);
    this.listener.onState?.(this.state, previous);
    if (this.state.readyAt !== undefined || this.state.failure) {
      this.busy = false;
      this.listener.onEnd?.({ end: this.state.failure ? 'failed' : 'ready', state: this.state });
    }
  }
  stop(reason: string): boolean {
    this.stops.push(reason);
    const was = this.watching;
    if (was) {
      this.watching = false;
      this.busy = false;
      this.listener.onEnd?.({ end: 'cancelled', state: this.state ?? initialState(0), message: reason });
      this.listener.onClosed?.();
    }
    return was;
  }
  dispose(): void {}
}

function setup() {
  const nodes: NodeProfile[] = [0, 1].map((rank) => ({
    label: `node ${rank} (h${rank})`,
    rank,
    host: `h${rank}`,
    port: undefined,
    username: undefined,
    identityFile: undefined,
    unit: 'sglang.service',
  }));
  const profile = { name: 'k2', host: 'h0', unit: 'sglang.service', nodes } as unknown as ServerProfile;
  const fakes = [new FakeNodeSession(), new FakeNodeSession()];
  const session = new MultiNodeSession(
    profile,
    nodes.map((node, i) => ({ node, session: fakes[i] as unknown as ServerSession })),
  );
  const ends: WatchOutcome[] = [];
  const verdicts: string[] = [];
  const outcome = session.watch('restart', OPTIONS, {
    onEnd: (o) => ends.push(o),
    onState: (s) => verdicts.push(s.verdict),
  });
  return { session, fakes, ends, verdicts, outcome };
}
const start: Signal[] = [
  { kind: 'restartRequested', at: 1 },
  { kind: 'tiedToRun', at: 2, unit },
];
const ready: Signal = { kind: 'completion', at: 5, ok: true, detail: 'ok' };
/** systemd says the node's service failed at `at`: its process exited with status 1. */
const exitedWith1 = (at: number): Signal => ({
  kind: 'unit',
  at,
  unit: { ...unit, activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 },
});

describe('multi-node session (composite of node sessions)', () => {
  it('restarts every node at once; only node rank 0 serves HTTP', () => {
    const { fakes } = setup();
    assert.deepEqual(
      fakes.map((f) => f.mode),
      ['restart', 'restart'],
    );
    assert.equal(fakes[0]!.options?.servesHttp, undefined);
    assert.equal(fakes[1]!.options?.servesHttp, false);
  });

  it('ends ready once every node is ready, not before', async () => {
    const { session, fakes, ends, outcome } = setup();
    fakes[0]!.signal(...start);
    fakes[1]!.signal(...start);
    assert.equal(session.busy, true);
    fakes[0]!.signal(ready);
    assert.equal(ends.length, 0, 'rank 0 alone is not the server');
    assert.notEqual(session.state?.verdict, 'ready');
    fakes[1]!.signal(ready);
    assert.deepEqual(
      ends.map((e) => e.end),
      ['ready'],
    );
    assert.equal((await outcome).end, 'ready');
    assert.equal(session.busy, false);
  });

  it('a failing node ends the load as failed at once, named; another node failing next is not a new end', async () => {
    const { fakes, ends, outcome } = setup();
    fakes[0]!.signal(...start);
    fakes[1]!.signal(...start, exitedWith1(4));
    const end = await outcome;
    assert.equal(end.end, 'failed');
    assert.match(end.message ?? '', /^node 1 \(h1\): the service exited with status 1/);
    assert.equal(ends.length, 1);
    fakes[0]!.signal(exitedWith1(6));
    assert.equal(ends.length, 1, 'still failed: not a new end');
  });

  it("a new watch after a failed load replaces a node's watch that still follows its own load", async () => {
    const { session, fakes, outcome } = setup();
    fakes[0]!.signal(...start);
    fakes[1]!.signal(...start, exitedWith1(4));
    assert.equal((await outcome).end, 'failed');
    assert.equal(session.busy, false, "the server's load has ended: a restart may come");
    assert.equal(fakes[0]!.busy, true, 'node 0 still follows its load');
    const ends: WatchOutcome[] = [];
    void session.watch('restart', OPTIONS, { onEnd: (o) => ends.push(o) });
    assert.deepEqual(fakes[0]!.stops, ['the server is watched anew']);
    assert.deepEqual(
      fakes.map((f) => f.mode),
      ['restart', 'restart'],
    );
    assert.deepEqual(ends, [], "node 1's failure of the last watch is not this watch's end");
    assert.equal(session.state?.verdict, 'restarting');
  });

  it('a node dying after ready is a new end of the steady watch: failed, named', () => {
    const { fakes, ends } = setup();
    for (const f of fakes) f.signal(...start, ready);
    fakes[1]!.signal({
      kind: 'unit',
      at: 9,
      unit: { ...unit, ...KILLED },
    });
    assert.deepEqual(
      ends.map((e) => e.end),
      ['ready', 'failed'],
    );
    assert.match(ends[1]!.message ?? '', /^node 1 \(h1\): the service killed by signal 9 after it was ready/);
  });

  it("a node whose watch gives up (unreachable) ends the server's watch and stops the others", async () => {
    const { fakes, outcome } = setup();
    fakes[0]!.signal(...start);
    fakes[1]!.signal(...start);
    fakes[1]!.watching = false;
    fakes[1]!.listener.onEnd?.({
      end: 'unreachable',
      state: fakes[1]!.state!,
      message: 'the host could not be reached for 300 s',
    });
    const end = await outcome;
    assert.equal(end.end, 'unreachable');
    assert.match(end.message ?? '', /the host could not be reached/);
    assert.equal(fakes[0]!.stops.length, 1);
  });

  it('stop stops every node; the watch closes once all have', async () => {
    const { session, fakes, outcome } = setup();
    fakes[0]!.signal(...start);
    assert.equal(session.stop('user'), true);
    assert.deepEqual(
      fakes.map((f) => f.stops[0]),
      ['user', 'user'],
    );
    assert.equal((await outcome).end, 'cancelled');
    assert.equal(session.watching, false);
  });
});
