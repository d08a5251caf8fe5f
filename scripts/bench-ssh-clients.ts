// What a restart-and-watch costs over each SSH client, ssh2 (in-process) and the system OpenSSH
// (ControlMaster), against the simulated GPU host behind a real loopback sshd:
//
//   npm run bench:ssh                          # defaults: --runs 5
//   npm run bench:ssh -- --runs 7 --out BENCHMARKS.md
//
// Each run, for each client in turn (the order alternates from run to run, so neither always
// goes first on a busy machine): a new session of the extension (sessionFactory.createSession,
// `kimiService.ssh.client` set to the client, the settings' defaults otherwise: poll 2 s) restarts
// the unit and watches it to ready. Counted between the restart and the watch's ready:
//   logins     sshd's "Accepted publickey" lines (the harness's own logins are not made meanwhile);
//   sessions   sshd's "Starting session" lines of those connections: one per remote command or
//              stream (each a shell on the host);
//   stand-ins  the simulated host's exec.log lines of those connections (systemctl, journalctl,
//              nvidia-smi, sudo run by the commands);
//   ready      ms from the simulator's "fired up and ready to roll" line (journal time) to the
//              watch's ready state (readyAt: when the test completion answered);
//   proof      of that, ms from the first TCP stream asked for after the ready line (/health,
//              then /v1/models and the 1-token completion, each a stream of its own) to ready:
//              the part the client's streams cost, without the wait for a probe round in flight;
//   restart    s from the restart to ready (the load itself included).
// Prints the medians, minimums and maximums, the OpenSSH/ssh2 ratio, and the machine's load;
// --out FILE rewrites its "## SSH clients: ssh2 and OpenSSH" section.
import * as os from 'node:os';
import { startGpuHost, type GpuHost } from '../test/gpu-host/harness';
import { acceptedClients, sshdSessions } from '../test/gpu-host/execLog';
import { sessionForHost } from '../test/integration/simHost';
import { watchOptionsOf } from '../src/fleet/sessions/sessionRegistry';
import type { Transport } from '../src/transport/transport';
import { gitHead, publishSection } from './benchDoc';

