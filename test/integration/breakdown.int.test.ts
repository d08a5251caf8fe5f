/**
 * Every load explained, through a real sshd and the simulated GPU host, driven by a
 * fleet as every front drives it: a finished load's breakdown has its phases (start, duration,
 * the weights' rate and page-cache share), and the next load is compared with it, the
 * difference explained from what was measured: a cold load (the shards evicted from the page
 * cache) then a warm one (read in beforehand).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile, Settings } from '../../src/config/config';
import { Fleet } from '../../src/fleet/fleet';
import { serverReport } from '../../src/present/report';
import type { LoadBreakdown } from '../../src/monitor/history/loadBreakdown';
import { breakdownLine } from '../../src/present/loadSummary';
import { readyMessage } from '../../src/present/messages';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { serverEntry, headlessFleet } from './simHost';
import { waitFor } from '../util/waitFor';

const MB = 1e6;

describe('load breakdown: every load explained (simulated GPU host)', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let dir: string;
  let settings: Settings;
  let fleet: Fleet;
  let server: ServerProfile;
  let first: LoadBreakdown;

  before(async () => {
    // 6 x 4 MB: cold at 6 MB/s (about 4 s), warm at 400 MB/s (well under a second).
    host = await startGpuHost({
      shards: 6,
      shardBytes: 4 * 1024 * 1024,
      sim: { readMBps: 6, warmReadMBps: 400, kvSeconds: 0.3, cudaGraphSeconds: 1, warmupSeconds: 0.3 },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-breakdown-'));
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    const parsed = parseSettings({
      servers: [serverEntry(host, 'sim')],
      knownHostsFile,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
      loadTimeoutMinutes: 2,
    });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    settings = parsed.settings;
    server = settings.servers[0]!;
    const log = () => undefined;
    fleet = headlessFleet(settings, log);
  });

  after(async () => {
    fleet?.dispose();
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Restarts, waits for ready and for the load's record; the breakdown of that load. */
  async function loadOnce(previous: LoadBreakdown | undefined): Promise<{ b: LoadBreakdown; message: string }> {
    const result = await fleet.restart(server, { force: true });
    assert.equal(result.kind, 'restarted');
    const outcome = await result.outcome;
    assert.equal(outcome?.end, 'ready', `ended ${outcome?.end}: ${outcome?.message}`);
    const b = await waitFor(
      () => {
        const last = fleet.snapshot(server).lastLoad;
        return last && last.startedAt !== previous?.startedAt ? last : undefined;
      },
      { timeoutMs: 10_000, message: 'the load recorded' },
    );
    return { b, message: readyMessage(server, outcome!.state, b) };
  }

  it('a cold first load: its phases in order with start and duration, the weights cold at the storage rate, no comparison', async () => {
    await host.configureSimulator({ coldFiles: 'all' });
    const { b, message } = await loadOnce(undefined);
    first = b;
    console.log(`    ${message}`);
    if (process.env.DEBUG_BREAKDOWN) console.log(JSON.stringify(b, null, 1));
    const phases = b.phases.map((p) => p.phase);
    assert.deepEqual(
      phases.filter((p) => p !== 'restart' && p !== 'starting'),
      ['loading weights', 'allocating KV cache', 'capturing CUDA graphs', 'warming up'],
      `phases: ${phases}`,
    );
    for (let i = 1; i < b.phases.length; i++) {
      const [prev, cur] = [b.phases[i - 1]!, b.phases[i]!];
      assert.ok(Math.abs(prev.startMs + prev.ms - cur.startMs) <= 1, `${cur.phase} begins where ${prev.phase} ends`);
    }
    const weights = b.phases.find((p) => p.phase === 'loading weights')!;
    assert.ok(weights.ms >= 3000, `24 MB at 6 MB/s took ${weights.ms} ms`);
    assert.ok(b.totalMs >= weights.startMs + weights.ms, 'the load lasts at least to the end of the weights');
    assert.equal(b.weights?.source, 'cold', JSON.stringify(b.weights));
    assert.ok(b.weights!.cachedShare! < 0.1, `cache share ${b.weights!.cachedShare}`);
    assert.ok(
      b.weights!.bps! > 3 * MB && b.weights!.bps! < 9 * MB,
      `the storage rate read back: ${b.weights!.bps! / MB} MB/s`,
    );
    assert.equal(b.comparison, undefined);
    // The restart and the process's start are named only when they last long enough to count (a
    // loaded machine makes them do).
    assert.match(
      message,
      /^Kimi on sim is ready \(loaded in \d+s: (restart \d+s, )?(start \d+s, )?weights \d+s cold at \d\.\d MB\/s.*; the first load on record here\)$/,
    );
    const report = serverReport(fleet.snapshot(server));
    assert.equal(report.lastLoad, breakdownLine(b));
    assert.ok(report.summary.includes(breakdownLine(b)), report.summary);
  });

  it('a warm second load is compared with the first: faster, because the page cache held the weights', async () => {
    assert.ok(first, 'the first load ran');
    await host.configureSimulator({ coldFiles: 'none' });
    const { b, message } = await loadOnce(first);
    console.log(`    ${message}`);
    if (process.env.DEBUG_BREAKDOWN) console.log(JSON.stringify(b, null, 1));
    assert.equal(b.previous.length, 1);
    assert.equal(b.previous[0]!.startedAt, first.startedAt);
    const c = b.comparison!;
    assert.equal(c.previousTotalMs, first.totalMs);
    assert.equal(c.deltaMs, b.totalMs - first.totalMs);
    assert.ok(c.deltaMs < -2000, `faster by ${-c.deltaMs} ms`);
    assert.deepEqual(c.reason, {
      kind: 'page cache',
      share: b.weights!.cachedShare,
      previousShare: first.weights!.cachedShare,
    });
    assert.ok(b.weights!.cachedShare! > 0.9, `cache share ${b.weights!.cachedShare}`);
    const weights = b.phases.find((p) => p.phase === 'loading weights')!;
    assert.equal(weights.previousMs[0], first.phases.find((p) => p.phase === 'loading weights')!.ms);
    assert.match(
      message,
      /; \d+s faster than last time: the page cache held (9\d|100) % of the weights, \d % last time\)$/,
    );
  });
});
