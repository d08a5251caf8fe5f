// Ready and crash latency of a Docker container target side by side with a systemd unit (issue
// 13), against the simulated GPU host behind a real OpenSSH sshd, with a real dockerd inside it.
//
//   npm run bench:docker                 # defaults: --runs 3
//   npm run bench:docker -- --runs 5 --out BENCHMARKS.md
//
// Each run, for each case in turn (they share the host and the server's port): the extension's
// real ServerSession (sessionFactory.createSession over the SSH transport) restarts the server
// with the settings' defaults (pollIntervalSeconds 2, healthIntervalSeconds 30), and then the
// server's main process is killed (SIGKILL, the same `kill` inside the host for both cases).
//   unit       the host's unit: the simulator started by the systemctl stand-in;
//   container  `container: "sg-bench"`: the simulator in a container (docker restart, docker
//              inspect, docker logs);
// Measured:
//   ready      from the server's "fired up and ready to roll" line (journal time for the unit,
//              `docker logs --timestamps` for the container) to the watch's ready;
//   failed     from the kill to the watch's failed end (after ready: the steady watch);
//   restart    from the restart to the watch's ready (the load itself included).
// The table has the medians; --out FILE rewrites its "## Docker container vs unit" section.
import * as os from 'node:os';
import type { WatchOptions, WatchOutcome } from '../src/monitor/watch/watchTypes';
import { startGpuHost } from '../test/gpu-host/harness';
import { startDockerEngine } from '../test/gpu-host/docker';
import { sessionForHost } from '../test/integration/simHost';
import { gitHead, publishSection } from './benchDoc';

const HEADING = '## Docker container vs unit';
const READY_LINE = 'The server is fired up and ready to roll!';
const OPTIONS: WatchOptions = {
  pollIntervalMs: 2000,
  stallMs: 120_000,
  loadTimeoutMs: 300_000,
  unreachableTimeoutMs: 60_000,
  steadyIntervalMs: 30_000,
};

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

async function until<T>(what: string, timeoutMs: number, check: () => T | undefined): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  const runs = Number(arg('runs', '3'));
  const out = arg('out', '');
  const host = await startGpuHost({
    shards: 6,
    shardBytes: 2 * 1024 * 1024,
    sim: { readMBps: 50, warmReadMBps: 50, warmupSeconds: 0.5 },
  });
  const engine = await startDockerEngine(host).catch(async (e: unknown) => {
    await host.stop();
    throw e;
  });
  const figures: Record<'unit' | 'container', { ready: number[]; failed: number[]; restart: number[] }> = {
    unit: { ready: [], failed: [], restart: [] },
    container: { ready: [], failed: [], restart: [] },
  };
  try {
    const created = await engine.docker(
      `create ${[...engine.simRunArgs('sg-bench'), ...engine.simCommand()].join(' ')}`,
    );
    if (created.code !== 0) throw new Error(`docker create: ${created.stderr}`);
    for (let run = 1; run <= runs; run++) {
      for (const kind of ['unit', 'container'] as const) {
        const test = await sessionForHost(
          host,
          kind === 'container' ? { server: { unit: undefined, container: 'sg-bench' } } : {},
        );
        try {
          const ends: { at: number; outcome: WatchOutcome }[] = [];
          const restartAt = Date.now();
          const first = await test.session.watch('restart', OPTIONS, {
            onEnd: (outcome) => void ends.push({ at: Date.now(), outcome }),
          });
          if (first.end !== 'ready' || first.state.readyAt === undefined)
            throw new Error(`${kind}: ${first.end} ${first.message ?? ''}`);
          let readyLineAt: number | undefined;
          if (kind === 'unit') readyLineAt = await host.firedUpAt();
          else {
            const logs = await engine.docker('logs --timestamps sg-bench 2>&1');
            const line = logs.stdout
              .split('\n')
              .filter((l) => l.includes(READY_LINE))
              .pop();
            readyLineAt = line ? Date.parse(line.slice(0, line.indexOf(' '))) : undefined;
          }
          if (readyLineAt === undefined) throw new Error(`${kind}: no ready line`);
          const pid = kind === 'unit' ? await host.mainPid() : await engine.containerPid('sg-bench');
          const killAt = Date.now();
          const killed = await host.nsExec(`kill -s KILL ${pid}`);
          if (killed.code !== 0) throw new Error(`kill ${pid}: ${killed.stderr}`);
          const failedAt = await until(
            `${kind} failed`,
            120_000,
            () => ends.find((e) => e.outcome.end === 'failed')?.at,
          );
          figures[kind].ready.push(first.state.readyAt - readyLineAt);
          figures[kind].failed.push(failedAt - killAt);
          figures[kind].restart.push(first.state.readyAt - restartAt);
          process.stderr.write(
            `run ${run} ${kind}: ready +${first.state.readyAt - readyLineAt} ms, failed +${failedAt - killAt} ms, restart->ready ${first.state.readyAt - restartAt} ms\n`,
          );
        } finally {
          test.dispose();
        }
      }
    }
  } finally {
    await engine.stop();
    await host.stop();
  }
  const row = (kind: 'unit' | 'container') =>
    `| ${kind} | ${median(figures[kind].ready).toFixed(0)} | ${median(figures[kind].failed).toFixed(0)} | ${(median(figures[kind].restart) / 1000).toFixed(1)} |`;
  const section = [
    HEADING,
    '',
    `Medians of ${runs} runs (\`npm run bench:docker -- --runs ${runs}\`, ${new Date().toISOString().slice(0, 10)}, commit ${gitHead()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}), settings' defaults`,
    "(poll 2 s, health 30 s). ready: ms from the server's ready line to the watch's ready; failed: ms from",
    "SIGKILL of the main process to the watch's failed end (steady watch); restart: s from the restart to ready.",
    '',
    '| target | ready (ms) | failed (ms) | restart -> ready (s) |',
    '| --- | ---: | ---: | ---: |',
    row('unit'),
    row('container'),
    '',
  ].join('\n');
  publishSection(section, HEADING, out);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
