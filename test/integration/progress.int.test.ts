/**
 * Load progress against a real sshd and the simulated GPU host, whose page cache is the real
 * kernel one: phases and a percentage that only grows, the witnesses the tooltip shows (bytes,
 * read rate, GPU memory growing then jumping at the KV cache), stall detection, and a restart
 * after the extension's own warm-cache operation being much shorter than a cold one.
 */
import { targetFor } from '../../src/target/target';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evictFromPageCache, startGpuHost, type GpuHost } from '../gpu-host/harness';
import { LOAD_PHASES, type LoadPhase } from '../../src/engine/events';
import type { LoadState, Verdict } from '../../src/monitor/state/loadStateTypes';
import { recordOf } from '../../src/monitor/history/history';
import { LoadInsights } from '../../src/monitor/forecast/loadInsights';
import { warmCache } from '../../src/monitor/forecast/warmCache';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { MemoryMemento } from './simHost';
import { disposed } from '../util/disposed';

const SHARDS = 12;
const SHARD_BYTES = 2 * 1024 * 1024;
// cold ~6 s of weights, warm ~0.5 s
const SIM = {
  readMBps: 4,
  warmReadMBps: 50,
  kvSeconds: 3.0,
  warmupSeconds: 0.8,
  initGB: 0.55,
  weightsGB: 68.76,
  kvCacheGB: 4.2,
};

function verdictsOf(states: readonly LoadState[]): Verdict[] {
  const out: Verdict[] = [];
  for (const s of states) if (out[out.length - 1] !== s.verdict) out.push(s.verdict);
  return out;
}

const rank = (p: LoadPhase) => LOAD_PHASES.indexOf(p);

