/**
 * One simulated GPU host of the ETA benchmark: real sshd, systemd stand-ins, the SGLang
 * simulator under one load shape; `first` restarts with no history (a server's first load),
 * then `later` restarts with this server's history, each watched by the extension's own
 * LoadInsights (forecast, prior, record) and LoadWatcher over the real SSH transport, and the
 * status bar's text (statusText, the function the status bar item shows) sampled every second.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { startGpuHost, type GpuHost } from '../../test/gpu-host/harness';
import { MemoryMemento } from '../../test/integration/simHost';
import { SshTransport } from '../../src/transport/ssh/sshTransport';
import { TunnelAgent } from '../../src/transport/httpAgent';
import { ServerHttpClient } from '../../src/engine/serverHttp';
import { ServerSession } from '../../src/monitor/watch/session';
import { LoadInsights } from '../../src/monitor/forecast/loadInsights';
import { forecastInWords } from '../../src/present/forecast';
import { targetFor } from '../../src/target/target';
import { recordOf } from '../../src/monitor/history/history';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import type { ServerProfile } from '../../src/config/config';
import { statusText } from '../../src/fronts/vscode/status/statusBarText';
import { BASE_SIM, SHARDS, SHARD_BYTES, type CaseSpec } from './cases';
import { truthOf, type Sample, type Truth } from './measure';

const simRequire = createRequire(__filename);
const SIM_DIR = path.resolve(__dirname, '..', '..', 'test', 'gpu-host', 'sglang-sim');
const simState = simRequire(path.join(SIM_DIR, 'state.js')) as {
  applyColdFiles(files: { path: string }[], coldFiles: unknown): void;
};
const simConfig = simRequire(path.join(SIM_DIR, 'config.js')) as {
  mergeConfig(user: Record<string, unknown>): Record<string, unknown>;
};

export interface LoadResult {
  readonly case: string;
  readonly kind: 'first' | 'later';
  readonly historyLoads: number;
  readonly samples: readonly Sample[];
  readonly truth: Truth;
  /** The breakdown the history keeps (recordOf): phase -> ms, and after the weights. */
  readonly phaseMs: Readonly<Record<string, number>>;
  readonly afterWeightsMs: number | undefined;
  readonly forecastText: string | undefined;
  readonly residentShare: number | undefined;
}

const FORESEE = !process.argv.includes('--no-foresee');

const WATCH = { pollIntervalMs: 1000, stallMs: 120_000, loadTimeoutMs: 10 * 60_000, unreachableTimeoutMs: 60_000 };

