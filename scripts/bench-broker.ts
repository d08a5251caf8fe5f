// What a second window costs the GPU host, with and without the broker (docs/broker.md):
// `npm run bench:broker [-- --minutes M]`. Against one simulated GPU host (real sshd + SGLang
// simulator), in three cases: one process; two processes sharing one broker; two processes each
// with a broker of its own (as two windows were before the broker). Each process runs the core as a
// window does (test/integration/brokerPeer.ts): the first asks for a restart, every process
// follows it to ready, then the steady watch runs for M minutes (default 2). Counted on the host:
// SSH logins (sshd's "Accepted publickey"), remote processes per minute during the steady watch
// (every process that ended in the host's pid namespace, from BSD process accounting as in
// bench-steady.ts, less the bench's own two), the processes alive on the host halfway through
// (all but the simulator's and sshd's listener: the watch's sshd session, shells, journal follower,
// sampler), and the chat requests of the parser verification
// (chat-requests.jsonl).
import { unitWithParsers } from '../test/e2e/scenario';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../test/gpu-host/harness';
import { serverEntry } from '../test/integration/simHost';
import { waitFor } from '../test/util/waitFor';

const PEER = path.join(__dirname, '..', 'test', 'integration', 'brokerPeer.ts');
const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
};
const MINUTES = Number(arg('minutes', '2'));

/** acct(2): x86_64 163, arm64 89. */
const SYS_ACCT = process.arch === 'x64' ? 163 : 89;

/** Runs perl in the host's namespaces (as bench-steady.ts). */
async function nsPerl(host: GpuHost, perl: string, arg = ''): Promise<void> {
  const r = await host.nsExec(`exec perl -e '${perl}' ${arg ? `'${arg}'` : ''}`);
  if (r.code !== 0) throw new Error(`in the host's namespace: ${r.stderr.trim() || `exit ${r.code}`}`);
}

/** Processes that ended between acct on and off (struct acct_v3: 64 bytes, comm at 48..63), by name. */
async function countProcesses(host: GpuHost, file: string, during: () => Promise<void>): Promise<Map<string, number>> {
  fs.writeFileSync(file, '');
  await nsPerl(host, `my $f = shift; syscall(${SYS_ACCT}, $f) == 0 or die "acct: $!\\n"`, file);
  await during();
  await nsPerl(host, `my $z = 0; syscall(${SYS_ACCT}, $z) == 0 or die "acct off: $!\\n"`);
  const buf = fs.readFileSync(file);
  const byName = new Map<string, number>();
  for (let o = 0; o + 64 <= buf.length; o += 64) {
    const comm = buf.subarray(o + 48, o + 64);
    const end = comm.indexOf(0);
    const name = comm.subarray(0, end < 0 ? 16 : end).toString('latin1');
    byName.set(name, (byName.get(name) ?? 0) + 1);
  }
  // The bench's own: the two perls that turned accounting on and off.
  byName.set('perl', Math.max(0, (byName.get('perl') ?? 0) - 2));
  return byName;
}

/** The processes alive on the host for the watches: all but the simulator's, its supervisor's and sshd's listener. */
function watchProcesses(host: GpuHost): number {
  return host.nsPids().filter((pid) => {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      return !/sglang-sim|supervisor\.js|kimi-gpu-host-init|ns-init|\[listener\]|sshd -D/.test(cmd);
    } catch {
      return false;
    }
  }).length;
}

interface Peer {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
}

function startPeer(settingsFile: string, brokerDir: string): Peer {
  const child = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', '--import', 'tsx/esm', PEER, settingsFile, brokerDir],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines: Record<string, unknown>[] = [];
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop()!;
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Record<string, unknown>);
  });
  return { child, lines };
}

const countLines = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};

async function run(host: GpuHost, dir: string, label: string, processes: number, shared: boolean) {
  const settingsFile = path.join(dir, 'settings.json');
  const logins0 = host.handshakes();
  const chatLog = path.join(host.stateDir, 'chat-requests.jsonl');
  const chat0 = countLines(chatLog);
  // The previous case's sessions have ended.
  await waitFor(() => watchProcesses(host) === 0, {
    timeoutMs: 60_000,
    message: "the previous case's remote processes to end",
  });
  const peers: Peer[] = [];
  for (let i = 0; i < processes; i++) {
    const peer = startPeer(settingsFile, path.join(dir, shared ? 'broker' : `broker-${label}-${i}`));
    peers.push(peer);
    await waitFor(() => peer.lines.some((l) => l.role === 'owner' || l.role === 'client'), { timeoutMs: 60_000 });
  }
  // The first restarts; without a broker each other process polls the load itself (as a second window would).
  peers[0]!.child.stdin!.write('restart\n');
  await waitFor(() => peers[0]!.lines.some((l) => l.restart !== undefined), { timeoutMs: 120_000 });
  if (!shared) for (const peer of peers.slice(1)) peer.child.stdin!.write('poll\n');
  for (const peer of peers)
    await waitFor(() => peer.lines.some((l) => l.event === 'end' && l.end === 'ready'), { timeoutMs: 180_000 });
  await waitFor(() => peers.every((p) => p.lines.some((l) => l.event === 'verified')), { timeoutMs: 180_000 });
  const t0 = Date.now();
  let alive = 0;
  const byName = await countProcesses(
    host,
    path.join(host.stateDir, `acct-${label.replace(/\W+/g, '-')}.bin`),
    async () => {
      await new Promise((r) => setTimeout(r, (MINUTES * 60_000) / 2));
      alive = watchProcesses(host);
      await new Promise((r) => setTimeout(r, (MINUTES * 60_000) / 2));
    },
  );
  const total = [...byName.values()].reduce((a, b) => a + b, 0);
  const perMinute = (total / (Date.now() - t0)) * 60_000;
  const names = [...byName].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  const result = {
    label,
    logins: host.handshakes() - logins0,
    remoteProcessesPerMinute: Math.round(perMinute * 10) / 10,
    alive,
    names: names.map(([n, c]) => `${n} ${c}`).join(', '),
    verificationRequests: countLines(chatLog) - chat0,
  };
  for (const peer of peers) peer.child.kill('SIGTERM');
  await Promise.all(
    peers.map((p) => new Promise((r) => (p.child.exitCode !== null ? r(null) : p.child.once('exit', r)))),
  );
  return result;
}

async function main(): Promise<void> {
  const host = await startGpuHost({
    shards: 4,
    shardBytes: 1024 * 1024,
    sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3 },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-bench-broker-'));
  try {
    await host.writeUnit(unitWithParsers(host), { reload: true });
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    fs.writeFileSync(
      path.join(dir, 'settings.json'),
      JSON.stringify({ servers: [serverEntry(host)], knownHostsFile, hostKeyPolicy: 'strict', pollIntervalSeconds: 2 }),
    );
    const rows = [
      await run(host, dir, 'one process', 1, true),
      await run(host, dir, 'two processes, one broker', 2, true),
      await run(host, dir, 'two processes, no broker', 2, false),
    ];
    console.log(
      `\n| case (steady watch ${MINUTES} min, poll 2 s, health 30 s) | SSH logins | remote processes started / min | remote processes alive | verification requests | processes started (by name) |`,
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of rows)
      console.log(
        `| ${r.label} | ${r.logins} | ${r.remoteProcessesPerMinute} | ${r.alive} | ${r.verificationRequests} | ${r.names || 'none'} |`,
      );
  } finally {
    await host.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
