import { strict as assert } from 'node:assert';
import { commandDeadline } from '../../src/transport/commandDeadline';
import { ConnectionLife, downMessage, endAfterStops } from '../../src/transport/connectionLife';
import { AuthError, CommandAbortedError, CommandTimeoutError, ConnectionClosedError } from '../../src/transport/errors';
import type { Timers } from '../../src/transport/ssh/sshOptions';
import type { ConnectionState } from '../../src/transport/transport';

/** Timers run by hand: `due()` lists the delays armed and not cleared; `fire()` runs them all. */
class HandTimers implements Timers {
  private next = 0;
  private readonly armed = new Map<number, { fn: () => void; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.next;
    this.armed.set(id, { fn, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.armed.delete(handle as number);
  }
  due(): number[] {
    return [...this.armed.values()].map((t) => t.ms);
  }
  fire(): void {
    const all = [...this.armed.values()];
    this.armed.clear();
    for (const t of all) t.fn();
  }
}

/** A life whose dial answers from a script: a link (a number) or an error, in order. */
function scripted(answers: (number | Error)[], initial = 1000, max = 8000) {
  const timers = new HandTimers();
  const log: string[] = [];
  const states: ConnectionState['kind'][] = [];
  const watched: number[] = [];
  const discarded: number[] = [];
  let gate: Promise<void> = Promise.resolve();
  const life = new ConnectionLife<number>({
    description: 'me@gpu',
    timers,
    log: (m) => log.push(m),
    backoffInitialMs: initial,
    backoffMaxMs: max,
    dial: async () => {
      await gate;
      const a = answers.shift();
      if (a === undefined) throw new Error('no answer left');
      if (a instanceof Error) throw a;
      return a;
    },
    beforeFirstAttempt: () => log.push('config said'),
    onConnected: (link) => watched.push(link),
    connectedNote: (link) => `(link ${link})`,
    discard: (link) => discarded.push(link),
  });
  life.onStateChange((s) => states.push(s.kind));
  return {
    life,
    timers,
    log,
    states,
    watched,
    discarded,
    hold(p: Promise<void>) {
      gate = p;
    },
  };
}

/** Lets the dial's promise chain run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('connection life', () => {
  it('connects once for concurrent callers, says so, and hands the link to ready()', async () => {
    const t = scripted([7]);
    await Promise.all([t.life.connect(), t.life.connect(), t.life.ready()]);
    assert.equal(await t.life.ready(), 7);
    assert.equal(t.life.handshakes, 1);
    assert.deepEqual(t.watched, [7]);
    assert.deepEqual(t.log, ['config said', 'Connecting to me@gpu (attempt 1)', 'Connected to me@gpu (link 7)']);
    assert.deepEqual(t.states, ['connecting', 'connected']);
  });

  it('a first failure is down without a retry; ready() then fails fast with the reason', async () => {
    const t = scripted([new AuthError('Authentication failed for me@gpu')]);
    await assert.rejects(t.life.connect(), AuthError);
    assert.deepEqual(t.life.state, {
      kind: 'down',
      error: 'Authentication failed for me@gpu',
      errorKind: 'auth',
    });
    assert.deepEqual(t.timers.due(), [], 'no retry of a connection that never came up');
    await assert.rejects(t.life.ready(), {
      kind: 'closed',
      message: 'SSH connection to me@gpu is down: Authentication failed for me@gpu',
    });
  });

  it('a drop is said, retried with a doubling backoff up to its cap, and a reconnect resets the backoff', async () => {
    const t = scripted([1, new ConnectionClosedError('refused'), new ConnectionClosedError('refused'), 2], 1000, 2000);
    await t.life.connect();
    assert.equal(t.life.lost(1, 'keepalive timeout'), true);
    assert.equal(t.life.lost(1, 'again'), false, 'a link already lost is not lost twice');
    assert.equal(t.log.at(-1), 'Connection to me@gpu lost: keepalive timeout');
    assert.deepEqual(t.life.state, { kind: 'down', error: 'Connection lost: keepalive timeout', retryInMs: 1000 });
    await assert.rejects(t.life.ready(), {
      message: 'SSH connection to me@gpu is down: Connection lost: keepalive timeout (retrying in 1 s)',
    });
    assert.deepEqual(t.timers.due(), [1000]);
    t.timers.fire();
    await settle();
    assert.deepEqual(t.life.state, { kind: 'down', error: 'refused', errorKind: 'closed', retryInMs: 2000 });
    t.timers.fire();
    await settle();
    assert.deepEqual(t.timers.due(), [2000], 'capped at backoffMaxMs');
    t.timers.fire();
    await settle();
    assert.equal(t.life.current, 2);
    assert.equal(t.life.handshakes, 2);
    assert.equal(t.log.filter((l) => l === 'config said').length, 1, 'the configuration is said once');
    t.life.lost(2, 'gone');
    assert.deepEqual(t.timers.due(), [1000], 'the backoff starts again after a connection');
  });

  it('after a drop, a refusal that needs the user stops the retries', async () => {
    const t = scripted([1, new AuthError('certificate expired')]);
    await t.life.connect();
    t.life.lost(1, 'x');
    t.timers.fire();
    await settle();
    assert.deepEqual(t.life.state, { kind: 'down', error: 'certificate expired', errorKind: 'auth' });
    assert.deepEqual(t.timers.due(), []);
  });

  it('while reconnecting (connecting again after a drop), ready() fails fast rather than waiting', async () => {
    let open = (): void => undefined;
    const t = scripted([1, 2]);
    await t.life.connect();
    t.life.lost(1, 'x');
    t.hold(new Promise<void>((resolve) => (open = resolve)));
    t.timers.fire();
    assert.equal(t.life.state.kind, 'connecting');
    await assert.rejects(t.life.ready(), { message: 'SSH connection to me@gpu is down (reconnecting)' });
    open();
    await settle();
    assert.equal(await t.life.ready(), 2);
  });

  it('dispose releases the live link, cancels the retry, closes, and a link that arrives later is discarded', async () => {
    const t = scripted([1]);
    await t.life.connect();
    const released: (number | undefined)[] = [];
    t.life.dispose((link) => released.push(link));
    t.life.dispose((link) => released.push(link));
    assert.deepEqual(released, [1], 'once, with the live link');
    assert.equal(t.life.state.kind, 'closed');
    assert.equal(t.life.lost(1, 'late'), false);
    await assert.rejects(t.life.connect(), { message: 'Connection to me@gpu was disposed' });
    await assert.rejects(t.life.ready(), { message: 'Connection to me@gpu was disposed' });

    let open = (): void => undefined;
    const u = scripted([5]);
    u.hold(new Promise<void>((resolve) => (open = resolve)));
    const attempt = u.life.connect();
    u.life.dispose(() => undefined);
    open();
    await assert.rejects(attempt, { message: 'Connection to me@gpu was disposed' });
    assert.deepEqual(u.discarded, [5]);

    const v = scripted([1]);
    await v.life.connect();
    v.life.lost(1, 'x');
    v.life.dispose(() => undefined);
    assert.deepEqual(v.timers.due(), [], 'the pending retry is cancelled');
  });

  it('downMessage: the reason and the retry delay in seconds, or "reconnecting"', () => {
    assert.equal(
      downMessage('a@b', { kind: 'down', error: 'Connection lost: eof', retryInMs: 1500 }),
      'SSH connection to a@b is down: Connection lost: eof (retrying in 2 s)',
    );
    assert.equal(downMessage('a@b', { kind: 'down', error: 'refused' }), 'SSH connection to a@b is down: refused');
    assert.equal(
      downMessage('a@b', { kind: 'connecting', attempt: 3 }),
      'SSH connection to a@b is down (reconnecting)',
    );
  });
});

describe('hanging up after the stops', () => {
  it('at once without stops; after every stop has finished, not before', async () => {
    let ended = 0;
    endAfterStops([], () => ended++);
    assert.equal(ended, 1);
    let finish = (): void => undefined;
    const slow = new Promise<void>((resolve) => (finish = resolve));
    endAfterStops([Promise.resolve(), slow], () => ended++);
    await settle();
    assert.equal(ended, 1, 'a stop still running holds the hang-up');
    finish();
    await settle();
    assert.equal(ended, 2);
  });
});

describe('command deadline', () => {
  it('stops once on the deadline, with the time in the words, and removes the abort listener', () => {
    const timers = new HandTimers();
    const ac = new AbortController();
    const stops: Error[] = [];
    const end = commandDeadline(timers, { timeoutMs: 2500, signal: ac.signal }, (e) => stops.push(e));
    assert.deepEqual(timers.due(), [2500]);
    timers.fire();
    ac.abort();
    assert.equal(stops.length, 1);
    assert.ok(stops[0] instanceof CommandTimeoutError);
    assert.equal(stops[0]!.message, 'Remote command timed out after 2.5 s');
    assert.equal(end.settled, true);
    assert.equal(end.finish(), false, 'a stopped command does not also finish');
  });

  it('an abort stops it and clears the timer; an already aborted signal stops it at once', () => {
    const timers = new HandTimers();
    const ac = new AbortController();
    const stops: Error[] = [];
    commandDeadline(timers, { timeoutMs: 1000, signal: ac.signal }, (e) => stops.push(e));
    ac.abort();
    assert.ok(stops[0] instanceof CommandAbortedError);
    assert.deepEqual(timers.due(), [], 'the deadline is disarmed');

    const pre = new AbortController();
    pre.abort();
    const early: Error[] = [];
    const end = commandDeadline(timers, { timeoutMs: 1000, signal: pre.signal }, (e) => early.push(e));
    assert.equal(early.length, 1);
    assert.equal(end.settled, true);
    assert.deepEqual(timers.due(), [], 'no timer left behind by a command stopped before it ran');
  });

  it('a command that ends by itself disarms both, and a later deadline or abort does nothing', () => {
    const timers = new HandTimers();
    const ac = new AbortController();
    const stops: Error[] = [];
    const end = commandDeadline(timers, { timeoutMs: 1000, signal: ac.signal }, (e) => stops.push(e));
    assert.equal(end.finish(), true);
    assert.equal(end.finish(), false);
    assert.deepEqual(timers.due(), []);
    ac.abort();
    assert.deepEqual(stops, []);
  });
});
