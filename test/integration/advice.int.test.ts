/**
 * "Suggest a faster load" against the real sshd + simulated host: the evidence read back from
 * the unit's journal through SSH, the version from /server_info through the tunnel, the advice
 * applied as the drop-in the parsers use (diff confirmed), the server restarted with it, and
 * the roll back removing it.
 */
import { strict as assert } from 'node:assert';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { DROP_IN_NAME } from '../../src/target/systemd/parserDropIn';
import { applyAdvice, gatherAdvice } from '../../src/fleet/checks/loadAdvice';
import { changeDeps, FAST_WATCH, sessionForHost, type TestSession } from './simHost';

const MULTITHREAD = '{"enable_multithread_load": true, "num_threads": 8}';

describe('load advice over real SSH: evidence, apply as a drop-in, roll back, absent evidence', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession;
  const lines: string[] = [];

  before(async () => {
    // A cold read at 4 MB/s of 12 MiB (about 3 s) with the single-threaded shard bar: the weights are the largest phase.
    host = await startGpuHost({
      shards: 6,
      shardBytes: 2 * 1024 * 1024,
      sim: { shardDesc: 'legacy', readMBps: 4, coldFiles: 'all' },
    });
    test = await sessionForHost(host);
  });
  after(async () => {
    test?.dispose();
    await host?.stop();
  });

  it('after a load: multi-threaded loading advised, with its evidence, figure, source and the version from /server_info', async () => {
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', outcome.message);
    const report = await gatherAdvice(test.session, { minPhaseMs: 1000, log: (l) => lines.push(l) });
    assert.equal(report.engine, 'sglang');
    assert.deepEqual(report.version, { text: '0.5.4', source: '/server_info' });
    assert.equal(report.log.ready, true);
    assert.equal(report.log.shardLoader, 'single-thread');
    assert.equal(report.result.largest?.phase, 'loading weights', JSON.stringify(report.log.phaseMs));
    const advice = report.result.advice.find((a) => a.id === 'sglang-multithread-load');
    assert.ok(advice, JSON.stringify(report.result));
    assert.match(advice.evidence.join('\n'), /loading weights took \d+ s of \d+ s \(the largest phase\)/);
    assert.match(advice.figure, /217 s -> 65 s/);
    assert.ok(advice.sources.includes('https://github.com/sgl-project/sglang/pull/7277'));
    assert.equal(advice.notApplicable, undefined);
  });

  it('apply: a no at the diff writes nothing; a yes writes the drop-in; the restarted server has the flag and no such advice', async () => {
    const report = await gatherAdvice(test.session, { minPhaseMs: 1000 });
    const advice = report.result.advice.find((a) => a.id === 'sglang-multithread-load');
    assert.ok(advice);
    const before = await host.readDropIns();
    const cancelled = await applyAdvice(changeDeps(test, lines, false), test.session.profile, advice);
    assert.equal(cancelled.kind, 'cancelled');
    assert.deepEqual(await host.readDropIns(), before, 'nothing changes without a yes');

    const result = await applyAdvice(changeDeps(test, lines, true), test.session.profile, advice);
    assert.equal(result.kind, 'changed');
    if (result.kind !== 'changed') return;
    assert.match(result.diff, /^\+ --model-loader-extra-config /m);
    const dropIn = (await host.readDropIns())[DROP_IN_NAME];
    assert.ok(dropIn, 'the drop-in is written');
    assert.match(dropIn, /^ExecStart=$/m);
    assert.ok(
      dropIn.includes('--model-loader-extra-config "{\\"enable_multithread_load\\": true, \\"num_threads\\": 8}"'),
      dropIn,
    );

    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'ready', outcome.message);
    const info = await test.session.client.serverInfo();
    assert.ok(info.ok);
    assert.equal((info.info as Record<string, unknown>)['model_loader_extra_config'], MULTITHREAD);
    const after = await gatherAdvice(test.session, { minPhaseMs: 1000 });
    assert.ok(
      !after.result.advice.some((a) => a.id === 'sglang-multithread-load'),
      'the flag is set: not advised again',
    );

    await result.undo.run(changeDeps(test, lines, true));
    assert.equal((await host.readDropIns())[DROP_IN_NAME], undefined, 'the roll back removes the drop-in');
    // The next load logs the multi-threaded loader's bar (as a newer SGLang does by default): no such advice.
    await host.configureSimulator({ shardDesc: 'multi' });
    const back = await test.session.watch('restart', FAST_WATCH);
    assert.equal(back.end, 'ready', back.message);
    const infoBack = await test.session.client.serverInfo();
    assert.ok(infoBack.ok);
    assert.equal((infoBack.info as Record<string, unknown>)['model_loader_extra_config'], undefined);
    const multi = await gatherAdvice(test.session, { minPhaseMs: 1000, log: (l) => lines.push(l) });
    assert.equal(multi.log.shardLoader, 'multi-thread', JSON.stringify(multi.log) + lines.slice(-5).join('\n'));
    assert.equal(multi.result.largest?.phase, 'loading weights');
    assert.ok(!multi.result.advice.some((a) => a.id === 'sglang-multithread-load'), JSON.stringify(multi.result));
  });
});
