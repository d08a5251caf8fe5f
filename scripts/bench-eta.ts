// ETA benchmark: `npx tsx scripts/bench-eta.ts [--loads N] [--cold-mbps X] [--warm-mbps Y]`
//
// Starts the simulated GPU host (real sshd, systemd stand-ins, SGLang simulator doing real
// real block-I/O cold reads and page-cache warm reads), and runs N restarts with the real
// LoadWatcher over the real SSH transport. Before each restart the first half of the shards is
// evicted from the (real) page cache and the second half read into it, so the read rate changes
// mid-way (cold files, then cached ones). Residency is measured before the restart with
// util-linux fincore, as the extension does, and the history of the previous loads of the run
// is the ETA's prior, as the extension does with its global state.
//
// For each load it prints the ETA error at 25 %, 50 % and 75 % of the load's real duration:
//   err = (predicted ready time - real ready time) / real time remaining at that point
// (and, in brackets, the same difference over the whole load's duration), then the medians.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost } from '../test/gpu-host/harness';
import { SshTransport } from '../src/remote/sshTransport';
import { TunnelAgent } from '../src/remote/httpAgent';
import { SglangClient } from '../src/server/sglangHttp';
import { ServerSession } from '../src/monitor/session';
import { LoadHistoryStore, priorFrom, recordOf } from '../src/monitor/history';
import { parseResidency } from '../src/server/pageCache';
import { bytesFraction, type LoadState } from '../src/monitor/loadState';
import type { ServerProfile } from '../src/config';
import { MemoryMemento } from '../test/integration/simHost';
import { replaceSection } from './benchDoc';

const ETA_HEADING = '## ETA accuracy';
const REPO_ROOT = path.resolve(__dirname, '..');

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}

const LOADS = arg('loads', 3);
const SHARDS = 16;
const SHARD_BYTES = 32 * 1024 * 1024;
const COLD_MBPS = arg('cold-mbps', 6);
const WARM_MBPS = arg('warm-mbps', 60);
// the simulator's page-cache helpers (GNU dd eviction, plain reads by a process outside the service)
const simState = createRequire(__filename)(path.resolve(__dirname, '..', 'test', 'gpu-host', 'sglang-sim', 'state.js')) as {
  evict(files: string[]): void;
  preRead(files: string[]): void;
};


function fincore(files: string[]): string {
  return `method fincore\n${execFileSync('fincore', ['--bytes', '--noheadings', '--raw', '--output', 'RES,SIZE,FILE', '--', ...files]).toString()}`;
}

interface Point {
  readonly at: number;
  readonly readyEstimate: number | undefined;
  readonly bytes: number | undefined;
  readonly progress: number | undefined;
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const report: string[] = [];
  const say = (line: string): void => {
    console.log(line);
    report.push(line);
  };
  say(`ETA benchmark: ${LOADS} loads, ${SHARDS} shards x ${SHARD_BYTES / 2 ** 20} MiB; first half cold at ${COLD_MBPS} MB/s, second half warm at ${WARM_MBPS} MB/s`);
  const host = await startGpuHost({ shards: SHARDS, shardBytes: SHARD_BYTES, sim: { readMBps: COLD_MBPS, warmReadMBps: WARM_MBPS } });
  const knownHosts = path.join(host.fixtureDir, 'bench_known_hosts');
  fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
  const transport = new SshTransport({
    target: { alias: 'gpu', hostName: host.sshHost, port: host.sshPort, username: host.username, identityFiles: [host.clientKeyPath], identityFilesConfigured: true, jumps: [] },
    knownHostsFile: knownHosts,
    agentSocket: '',
    decideUnknownHostKey: async () => 'reject',
    requestPassphrase: async () => undefined,
  });
  const profile: ServerProfile = {
    name: 'sim',
    host: host.sshHost,
    port: host.sshPort,
    username: host.username,
    identityFile: host.clientKeyPath,
    unit: host.unit,
    url: host.serverUrl,
    urlHost: '127.0.0.1',
    urlPort: host.httpPort,
    sudo: false,
  };
  const http = new SglangClient(host.serverUrl, new TunnelAgent(transport.openStream));
  const session = new ServerSession(profile, transport, http, (level, message) => {
    if (level === 'warn' || level === 'error') console.log(`  [${level}] ${message}`);
  });
  const store = new LoadHistoryStore(new MemoryMemento());
  const files = fs.readdirSync(host.modelPath).filter((f) => f.endsWith('.safetensors')).sort().map((f) => path.join(host.modelPath, f));
  const errors: Record<string, number[]> = { '25': [], '50': [], '75': [] };
  const errorsBytes50: number[] = [];

