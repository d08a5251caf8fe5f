/**
 * The channel cap (src/transport/channelLimit.ts) under a burst of commands that time out, over
 * the real SSH transport to a real sshd: a timed-out command's channel stays open until its kill
 * is done, and the cap counts it until then (at most MAX_CHANNELS open at any time); every slot
 * comes back once the burst is over.
 */
import { strict as assert } from 'node:assert';
import { MAX_CHANNELS, ChannelLimitedTransport } from '../../src/transport/channelLimit';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';

describe('channel cap: commands that time out under a burst', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession;

  before(async () => {
    host = await startGpuHost({ shards: 1, shardBytes: 1024 });
    test = await sessionForHost(host);
  });
  after(async () => {
    test?.dispose();
    await host?.stop();
  });

  it('never more than MAX_CHANNELS channels open, and every slot returned', async () => {
    const transport = test.session.transport as ChannelLimitedTransport;
    await transport.connect();
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, transport.openChannels ?? 0)), 5);
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, () => transport.exec('sleep 30', { timeoutMs: 300 })),
      );
      assert.ok(
        results.every((r) => r.status === 'rejected' && /timed out/.test(String(r.reason))),
        `every command timed out: ${results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok')).join('; ')}`,
      );
      await waitFor(() => transport.slotsInUse === 0 && transport.openChannels === 0, {
        timeoutMs: 30_000,
        message: `slots ${transport.slotsInUse}, channels ${transport.openChannels} after the burst`,
      });
    } finally {
      clearInterval(poll);
    }
    assert.ok(peak <= MAX_CHANNELS, `at most ${MAX_CHANNELS} channels open at once, saw ${peak}`);
    const after = await transport.exec('echo ok', { timeoutMs: 10_000 });
    assert.equal(after.stdout.trim(), 'ok');
  });
});