export async function runUnit(
  spec: CaseSpec,
  first: number,
  later: number,
  say: (line: string) => void,
  failed: string[] = [],
): Promise<LoadResult[]> {
  const sim = { ...BASE_SIM, ...spec.sim };
  const host = await startOneAtATime(() =>
    startGpuHost({
      shards: SHARDS,
      shardBytes: SHARD_BYTES,
      sim,
      ...(spec.quantization ? { quantization: spec.quantization } : {}),
    }),
  );
  const results: LoadResult[] = [];
  let session: ServerSession | undefined;
  try {
    session = sessionFor(host);
    const profile = session.profile;
    const files = fs
      .readdirSync(host.modelPath)
      .filter((f) => f.endsWith('.safetensors'))
      .sort()
      .map((f) => ({ path: path.join(host.modelPath, f) }));
    // the page cache the shape leaves after a load, for the first forecast too
    const between = simConfig.mergeConfig(sim).pageCacheAfterLoad;
    const server = new LoadInsights(new MemoryMemento());
    let historyLoads = 0;
    if (spec.unitEnv) {
      const env = spec.unitEnv.replace('{cache}', path.join(host.fixtureDir, 'kernel-cache'));
      await host.writeUnit(host.defaultUnitText.replace('SGLANG_ENABLE_JIT_DEEPGEMM=0', env), { reload: true });
    }
    if (spec.prime) {
      // a load before the measured ones: the server is running when the first forecast reads it
      await host.configureSimulator(spec.prime);
      const primed = await session.watch('restart', WATCH, {});
      if (primed.end !== 'ready') failed.push(`priming load: ${primed.end}`);
    }
    for (let n = 0; n < first + later; n++) {
      const kind = n < first ? 'first' : 'later';
      if (spec.simFor) await host.configureSimulator(spec.simFor(n, kind));
      if (spec.unitArgs)
        await host.writeUnit(
          host.defaultUnitText.replace('--trust-remote-code', `--trust-remote-code ${spec.unitArgs(n)}`),
          { reload: true },
        );
      if (between != null) simState.applyColdFiles(files, between);
      const insights = kind === 'first' ? new LoadInsights(new MemoryMemento()) : server;
      // (--no-foresee: the forecast with no kernel caches read)
      const forecast = forecastInWords(
        await insights.forecast(session.transport, profile.name, profile.unit, targetFor(profile), FORESEE),
      );
      if (kind === 'first')
        await server.forecast(session.transport, profile.name, profile.unit, targetFor(profile), FORESEE);
      const samples: Sample[] = [];
      let latest: LoadState | undefined;
      const read = () => {
        const now = Date.now();
        samples.push({
          at: now,
          text: statusText({ server: profile, state: latest, watching: true }, now),
          phase: phaseOf(latest),
        });
      };
      const timer = setInterval(read, 1000);
      let outcome;
      try {
        // (the steps it names go into the load's record, as Fleet's watch does)
        const onState = (s: LoadState) => {
          latest = s;
          server.observe(profile.name, s);
        };
        outcome = await session.watch('restart', WATCH, { onState }, forecast.prior);
      } finally {
        clearInterval(timer);
      }
      if (outcome.end !== 'ready') {
        // counted, not measured: the table says how many loads of a case did not get to ready
        say(`  ${spec.name} ${kind} load ${n + 1} ended ${outcome.end}: ${outcome.message ?? ''}`);
        failed.push(`${kind} load ${n + 1}: ${outcome.end}`);
        continue;
      }
      const state = outcome.state;
      const start = state.restartRequestedAt ?? state.watchStartedAt;
      const truth = truthOf(await host.journalEntries(), start);
      if (!truth) {
        failed.push(`${kind} load ${n + 1}: no ready line in the journal`);
        continue;
      }
      const rec = recordOf(state, 'ready', Date.now());
      const measured = !spec.unmeasured?.(n, kind);
      if (measured)
        results.push({
          case: spec.name,
          kind,
          historyLoads: kind === 'first' ? 0 : historyLoads,
          samples,
          truth,
          phaseMs: rec.phaseMs as Record<string, number>,
          afterWeightsMs: rec.afterWeightsMs,
          forecastText: forecast.text,
          residentShare:
            forecast.residentBytes !== undefined && forecast.totalBytes
              ? forecast.residentBytes / forecast.totalBytes
              : undefined,
        });
      await server.record(profile.name, profile.unit, outcome);
      historyLoads++;
      if (!measured) continue;
      say(
        `  ${spec.name} ${kind} load ${n + 1}: ${((truth.ready - truth.start) / 1000).toFixed(1)} s, forecast ${forecast.text ?? '-'}`,
      );
    }
  } catch (error) {
    say(`  ${spec.name}: the host failed after ${results.length} loads: ${(error as Error).message}`);
    failed.push(`host: ${(error as Error).message.split('\n')[0]}`);
  } finally {
    session?.dispose();
    await host.stop();
  }
  return results;
}

/**
 * The phase a reading is in: the watcher's phase, and the quiet step it names in it (a
 * DeepGEMM compile inside graph capture, the processing after the last shard), which the
 * tooltip shows as a step of its own.
 */
function phaseOf(state: LoadState | undefined): string | undefined {
  if (!state?.phase) return undefined;
  return state.activity && state.readyAt === undefined ? `${state.phase} (${state.activity.kind})` : state.phase;
}

let starting: Promise<unknown> = Promise.resolve();

/**
 * Hosts start one after the other, each tried up to 3 times: many sshd started at once on a
 * busy machine miss the harness's wait for their port.
 */
function startOneAtATime(start: () => Promise<GpuHost>): Promise<GpuHost> {
  const run = starting.then(async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await start();
      } catch (error) {
        if (attempt >= 3) throw error;
        console.log(`  host start failed (${(error as Error).message.split('\n')[0]}), again`);
      }
    }
  });
  starting = run.catch(() => undefined);
  return run;
}

function sessionFor(host: GpuHost): ServerSession {
  const knownHosts = path.join(host.fixtureDir, 'bench_known_hosts');
  fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
  const transport = new SshTransport({
    target: {
      alias: 'gpu',
      hostName: host.sshHost,
      port: host.sshPort,
      username: host.username,
      identityFiles: [host.clientKeyPath],
      identityFilesConfigured: true,
      jumps: [],
    },
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
  const http = new ServerHttpClient(host.serverUrl, new TunnelAgent(transport.openStream));
  return new ServerSession(profile, transport, http, (level, message) => {
    if (level === 'error') console.log(`  [${level}] ${message}`);
  });
}
