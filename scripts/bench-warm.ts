// "Warm cache, then restart" benchmark: `npx tsx scripts/bench-warm.ts [--runs N] [--cold-mbps X] [--warm-mbps Y] [--out FILE]`
//
// On the simulated GPU host (real sshd, systemd stand-ins, the SGLang simulator, whose page cache
// is the real kernel page cache of the model files), alternates N cold and N warmed restarts,
// each watched by the extension's real session over SSH:
//  - cold: the simulator evicts the shards from the page cache at load start (sim.json
//    coldFiles "all"), so every byte is read from storage at --cold-mbps;
//  - warmed: the shards are evicted, then the extension's own warmCache() (parallel reads over
//    SSH, the "Warm cache, then restart" command's first half) reads them into the page cache
//    while the old server keeps serving; then the restart. The simulator measures residency
//    with fincore and reads resident bytes at --warm-mbps.
// Before each restart the extension's forecast (LoadInsights, fincore over SSH) gives the share
// of the weights cached. Prints a table and the medians, and writes them to BENCHMARKS.md under
// "## Warm cache, then restart" (only that section is replaced; the rest of the file is kept).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { evictFromPageCache, startGpuHost } from '../test/gpu-host/harness';
import { FAST_WATCH, sessionForHost } from '../test/integration/simHost';
import { LoadInsights } from '../src/monitor/forecast/loadInsights';
import { targetFor } from '../src/target/target';
import { recordOf } from '../src/monitor/history/history';
import { warmCache } from '../src/monitor/forecast/warmCache';
import type { LoadState } from '../src/monitor/state/loadStateTypes';
import { gitHead, replaceSection } from './benchDoc';
import { MemoryMemento } from '../test/integration/simHost';

const REPO = path.resolve(__dirname, '..');
function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
}
const RUNS = Math.max(3, Number(arg('runs', '3')));
const COLD_MBPS = Number(arg('cold-mbps', '20'));
const WARM_MBPS = Number(arg('warm-mbps', '400'));
const OUT = path.resolve(REPO, arg('out', 'BENCHMARKS.md'));
const SHARDS = 16;
const SHARD_BYTES = 8 * 1024 * 1024;
const HEADING = '## Warm cache, then restart';

