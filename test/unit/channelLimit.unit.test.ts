import { strict as assert } from 'node:assert';
import { ChannelLimitedTransport, Slots } from '../../src/transport/channelLimit';
import { TransportError, type Transport } from '../../src/transport/transport';

describe('channel limit', () => {
  it('lets N holders in, queues the next ones first come first served, and a release lets exactly one in', async () => {
    const slots = new Slots(3);
    const releases = await Promise.all([slots.acquire(), slots.acquire(), slots.acquire()]);
    assert.equal(slots.inUse, 3);
    const order: string[] = [];
    const fourth = slots.acquire().then((r) => (order.push('fourth'), r));
    const fifth = slots.acquire().then((r) => (order.push('fifth'), r));
    await Promise.resolve();
    assert.deepEqual(order, [], 'nobody past the limit');
    releases[0]!();
    releases[0]!(); // a second release of the same slot changes nothing
    const r4 = await fourth;
    assert.deepEqual(order, ['fourth']);
    assert.equal(slots.inUse, 3);
    r4();
    const r5 = await fifth;
    assert.deepEqual(order, ['fourth', 'fifth']);
    r5();
    releases[1]!();
    releases[2]!();
    assert.equal(slots.inUse, 0);
  });

  it('a command that timed out keeps its slot until its channel has closed; other errors release at once', async () => {
    let closeChannel = (): void => undefined;
    const errors: Error[] = [
      Object.assign(new TransportError('command-timeout', 'Remote command timed out after 1 s'), {
        channelClosed: new Promise<void>((resolve) => (closeChannel = resolve)),
      }),
      new TransportError('closed', 'down'),
    ];
    const inner = { exec: async () => Promise.reject(errors.shift()) } as unknown as Transport;
    const limited = new ChannelLimitedTransport(inner, 1);
    await assert.rejects(limited.exec('sleep 30', { timeoutMs: 1000 }), /timed out/);
    assert.equal(limited.slotsInUse, 1, 'held while the kill runs');
    let second = false;
    const next = limited.exec('true').catch(() => (second = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(second, false, 'the next command waits for the channel');
    closeChannel();
    await next;
    assert.equal(second, true);
    assert.equal(limited.slotsInUse, 0, 'a plain error releases its slot at once');
  });

  it("a command's deadline bounds its wait for a channel: it times out, said as such, and leaves the queue", async () => {
    let ran = 0;
    const inner = {
      exec: async () => {
        ran++;
        return { code: 0, stdout: '', stderr: '' };
      },
      stream: async () => ({ exited: new Promise<number | null>(() => undefined), kill: () => undefined }),
    } as unknown as Transport;
    const limited = new ChannelLimitedTransport(inner, 1);
    // A stream that never ends holds the only channel.
    await limited.stream('tail -F log', () => undefined);
    await assert.rejects(
      limited.exec('squeue', { timeoutMs: 50 }),
      (error: unknown) =>
        error instanceof TransportError &&
        error.kind === 'command-timeout' &&
        /waiting for a free SSH channel/.test(error.message),
    );
    assert.equal(ran, 0, 'the command never ran');
    assert.equal(limited.slotsInUse, 1, 'only the stream holds a slot');
  });

  it('a holder that gave up waiting is not handed the next free slot', async () => {
    const slots = new Slots(1);
    const first = await slots.acquire();
    assert.equal(await slots.acquire(20), undefined);
    const next = slots.acquire(1000);
    first();
    const release = await next;
    assert.ok(release, 'the one still waiting got the slot');
    assert.equal(slots.inUse, 1);
    release();
    assert.equal(slots.inUse, 0);
  });
});
