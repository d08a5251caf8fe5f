import { strict as assert } from 'node:assert';
import { Slots } from '../../src/transport/channelLimit';

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
});