interface Run {
  kind: 'cold' | 'warmed';
  cachedPercent: number | undefined;
  warmingMs: number | undefined;
  weightsMs: number;
  loadMs: number;
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sec = (ms: number | undefined) => (ms === undefined ? '—' : (ms / 1000).toFixed(2));

function loadMs(s: LoadState): number {
  return s.readyAt! - (s.restartRequestedAt ?? s.watchStartedAt);
}

/** Replaces (or appends) the section under HEADING, up to the next "## " heading. */

async function main(): Promise<void> {
  const totalMB = (SHARDS * SHARD_BYTES) / 1e6;
  console.log(
    `Warm-cache benchmark: ${RUNS} cold + ${RUNS} warmed restarts; ${SHARDS} shards x ${SHARD_BYTES / 2 ** 20} MiB (${totalMB.toFixed(0)} MB); cold ${COLD_MBPS} MB/s, cached ${WARM_MBPS} MB/s`,
  );
  const host = await startGpuHost({
    shards: SHARDS,
    shardBytes: SHARD_BYTES,
    sim: { readMBps: COLD_MBPS, warmReadMBps: WARM_MBPS, coldFiles: 'all' },
  });
  const files = fs
    .readdirSync(host.modelPath)
    .filter((n) => n.endsWith('.safetensors'))
    .map((n) => path.join(host.modelPath, n));
  const test = await sessionForHost(host);
  const insights = new LoadInsights(new MemoryMemento());
  const { name, unit } = test.session.profile;
  const runs: Run[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const kind of ['cold', 'warmed'] as const) {
        let warmingMs: number | undefined;
        if (kind === 'cold') {
          // evicted here too, so the forecast measures it; the simulator evicts again at load start
          await host.configureSimulator({ coldFiles: 'all' });
          evictFromPageCache(files);
        } else {
          await host.configureSimulator({ coldFiles: null });
          evictFromPageCache(files);
          const t0 = Date.now();
          const warmed = await warmCache(test.session.transport, host.modelPath);
          warmingMs = Date.now() - t0;
          if (!warmed.ok) throw new Error(`warm cache failed: ${warmed.reason}`);
        }
        const forecast = await insights.forecast(test.session.transport, name, unit, targetFor(test.session.profile));
        const outcome = await test.session.watch('restart', FAST_WATCH, {}, forecast.prior);
        if (outcome.end !== 'ready') throw new Error(`${kind} restart ended ${outcome.end}: ${outcome.message ?? ''}`);
        await insights.record(name, unit, outcome);
        const cachedPercent = forecast.totalBytes
          ? (100 * (forecast.residentBytes ?? 0)) / forecast.totalBytes
          : undefined;
        const run: Run = {
          kind,
          cachedPercent,
          warmingMs,
          weightsMs: recordOf(outcome.state, 'ready', Date.now()).phaseMs['loading weights'] ?? NaN,
          loadMs: loadMs(outcome.state),
        };
        runs.push(run);
        console.log(
          `  ${kind.padEnd(6)} cached ${run.cachedPercent?.toFixed(0) ?? '?'}%  warming ${sec(warmingMs)} s  weights ${sec(run.weightsMs)} s  load ${sec(run.loadMs)} s`,
        );
      }
    }
  } finally {
    test.dispose();
    await host.stop();
  }

  const cold = runs.filter((r) => r.kind === 'cold');
  const warm = runs.filter((r) => r.kind === 'warmed');
  const mColdLoad = median(cold.map((r) => r.loadMs));
  const mWarmLoad = median(warm.map((r) => r.loadMs));
  const mColdW = median(cold.map((r) => r.weightsMs));
  const mWarmW = median(warm.map((r) => r.weightsMs));
  const mWarming = median(warm.map((r) => r.warmingMs!));
  const rows = runs.map(
    (r, i) =>
      `| ${i + 1} | ${r.kind} | ${r.cachedPercent === undefined ? '?' : `${r.cachedPercent.toFixed(0)} %`} | ${sec(r.warmingMs)} | ${sec(r.weightsMs)} | ${sec(r.loadMs)} |`,
  );
  const table = [
    '| # | restart | weights cached at restart | warming the cache (s, server still serving) | weights phase (s) | restart -> ready (s) |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  const summary = [
    '| | cold | warmed | warmed / cold |',
    '|---|---|---|---|',
    `| median restart -> ready (downtime) | ${sec(mColdLoad)} s | ${sec(mWarmLoad)} s | ${(mWarmLoad / mColdLoad).toFixed(2)} |`,
    `| median weights phase | ${sec(mColdW)} s | ${sec(mWarmW)} s | ${(mWarmW / mColdW).toFixed(2)} |`,
    `| median time warming the cache before the restart | — | ${sec(mWarming)} s | |`,
  ].join('\n');
  const section = `${HEADING}

\`npx tsx scripts/bench-warm.ts\` (${new Date().toISOString().slice(0, 10)}, commit ${gitHead()}, ${os.cpus().length} CPUs, ${os.platform()} ${os.release()}).
Simulated GPU host behind a real sshd; the simulator's page cache is the kernel's own (fincore to
measure, \`dd iflag=nocache\` to evict, real reads to fill). ${SHARDS} shards x ${SHARD_BYTES / 2 ** 20} MiB
(${totalMB.toFixed(0)} MB); storage reads at ${COLD_MBPS} MB/s, page-cache reads at ${WARM_MBPS} MB/s (simulated
rates). Cold: the simulator evicts the shards at load start. Warmed: the shards are evicted, the
extension's \`warmCache()\` reads them in over SSH while the old server keeps serving, then the
restart. ${RUNS} of each, alternating; each watched by the extension's session.

${summary}

${table}

The downtime of "Warm cache, then restart" is the warmed load; the warming itself happens while
the old server still answers. On a real host the ratio follows the storage vs page-cache read
rates and the fixed phases (KV cache, CUDA graphs, warm-up), which warming does not shorten.
`;
  let doc = '';
  try {
    doc = fs.readFileSync(OUT, 'utf8');
  } catch {
    doc = '# Benchmarks\n';
  }
  fs.writeFileSync(OUT, replaceSection(doc, HEADING, section));
  console.log(`\n${summary}\n\n${table}\n\nWritten to ${path.relative(process.cwd(), OUT)} (section "${HEADING}")`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