describe('load progress on the simulated GPU host (real page cache)', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  let modelFiles: string[] = [];

  before(async () => {
    host = await startGpuHost({ shards: SHARDS, shardBytes: SHARD_BYTES, sim: { ...SIM, coldFiles: 'all' } });
    modelFiles = fs
      .readdirSync(host.modelPath)
      .filter((n) => n.endsWith('.safetensors'))
      .map((n) => path.join(host.modelPath, n));
  });
  afterEach(() => (test = disposed(test)));
  after(() => host?.stop());

  it('phases in order, a percentage that only grows, bytes, read rate, GPU memory growing then jumping at the KV cache', async () => {
    await host.configureSimulator({ fault: {}, coldFiles: 'all' });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    const outcome = await test.session.watch('restart', FAST_WATCH, { onState: (s) => states.push(s) });
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}`);

    // phases: never backwards, and the main ones were seen
    const phases: LoadPhase[] = [];
    for (const s of states) if (s.phase && phases[phases.length - 1] !== s.phase) phases.push(s.phase);
    for (let i = 1; i < phases.length; i++)
      assert.ok(rank(phases[i]!) > rank(phases[i - 1]!), `phases went back: ${phases}`);
    for (const p of ['loading weights', 'allocating KV cache', 'warming up', 'ready'] as const)
      assert.ok(phases.includes(p), `no ${p}: ${phases}`);

    // the percentage only grows, through the phases
    const percents = states.filter((s) => s.progress !== undefined).map((s) => s.progress!);
    for (let i = 1; i < percents.length; i++)
      assert.ok(percents[i]! >= percents[i - 1]!, `progress went down at ${i}: ${percents}`);
    const distinct = new Set(percents.map((p) => Math.floor(p * 100)));
    assert.ok(distinct.size >= 5, `few percentages: ${[...distinct]}`);

    // tooltip-facing witnesses during the weights
    const loading = states.filter((s) => s.phase === 'loading weights');
    assert.ok(
      loading.some((s) => s.io !== undefined && s.io.readBytes > 0),
      'bytes read seen while loading',
    );
    assert.ok(
      loading.some((s) => s.io?.totalBytes !== undefined && s.io.totalBytes >= SHARDS * SHARD_BYTES * 0.9),
      'model size known',
    );
    assert.ok(
      loading.some((s) => (s.io?.coldBytes ?? 0) > 0),
      'cold (block I/O) bytes seen: the files really were evicted',
    );
    assert.ok(
      loading.some((s) => s.readRate !== undefined && s.readRate > 0),
      'a read rate while loading',
    );
    const rates = loading.filter((s) => s.readRate !== undefined).map((s) => s.readRate! / 1e6);
    const midRate = rates[Math.floor(rates.length / 2)]!;
    assert.ok(midRate > 1 && midRate < 12, `read rate ${midRate.toFixed(1)} MB/s, sim reads cold at 4 MB/s`);

    // GPU memory grows during the weights, then jumps at the KV cache
    const gpuDuringWeights = loading.filter((s) => s.gpu).map((s) => s.gpu!.usedMiB);
    assert.ok(new Set(gpuDuringWeights).size >= 3, `GPU memory did not grow during the weights: ${gpuDuringWeights}`);
    for (let i = 1; i < gpuDuringWeights.length; i++)
      assert.ok(gpuDuringWeights[i]! >= gpuDuringWeights[i - 1]!, `GPU memory went down: ${gpuDuringWeights}`);
    // all weights in (init + weights per GPU): seen as a plateau while the KV cache is allocated (kvSeconds 3: several witness rounds even on a busy machine),
    // then at least the KV cache more
    const gpus = states.find((s) => s.gpu)!.gpu!.perGpu.length;
    const weightsLevel = (SIM.initGB + SIM.weightsGB) * 1024 * gpus;
    const readings = states.filter((s) => s.gpu).map((s) => ({ used: s.gpu!.usedMiB, phase: s.phase }));
    const plateau = readings.findIndex((r) => Math.abs(r.used - weightsLevel) < 0.01 * weightsLevel);
    assert.ok(plateau >= 0, `no reading with all the weights in (${weightsLevel} MiB): ${readings.map((r) => r.used)}`);
    const jumped = readings.slice(plateau).find((r) => r.used >= weightsLevel + 0.8 * SIM.kvCacheGB * 1024 * gpus);
    assert.ok(jumped, `no jump of the KV cache after the weights: ${readings.map((r) => r.used)}`);
    assert.ok(rank(jumped.phase ?? 'starting') >= rank('allocating KV cache'), `jump seen in phase ${jumped.phase}`);
  });

  it('a stall is detected while the load hangs, and it is loading again when it resumes, then ready', async () => {
    // The load halts after 3 shards until the watch has said stalled there: a condition, not a time.
    await host.configureSimulator({
      fault: { hangAt: 'weights', afterShards: 3, untilCleared: true },
      coldFiles: 'all',
      readMBps: 8,
    });
    test = await sessionForHost(host);
    const states: LoadState[] = [];
    let resumed: Promise<void> | undefined;
    const outcome = await test.session.watch(
      'restart',
      { ...FAST_WATCH, stallMs: 2000 },
      {
        onState: (s) => {
          states.push(s);
          if (!resumed && s.verdict === 'stalled' && s.shards?.done === 3)
            resumed = host.configureSimulator({ fault: {} });
        },
      },
    );
    await resumed;
    await host.configureSimulator({ fault: {}, readMBps: SIM.readMBps });
    assert.equal(outcome.end, 'ready', `ended ${outcome.end}: ${outcome.message}`);
    const verdicts = verdictsOf(states);
    // The stall of the hang: at its third shard. (With stallMs 2 s, a loaded machine can also show a
    // true stall earlier, in a start that printed nothing for 2 s.)
    const stalledAt = states.findIndex((s) => s.verdict === 'stalled' && s.shards?.done === 3);
    assert.ok(
      stalledAt >= 0,
      `no stall seen after 3 shards: ${states.map((s) => `${s.verdict}(${s.shards?.done ?? '-'})`).join(' ')}`,
    );
    assert.ok(states[stalledAt]!.stalled);
    assert.ok(
      states.slice(stalledAt).some((s) => s.verdict === 'loading'),
      `not loading again after the stall: ${verdicts}`,
    );
    assert.equal(verdicts[verdicts.length - 1], 'ready');
  });

  it('a restart after warming the page cache is much shorter than a cold one', async () => {
    const insights = new LoadInsights(new MemoryMemento());
    const weightsMs = (s: LoadState) => recordOf(s, 'ready', Date.now()).phaseMs['loading weights'] ?? NaN;

    // cold: the simulator evicts the shards at load start
    await host.configureSimulator({ fault: {}, coldFiles: 'all' });
    test = await sessionForHost(host);
    const cold = await test.session.watch('restart', FAST_WATCH);
    assert.equal(cold.end, 'ready', `cold ended ${cold.end}: ${cold.message}`);
    const coldMs = weightsMs(cold.state);

    // the load left the shards in the page cache; drop them, and let the simulator take the cache as it is
    await host.configureSimulator({ coldFiles: null });
    evictFromPageCache(modelFiles);
    const before = await insights.forecast(
      test.session.transport,
      test.session.profile.name,
      test.session.profile.unit,
      targetFor(test.session.profile),
    );
    assert.ok(
      before.totalBytes !== undefined && before.totalBytes >= SHARDS * SHARD_BYTES * 0.9,
      `model size ${before.totalBytes}`,
    );
    assert.ok(
      before.residentBytes !== undefined && before.residentBytes / before.totalBytes! < 0.05,
      `cached before warming: ${before.residentBytes}/${before.totalBytes}`,
    );
    assert.ok(before.loadText, 'a load-time forecast');

    const progress: number[] = [];
    const warmed = await warmCache(test.session.transport, host.modelPath, {
      pollMs: 500,
      onProgress: (r) => progress.push(r.residentBytes ?? 0),
    });
    assert.ok(warmed.ok, `warm cache failed: ${JSON.stringify(warmed)}`);
    const afterWarm = await insights.forecast(
      test.session.transport,
      test.session.profile.name,
      test.session.profile.unit,
      targetFor(test.session.profile),
    );
    assert.ok(
      afterWarm.residentBytes! / afterWarm.totalBytes! > 0.95,
      `cached after warming: ${afterWarm.residentBytes}/${afterWarm.totalBytes}`,
    );

    const warm = await test.session.watch('restart', FAST_WATCH, {}, afterWarm.prior);
    assert.equal(warm.end, 'ready', `warm ended ${warm.end}: ${warm.message}`);
    const warmMs = weightsMs(warm.state);
    console.log(
      `      weights phase: cold ${(coldMs / 1000).toFixed(2)} s, after warming ${(warmMs / 1000).toFixed(2)} s (ratio ${(warmMs / coldMs).toFixed(2)})`,
    );
    assert.ok(warmMs < 0.6 * coldMs, `warm weights ${warmMs} ms vs cold ${coldMs} ms`);
    await host.configureSimulator({ coldFiles: 'all' });
  });
});