  try {
    for (let load = 1; load <= LOADS; load++) {
      // First half cold, second half warm.
      simState.evict(files.slice(0, SHARDS / 2));
      simState.preRead(files.slice(SHARDS / 2));
      const residency = parseResidency(fincore(files));
      const history = store.list(profile.name, profile.unit);
      const prior = priorFrom(history, { ...(residency.residentBytes !== undefined ? { residentBytes: residency.residentBytes } : {}) });
      const points: Point[] = [];
      const record = (s: LoadState) => {
        if (process.env.BENCH_DEBUG) console.log(JSON.stringify({ t: Date.now(), phase: s.phase, io: s.io, eta: s.eta && { left: s.eta.readyAt - Date.now(), basis: s.eta.basis }, rate: s.readRate, gpu: s.gpu?.usedMiB }));
        points.push({ at: Date.now(), readyEstimate: s.eta?.readyAt, bytes: bytesFraction(s), progress: s.progress });
      };
      const outcome = await session.watch(
        'restart',
        { pollIntervalMs: 1000, stallMs: 60_000, loadTimeoutMs: 10 * 60_000, unreachableTimeoutMs: 60_000 },
        { onState: (s) => record(s) },
        prior,
      );
      const s = outcome.state;
      if (outcome.end !== 'ready' || s.readyAt === undefined) throw new Error(`load ${load} ended ${outcome.end}: ${outcome.message ?? ''}`);
      const start = s.restartRequestedAt ?? s.watchStartedAt;
      const total = s.readyAt - start;
      const parts: string[] = [];
      for (const f of [25, 50, 75]) {
        const t = start + (f / 100) * total;
        const p = [...points].reverse().find((x) => x.at <= t && x.readyEstimate !== undefined);
        if (!p || p.readyEstimate === undefined) {
          parts.push(`${f}%: no ETA yet`);
          continue;
        }
        const diff = p.readyEstimate - s.readyAt;
        const errRemaining = diff / (s.readyAt - t);
        errors[String(f)]!.push(errRemaining);
        parts.push(`${f}%: ${pct(errRemaining)} (${pct(diff / total)} of total)`);
      }
      const b50 = points.find((x) => x.bytes !== undefined && x.bytes >= 0.5 && x.readyEstimate !== undefined);
      if (b50 && b50.readyEstimate !== undefined) errorsBytes50.push((b50.readyEstimate - s.readyAt) / (s.readyAt - b50.at));
      await store.add(profile.name, profile.unit, recordOf(s, 'ready', Date.now(), residency.residentBytes));
      const rec = store.list(profile.name, profile.unit)[0]!;
      say(
        `load ${load}: ${(total / 1000).toFixed(1)} s (weights ${((rec.phaseMs['loading weights'] ?? 0) / 1000).toFixed(1)} s, after weights ${((rec.afterWeightsMs ?? 0) / 1000).toFixed(1)} s; ` +
          `cold ${((rec.coldBps ?? 0) / 1e6).toFixed(1)} MB/s, warm ${((rec.warmBps ?? 0) / 1e6).toFixed(1)} MB/s; prior from ${prior.loads ?? 0} loads) | ETA error ${parts.join(', ')}`,
      );
    }
    say(`median ETA error (of the remaining time): 25%: ${errors['25']!.length ? pct(median(errors['25']!)) : 'n/a'}, 50%: ${errors['50']!.length ? pct(median(errors['50']!)) : 'n/a'}, 75%: ${errors['75']!.length ? pct(median(errors['75']!)) : 'n/a'}`);
    if (errorsBytes50.length) say(`at 50% of the bytes read (cold->warm switch): median ${pct(median(errorsBytes50))} of the remaining time`);
    const worst50 = Math.max(...errors['50']!.map(Math.abs));
    say(`target |error| at 50% <= 15%: ${worst50 <= 0.15 ? 'met' : 'NOT met'} (worst ${pct(worst50)})`);
    const out = path.join(REPO_ROOT, 'BENCHMARKS.md');
    const doc = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
    const section = `${ETA_HEADING}\n\nError of the ETA = (predicted - actual ready time) / time actually left, at 25/50/75 % of the load (\`npm run bench:eta\`, ${new Date().toISOString().slice(0, 10)}):\n\n\`\`\`\n${report.join('\n')}\n\`\`\`\n`;
    fs.writeFileSync(out, replaceSection(doc, ETA_HEADING, section));
  } finally {
    session.dispose();
    await host.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