const HEADING = '## SSH clients: ssh2 and OpenSSH';
const CLIENTS = ['ssh2', 'openssh'] as const;
type Client = (typeof CLIENTS)[number];
type Figure = 'logins' | 'sessions' | 'standIns' | 'readyMs' | 'proofMs' | 'restartMs';
/** --verbose: each run's sshd sessions and stand-in lines, to see what differs. */
const VERBOSE = process.argv.includes('--verbose');
const FIGURES: readonly Figure[] = ['logins', 'sessions', 'standIns', 'readyMs', 'proofMs', 'restartMs'];

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** `transport` noting when each TCP stream (an HTTP request) is asked for. */
function withStreamTimes(transport: Transport, times: number[]): Transport {
  const openStream: Transport['openStream'] = (h, p) => {
    times.push(Date.now());
    return transport.openStream(h, p);
  };
  return new Proxy(transport, {
    get: (target, key) => {
      if (key === 'openStream') return openStream;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** One restart-and-watch to ready over `client`, in a session of its own. */
async function measure(host: GpuHost, client: Client): Promise<Record<Figure, number>> {
  const sshdMark = host.sshdLog().length;
  const execMark = (await host.execEntries()).length;
  const streamsAt: number[] = [];
  const test = await sessionForHost(host, {
    settings: { 'ssh.client': client },
    wrap: (t) => withStreamTimes(t, streamsAt),
  });
  try {
    const restartAt = Date.now();
    const outcome = await test.session.watch('restart', watchOptionsOf(test.settings));
    // Read at once: the steady watch that goes on after ready is not part of the restart.
    const sshd = host.sshdLog().slice(sshdMark);
    const execs = (await host.execEntries()).slice(execMark);
    const readyAt = outcome.state.readyAt;
    if (outcome.end !== 'ready' || readyAt === undefined)
      throw new Error(`${client}: ${outcome.end} ${outcome.message ?? ''}\n${test.logLines.join('\n')}`);
    if (!test.logLines.some((l) => l.includes(`SSH client: ${client} `)))
      throw new Error(`${client} did not connect:\n${test.logLines.join('\n')}`);
    const readyLineAt = await host.firedUpAt();
    if (readyLineAt === undefined) throw new Error(`${client}: no ready line in the journal`);
    const clients = acceptedClients(sshd);
    const proofFrom = streamsAt.find((at) => at >= readyLineAt);
    if (proofFrom === undefined) throw new Error(`${client}: no HTTP stream after the ready line`);
    if (VERBOSE)
      for (const l of [
        ...clients.flatMap((c) => sshdSessions(sshd, c)),
        ...execs.filter((e) => clients.includes(e.ssh)).map((e) => e.line),
      ])
        process.stderr.write(`  ${client}: ${l}\n`);
    return {
      logins: clients.length,
      sessions: clients.reduce((n, c) => n + sshdSessions(sshd, c).length, 0),
      standIns: execs.filter((e) => clients.includes(e.ssh)).length,
      readyMs: readyAt - readyLineAt,
      proofMs: readyAt - proofFrom,
      restartMs: readyAt - restartAt,
    };
  } finally {
    test.dispose();
  }
}

function stats(values: readonly number[]): { median: number; min: number; max: number } {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function cell(values: readonly number[], digits: number): string {
  const s = stats(values);
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

const LABELS: Record<Figure, [string, number, number]> = {
  logins: ['SSH logins', 1, 0],
  sessions: ['remote commands and streams (sshd sessions)', 1, 0],
  standIns: ['stand-in programs run (exec.log)', 1, 0],
  readyMs: ['ready line → ready state (ms)', 1, 0],
  proofMs: ['of which the HTTP proof: first stream after the ready line → ready (ms)', 1, 0],
  restartMs: ['restart → ready (s)', 1000, 1],
};

async function main(): Promise<void> {
  const runs = Math.max(1, Number(arg('runs', '5')));
  const out = arg('out', '');
  const loadBefore = os.loadavg()[0]!;
  const host = await startGpuHost({
    shards: 4,
    shardBytes: 2 * 1024 * 1024,
    sim: { readMBps: 50, warmReadMBps: 50, warmupSeconds: 0.5 },
  });
  const figures = Object.fromEntries(
    CLIENTS.map((c) => [c, Object.fromEntries(FIGURES.map((f) => [f, [] as number[]]))]),
  ) as Record<Client, Record<Figure, number[]>>;
  const loads: number[] = [];
  try {
    for (let run = 1; run <= runs; run++) {
      const order = run % 2 ? CLIENTS : [...CLIENTS].reverse();
      for (const client of order) {
        const m = await measure(host, client);
        loads.push(os.loadavg()[0]!);
        for (const f of FIGURES) figures[client][f].push(m[f]);
        process.stderr.write(
          `run ${run} ${client}: ${m.logins} login(s), ${m.sessions} sessions, ${m.standIns} stand-ins, ready +${m.readyMs} ms (HTTP proof ${m.proofMs} ms), restart->ready ${(m.restartMs / 1000).toFixed(1)} s\n`,
        );
      }
    }
  } finally {
    await host.stop();
  }
  const scale = (f: Figure, v: number[]) => v.map((x) => x / LABELS[f][1]);
  const ratio = (f: Figure) => {
    const a = median(figures.ssh2[f]);
    const b = median(figures.openssh[f]);
    return a === 0 ? (b === 0 ? '1.00' : '—') : (b / a).toFixed(2);
  };
  const cpu = `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`;
  const section = [
    HEADING,
    '',
    `${runs} restart-and-watch runs per client (\`npm run bench:ssh -- --runs ${runs}\`, ${new Date().toISOString().slice(0, 10)}, commit ${gitHead()}, ${cpu};`,
    `load average ${loadBefore.toFixed(1)} at the start, ${median(loads).toFixed(1)} median over the runs: the machine was shared with other work).`,
    "Each run is a new session of the extension with the settings' defaults (poll 2 s), `kimiService.ssh.client`",
    "set to the client, restarting the simulated host's unit and watching it to ready; counted from the restart to ready.",
    'Cells: median (min–max).',
    '',
    '| per restart | ssh2 | OpenSSH | OpenSSH / ssh2 (medians) |',
    '| --- | ---: | ---: | ---: |',
    ...FIGURES.map(
      (f) =>
        `| ${LABELS[f][0]} | ${cell(scale(f, figures.ssh2[f]), LABELS[f][2])} | ${cell(scale(f, figures.openssh[f]), LABELS[f][2])} | ${ratio(f)} |`,
    ),
    '',
    'Both clients log in once and run the same remote commands: the OpenSSH transport multiplexes every',
    'command and stream over its one ControlMaster. Each HTTP request (the proof of ready is three: /health,',
    '/v1/models, a 1-token completion) is a connection to a unix socket the master itself listens on',
    "(`ssh -O forward -L SOCKET:host:port`, made once per host and port in the transport's 0700 folder), so",
    'the master opens its channel as ssh2 opens one in process: no local process per request. What still',
    'differs is local: each remote command over OpenSSH is an `ssh` client process of the master, and every',
    "byte passes through the master's process, which on a busy machine waits for a CPU as well.",
    "The ready-line row is the journal line's way to the extension (journalctl's stream over the connection),",
    "then the HTTP proof: after the server's own ready line /health is asked at once, not held for the",
    "sampler's next look at the port or the next probe round. Before that (the run of 2026-12-06, commit",
    'b168720, 7 runs each, load average 16.7) the row held the wait for a probe round: 1103 ms over ssh2,',
    '2118 ms over OpenSSH (1.92). The restart row holds the login too (over OpenSSH: `ssh -G`, the master',
    "and its `-O check`, each a process) and the load's own time, which varies with the machine's load.",
    '',
  ].join('\n');
  publishSection(section, HEADING, out);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
