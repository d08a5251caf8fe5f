// What the steady-state watch costs on an idle ready server, against the simulated GPU
// host behind a real OpenSSH sshd: remote processes, SSH channels and bytes per hour.
//
//   npm run bench:steady                       # defaults: --minutes 3 --runs 3 --settle 45
//   npm run bench:steady -- --minutes 2 --runs 2
//
// Options:
//   --minutes W   length of the measured window of each run, in minutes (default 3); the figures
//                 per hour are the window's counts x 60 / (the window's real length in minutes),
//                 i.e. extrapolated from W minutes
//   --runs N      runs of each case (default 3); the table has the medians
//   --settle S    seconds between ready and the window (default 45): the window measures the steady
//                 state, not the one-off work right after ready (the journal's retry backoff climbing
//                 to 60 s when it is denied); what these seconds cost is printed, not tabulated
//   --cases LIST  any of steady,denied,seed (default all three)
//   --out FILE    the markdown file whose "## Steady state (idle ready server)" section is rewritten
//                 (default BENCHMARKS.md; only that section is touched, through benchDoc.replaceSection)
// BENCH_STEADY_DEBUG=1 also lists every counted process (pid, name, parent) and the session's failed commands.
// With the defaults it takes about 12 minutes: the three cases run side by side, each on its own
// simulated host (own namespace, sshd, unit, SGLang simulator and counting proxy), so they do not
// see each other's traffic or processes; each run is a restart to ready, the settle, then W minutes.
//
// Cases:
//   steady  the extension's real ServerSession/LoadWatcher over the real SSH transport (built by
//           sessionFactory.createSession, as the extension does) restarts the unit and watches it
//           to ready with the settings' defaults (pollIntervalSeconds 2, healthIntervalSeconds 30:
//           steadyIntervalMs 30_000), then keeps watching the idle ready server;
//   denied  the same with the journal denied (harness setJournalAccess('denied-hint'): journalctl
//           prints the "not seeing messages from other users" hint and follows nothing), set before
//           the restart: the unit is then polled every interval and journalctl retried with backoff;
//   seed    the loop this extension replaces (scripts/bench.ts's seed loop: every 30 s a new ssh
//           connection, host-key check off, that curls a 3-token completion), without its `break`
//           at READY so that it goes on watching the ready server as the steady watch does.
//
// Measured in each window:
//   - remote processes: every process created on the simulated host under its sshd (per-connection
//     sshd processes, the session shells, sh, journalctl, systemctl, kill, curl...). BSD process
//     accounting (acct(2)) is switched on inside the host's pid namespace only (it applies to the
//     caller's pid namespace), so each process that exits leaves a record with its pid and parent
//     pid in that namespace and its command name; a process counts when its pid was allocated
//     inside the window (pids only grow in the fresh namespace: the window is bounded by the pids of
//     two marker processes) and its parent chain reaches an sshd; processes still alive at the end
//     are read from /proc. Cross-checks: sshd's "Starting session" lines (one per exec channel) and
//     the stand-ins' exec.log (systemctl, journalctl, sudo, nvidia-smi);
//   - SSH channels: exec and forwardOut (direct-tcpip) channels opened by the ssh2 clients of the
//     case (counted by wrapping ssh2's Client.prototype.exec/forwardOut in this process; the
//     transport's own kill helper opens its exec channels through the same method); the seed loop's
//     OpenSSH client opens one session channel per connection (sshd's "Starting session" lines);
//   - bytes: both directions through a counting TCP proxy between the client and sshd (everything
//     on the SSH connection: handshakes, keepalives, channel traffic). All traffic is on loopback.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'ssh2';
import type { WatchOptions, WatchOutcome } from '../src/monitor/watch/watchTypes';
import { startGpuHost, type GpuHost } from '../test/gpu-host/harness';
import { sessionForHost, type TestSession } from '../test/integration/simHost';
import { gitHead, replaceSection } from './benchDoc';
import { CountingProxy } from './countingProxy';

const HEADING = '## Steady state (idle ready server)';
const REPO = path.resolve(__dirname, '..');

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : def;
}
const MINUTES = Number(arg('minutes', '3'));
const RUNS = Math.max(1, Math.floor(Number(arg('runs', '3'))));
const SETTLE_MS = Number(arg('settle', '45')) * 1000;
const OUT = path.resolve(REPO, arg('out', 'BENCHMARKS.md'));
const CASE_NAMES = ['steady', 'denied', 'seed'] as const;
type CaseName = (typeof CASE_NAMES)[number];
const CASES = arg('cases', CASE_NAMES.join(','))
  .split(',')
  .filter(Boolean)
  .map((c) => {
    if (!(CASE_NAMES as readonly string[]).includes(c)) throw new Error(`unknown case ${c} (${CASE_NAMES.join(', ')})`);
    return c as CaseName;
  });
if (!(MINUTES > 0) || !(SETTLE_MS >= 0)) throw new Error('--minutes must be > 0 and --settle >= 0');
const WINDOW_MS = MINUTES * 60_000;
/** The seed loop has no transient: its window opens mid-period (15 s after it starts), away from its 30 s ticks. */
const SEED_LEAD_MS = 15_000;
/** A quick simulated load (a few seconds): only the idle server after it is measured. */
const SIM = {
  readMBps: 40,
  warmReadMBps: 40,
  warmupSeconds: 0.5,
  kvSeconds: 0.2,
  cudaGraphSeconds: 0.4,
  initSeconds: 0.2,
  fault: {},
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const t0 = Date.now();
const log = (s: string) =>
  process.stderr.write(`[bench-steady ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);

// ---------------------------------------------------------------- SSH channels opened by ssh2 clients

interface ChannelCount {
  exec: number;
  forwardOut: number;
}
/** By the port the client connected to (each case's proxy). */
const channelsByPort = new Map<number, ChannelCount>();
function countChannels(): void {
  const proto = Client.prototype as unknown as Record<'exec' | 'forwardOut', (...args: unknown[]) => unknown>;
  for (const kind of ['exec', 'forwardOut'] as const) {
    const original = proto[kind];
    proto[kind] = function (this: { config?: { port?: number } }, ...args: unknown[]) {
      const counter = channelsByPort.get(Number(this.config?.port));
      if (counter) counter[kind]++;
      return original.apply(this, args);
    };
  }
}

// ---------------------------------------------------------------- processes on the host (BSD accounting in its pid namespace)

/** acct(2): x86_64 163, arm64 89. */
const SYS_ACCT = process.arch === 'x64' ? 163 : process.arch === 'arm64' ? 89 : undefined;

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
}

/** Runs in the host's namespaces; prints the pid (in the namespace) of the process that did it. */
async function nsPid(host: GpuHost, perl: string, ...args: string[]): Promise<number> {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = await host.nsExec(`exec perl -e '${perl}' ${quoted}`);
  const pid = Number(r.stdout.trim());
  if (r.code !== 0 || !Number.isInteger(pid) || pid <= 1)
    throw new Error(`in the host's namespace: ${r.stderr.trim() || r.stdout.trim() || `exit ${r.code}`}`);
  return pid;
}
const acctOn = (host: GpuHost, file: string) =>
  nsPid(host, `my $f = shift; syscall(${SYS_ACCT}, $f) == 0 or die "acct: $!\\n"; print "$$\\n"`, file);
const acctOff = (host: GpuHost) =>
  nsPid(host, `my $z = 0; syscall(${SYS_ACCT}, $z) == 0 or die "acct off: $!\\n"; print "$$\\n"`);
const marker = (host: GpuHost) => nsPid(host, 'print "$$\\n"');

/** struct acct_v3 (64 bytes): pid at 16, ppid at 20, comm at 48..63. */
function readAcct(file: string): Proc[] {
  const buf = fs.readFileSync(file);
  const out: Proc[] = [];
  for (let o = 0; o + 64 <= buf.length; o += 64) {
    if (buf[o + 1] !== 3) throw new Error(`${file}: not acct v3 records (version ${buf[o + 1]})`);
    const comm = buf.subarray(o + 48, o + 64);
    const end = comm.indexOf(0);
    out.push({
      pid: buf.readUInt32LE(o + 16),
      ppid: buf.readUInt32LE(o + 20),
      comm: comm.subarray(0, end < 0 ? 16 : end).toString('latin1'),
    });
  }
  return out;
}

/** The processes alive in the host's pid namespace now, with their pids as seen inside it. */
function liveProcs(host: GpuHost): Proc[] {
  const rows: { host: number; ns: number; hostPpid: number; comm: string }[] = [];
  for (const hp of host.nsPids()) {
    try {
      const status = fs.readFileSync(`/proc/${hp}/status`, 'utf8');
      const nspid = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      if (!nspid) continue;
      rows.push({
        host: hp,
        ns: Number(nspid[nspid.length - 1]),
        hostPpid: ppid,
        comm: fs.readFileSync(`/proc/${hp}/comm`, 'utf8').trim(),
      });
    } catch {
      // gone meanwhile
    }
  }
  const nsOf = new Map(rows.map((r) => [r.host, r.ns]));
  return rows.map((r) => ({ pid: r.ns, ppid: nsOf.get(r.hostPpid) ?? 0, comm: r.comm }));
}

interface Processes {
  total: number;
  /** By name: the command name (comm), or the stand-in's name (exec.log) for the node stand-ins. */
  byName: Map<string, number>;
  /** Of which orphans: their session's shell had ended before them (parent at exit: the namespace's init). */
  orphans: number;
}

/** pid (in the namespace) -> stand-in name, from the stand-ins' exec.log. */
async function standInPids(host: GpuHost): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const e of await host.execEntries()) out.set(e.pid, e.name);
  return out;
}

/**
 * Processes whose pid is in (lo, hi) and that an SSH session started: their parent chain reaches
 * an sshd, or (orphans) the namespace's init, which adopts what outlives its session's shell
 * (acct records the parent at exit). What the harness starts from outside (nsExec: these markers)
 * has no parent in the namespace; the simulator's own processes descend from its supervisor.
 */
function sshProcesses(
  records: Proc[],
  live: Proc[],
  lo: number,
  hi: number,
  standIns: Map<number, string>,
  only?: { readonly pids: Set<number>; readonly orphans: boolean },
): Processes {
  const known = new Map<number, Proc>();
  for (const p of [...live, ...records]) known.set(p.pid, p);
  const isInit = (p: Proc) => p.pid === 1 || p.comm.startsWith('kimi-gpu-host');
  const origin = (p: Proc): 'sshd' | 'orphan' | undefined => {
    let cur: Proc | undefined = known.get(p.ppid);
    if (cur && isInit(cur)) return 'orphan';
    for (let i = 0; cur && i < 64; i++) {
      if (cur.comm === 'sshd') return 'sshd';
      cur = cur.ppid ? known.get(cur.ppid) : undefined;
    }
    return undefined;
  };
  const byName = new Map<string, number>();
  let total = 0;
  let orphans = 0;
  for (const p of [...known.values()].sort((a, b) => a.pid - b.pid)) {
    if (p.pid <= lo || p.pid >= hi || (only && !only.pids.has(p.pid))) continue;
    const from = origin(p);
    if (!from || (from === 'orphan' && only && !only.orphans)) continue;
    total++;
    if (from === 'orphan') orphans++;
    const name = standIns.get(p.pid) ?? p.comm;
    byName.set(name, (byName.get(name) ?? 0) + 1);
    if (process.env.BENCH_STEADY_DEBUG && !only)
      log(
        `  process ${p.pid} ${name} <- ${p.ppid} ${known.get(p.ppid)?.comm ?? '?'}${from === 'orphan' ? ' (orphan)' : ''}`,
      );
  }
  return { total, byName, orphans };
}

function inRange(pids: Map<number, string>, lo: number, hi: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [pid, name] of pids) if (pid > lo && pid < hi) out.set(name, (out.get(name) ?? 0) + 1);
  return out;
}

function sshdSessions(host: GpuHost, from: number, to: number, ports: Set<number>): number {
  return host
    .sshdLog()
    .slice(from, to)
    .filter((l) => /Starting session: /.test(l) && ports.has(Number(/ port (\d+)/.exec(l)?.[1] ?? NaN))).length;
}

// ---------------------------------------------------------------- one window

interface Counters {
  bytes: number;
  exec: number;
  forwardOut: number;
  sshdLog: number;
}

interface Measured {
  readonly ms: number;
  readonly processes: Processes;
  /** Started before the window by the SSH sessions and still running at its end (the connection's sshd, journalctl -f, the sampler...). */
  readonly standing: Processes;
  readonly standIns: Map<string, number>;
  readonly exec: number;
  readonly forwardOut: number;
  readonly sshdSessions: number;
  readonly bytes: number;
}

class Window {
  private startPid = 0;
  private startAt = 0;
  private start: Counters | undefined;
  private acctPid = 0;
  private liveAtStart: Proc[] = [];

  constructor(
    private readonly host: GpuHost,
    private readonly proxy: CountingProxy,
    private readonly channels: ChannelCount,
    private readonly acctFile: string,
  ) {}

  private counters(): Counters {
    return {
      bytes: this.proxy.bytes,
      exec: this.channels.exec,
      forwardOut: this.channels.forwardOut,
      sshdLog: this.host.sshdLog().length,
    };
  }

  /** Accounting on (at ready); the settle period runs from here to open(). */
  async arm(): Promise<void> {
    fs.writeFileSync(this.acctFile, '');
    this.acctPid = await acctOn(this.host, this.acctFile);
    this.startPid = this.acctPid;
    this.startAt = Date.now();
    this.start = this.counters();
    this.liveAtStart = liveProcs(this.host);
  }

  /** Ends the period under way (measured) and starts the next one. */
  async cut(): Promise<Measured> {
    const pid = await marker(this.host);
    const at = Date.now();
    const now = this.counters();
    const live = liveProcs(this.host);
    const m = await this.measure(this.startPid, pid, this.startAt, at, this.start!, now, live);
    this.startPid = pid;
    this.startAt = at;
    this.start = now;
    this.liveAtStart.push(...live);
    return m;
  }

  /** Ends the period under way and switches accounting off. */
  async close(): Promise<Measured> {
    const at = Date.now();
    const now = this.counters();
    const live = liveProcs(this.host);
    const pid = await acctOff(this.host);
    if (process.env.BENCH_STEADY_DEBUG)
      for (const p of live) log(`  alive at the end: ${p.pid} ${p.comm} <- ${p.ppid}`);
    return this.measure(this.startPid, pid, this.startAt, at, this.start!, now, live);
  }

  private async measure(
    lo: number,
    hi: number,
    from: number,
    to: number,
    a: Counters,
    b: Counters,
    live: Proc[],
  ): Promise<Measured> {
    const standIns = await standInPids(this.host);
    const records = readAcct(this.acctFile);
    const all = [...this.liveAtStart, ...live];
    return {
      ms: to - from,
      processes: sshProcesses(records, all, lo, hi, standIns),
      standing: sshProcesses(records, all, 0, lo, standIns, { pids: new Set(live.map((p) => p.pid)), orphans: false }),
      standIns: inRange(standIns, lo, hi),
      exec: b.exec - a.exec,
      forwardOut: b.forwardOut - a.forwardOut,
      sshdSessions: sshdSessions(this.host, a.sshdLog, b.sshdLog, this.proxy.upstreamPorts),
      bytes: b.bytes - a.bytes,
    };
  }
}

// ---------------------------------------------------------------- the cases

interface RunResult {
  readonly settle: Measured;
  readonly window: Measured;
  readonly note: string;
}

interface CaseContext {
  readonly name: CaseName;
  readonly host: GpuHost;
  readonly proxy: CountingProxy;
  readonly channels: ChannelCount;
}

async function startCase(name: CaseName): Promise<CaseContext> {
  const host = await startGpuHost({ shards: 6, shardBytes: 1024 * 1024, sim: SIM, unitName: `sglang-k26-${name}` });
  const proxy = new CountingProxy(host.sshPort);
  await proxy.listen();
  const channels: ChannelCount = { exec: 0, forwardOut: 0 };
  channelsByPort.set(proxy.port, channels);
  if (name === 'denied') await host.setJournalAccess('denied-hint');
  return { name, host, proxy, channels };
}

/** The extension's session (sessionFactory.createSession, as the extension builds it) through the case's proxy. */
async function extensionSession(
  ctx: CaseContext,
  viaProxy: boolean,
): Promise<{ test: TestSession; options: WatchOptions }> {
  const port = viaProxy ? ctx.proxy.port : ctx.host.sshPort;
  const test = await sessionForHost(ctx.host, {
    server: { port },
    knownHosts: `[127.0.0.1]:${port} ${ctx.host.hostPublicKey}\n`,
  });
  const s = test.settings;
  if (process.env.BENCH_STEADY_DEBUG) {
    const transport = test.session.transport as { exec: (c: string, o?: object) => Promise<{ code: number | null }> };
    const exec = transport.exec.bind(transport);
    transport.exec = async (c, o) => {
      const r = await exec(c, o);
      if (r.code !== 0) log(`  ${ctx.name}: exec ${JSON.stringify(c.slice(0, 50))} -> ${JSON.stringify(r)}`);
      return r;
    };
  }
  // The controller's options (src/fronts/vscode/controller.ts watch()): the settings' defaults, kimiService.watchAfterReady on.
  const options: WatchOptions = {
    pollIntervalMs: s.pollIntervalMs,
    stallMs: s.stallMs,
    loadTimeoutMs: s.loadTimeoutMs,
    unreachableTimeoutMs: s.unreachableTimeoutMs,
    ...(s.watchAfterReady ? { steadyIntervalMs: s.healthIntervalMs } : {}),
  };
  if (options.steadyIntervalMs !== 30_000)
    throw new Error(`expected the default steadyIntervalMs 30000, got ${options.steadyIntervalMs}`);
  return { test, options };
}

async function extensionRun(ctx: CaseContext, run: number): Promise<RunResult> {
  const { test, options } = await extensionSession(ctx, true);
  const acct = path.join(ctx.host.stateDir, `acct-${run}.bin`);
  const window = new Window(ctx.host, ctx.proxy, ctx.channels, acct);
  const ends: WatchOutcome[] = [];
  try {
    const outcome = await test.session.watch('restart', options, { onEnd: (o) => ends.push(o) });
    if (outcome.end !== 'ready')
      throw new Error(
        `${ctx.name} run ${run}: the load ended ${outcome.end} (${outcome.message ?? ''})\n${test.logLines.join('\n')}`,
      );
    await window.arm();
    await sleep(SETTLE_MS);
    const settle = await window.cut();
    await sleep(WINDOW_MS);
    const measured = await window.close();
    const state = test.session.state;
    const ok = test.session.watching && state?.verdict === 'ready' && ends.length === 1;
    const journal = state?.journal
      ? `journal ${state.journal.readable ? 'readable' : 'not readable'}`
      : 'journal status unknown';
    const note = `${ok ? 'still watched, ready' : `NOT steady: watching ${test.session.watching}, verdict ${state?.verdict}, ${ends.length} ends`}; ${journal}`;
    return { settle, window: measured, note };
  } finally {
    test.dispose();
    fs.rmSync(acct, { force: true });
    await sleep(1500); // the session's channels and its sshd close before the next restart
  }
}

function seedLoopScript(ctx: CaseContext): string {
  // scripts/bench.ts's seed loop, pointed at the host through the proxy, without its
  // `break` at READY: it goes on every 30 s as a watch of a ready server.
  const { host, proxy } = ctx;
  return (
    `while :; do sleep 30; r=$(timeout 12 ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -p ${proxy.port} -i ${host.clientKeyPath} root@127.0.0.1 ` +
    `'curl -s --max-time 8 http://127.0.0.1:${host.httpPort}/v1/completions -H "Content-Type: application/json" -d "{\\"model\\":\\"/root/models/Kimi-K2.6\\",\\"prompt\\":\\"hi\\",\\"max_tokens\\":3,\\"temperature\\":0}"'); ` +
    `echo "$r" | grep -q choices && echo READY || echo " loading..."; done`
  );
}

async function seedRun(ctx: CaseContext, run: number): Promise<RunResult> {
  // The unit restarted and loaded to ready (by the extension, no steady watch, directly to sshd), then left alone.
  const { test, options } = await extensionSession(ctx, false);
  try {
    const { steadyIntervalMs: _steady, ...loadOnly } = options;
    const outcome = await test.session.watch('restart', loadOnly);
    if (outcome.end !== 'ready')
      throw new Error(`seed run ${run}: the load ended ${outcome.end} (${outcome.message ?? ''})`);
  } finally {
    test.dispose();
  }
  await sleep(1500);
  const acct = path.join(ctx.host.stateDir, `acct-${run}.bin`);
  const window = new Window(ctx.host, ctx.proxy, ctx.channels, acct);
  await window.arm();
  const child = spawn('bash', ['-c', seedLoopScript(ctx)], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  let ready = 0;
  let loading = 0;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    ready += (d.match(/^READY$/gm) ?? []).length;
    loading += (d.match(/loading\.\.\./g) ?? []).length;
  });
  try {
    await sleep(SEED_LEAD_MS);
    const settle = await window.cut();
    const [r0, l0] = [ready, loading];
    await sleep(WINDOW_MS);
    const measured = await window.close();
    // sshd's sessions are the OpenSSH client's channels (one session channel per connection).
    const withChannels = { ...measured, exec: measured.sshdSessions };
    return {
      settle: { ...settle, exec: settle.sshdSessions },
      window: withChannels,
      note: `loop printed READY ${ready - r0}x, " loading..." ${loading - l0}x in the window`,
    };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
    fs.rmSync(acct, { force: true });
  }
}

// ---------------------------------------------------------------- report

const perHour = (n: number, ms: number) => (n * 3_600_000) / ms;
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const fmt = (x: number) => (x === 0 ? '0' : x >= 10 ? x.toFixed(0) : x.toFixed(1));
const kib = (b: number) => b / 1024;
const breakdown = (m: Map<string, number>) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';
function describe(m: Measured): string {
  return (
    `${(m.ms / 1000).toFixed(1)} s: ${m.processes.total} processes (${breakdown(m.processes.byName)}${m.processes.orphans ? `; ${m.processes.orphans} of them orphans` : ''}; exec.log: ${breakdown(m.standIns)}), ` +
    `channels exec ${m.exec} + forwardOut ${m.forwardOut} (sshd sessions ${m.sshdSessions}), ${kib(m.bytes).toFixed(1)} KiB; ` +
    `running all along: ${m.standing.total ? breakdown(m.standing.byName) : 'none'}`
  );
}

const TITLES: Record<CaseName, string> = {
  steady: 'extension, steady watch (journal readable)',
  denied: 'extension, steady watch, journal denied (`denied-hint`)',
  seed: 'seed loop: new SSH connection + curl completion every 30 s',
};

interface CaseSummary {
  readonly name: CaseName;
  readonly runs: RunResult[];
  readonly processes: number;
  readonly channels: number;
  readonly forwardOut: number;
  readonly kib: number;
  /** Per hour, by command name (medians). */
  readonly byComm: Map<string, number>;
  /** Running all along (the last run's window), by name. */
  readonly standing: Processes;
}

function summarize(name: CaseName, runs: RunResult[]): CaseSummary {
  const w = runs.map((r) => r.window);
  const comms = new Set(w.flatMap((m) => [...m.processes.byName.keys()]));
  const byComm = new Map(
    [...comms].map((c) => [c, median(w.map((m) => perHour(m.processes.byName.get(c) ?? 0, m.ms)))]),
  );
  return {
    name,
    runs,
    processes: median(w.map((m) => perHour(m.processes.total, m.ms))),
    channels: median(w.map((m) => perHour(m.exec + m.forwardOut, m.ms))),
    forwardOut: median(w.map((m) => perHour(m.forwardOut, m.ms))),
    kib: median(w.map((m) => perHour(kib(m.bytes), m.ms))),
    byComm,
    standing: w[w.length - 1]!.standing,
  };
}

async function runCase(name: CaseName): Promise<CaseSummary> {
  const ctx = await startCase(name);
  try {
    const runs: RunResult[] = [];
    for (let run = 1; run <= RUNS; run++) {
      log(
        `${name}: run ${run}/${RUNS}: restart to ready, ${name === 'seed' ? `${SEED_LEAD_MS / 1000} s lead` : `${SETTLE_MS / 1000} s settle`}, ${MINUTES} min window`,
      );
      const r = name === 'seed' ? await seedRun(ctx, run) : await extensionRun(ctx, run);
      runs.push(r);
      log(`${name}: run ${run}: window ${describe(r.window)}; ${r.note}`);
    }
    return summarize(name, runs);
  } finally {
    channelsByPort.delete(ctx.proxy.port);
    await ctx.proxy.close();
    await ctx.host.stop();
  }
}

async function main(): Promise<void> {
  if (SYS_ACCT === undefined) throw new Error(`process accounting: no acct syscall number for ${process.arch}`);
  countChannels();
  log(
    `cases ${CASES.join(', ')}; ${RUNS} run(s) each; window ${MINUTES} min after ${SETTLE_MS / 1000} s of settle; the cases run side by side on their own simulated hosts`,
  );
  const started = Date.now();
  // Staggered a little, so that the three loads do not compete for the 2 CPUs at the same moment.
  const summaries = await Promise.all(CASES.map(async (name, i) => (await sleep(i * 4000), runCase(name))));
  const elapsedMin = (Date.now() - started) / 60_000;

  const lines: string[] = [];
  lines.push(
    `\nSteady state, ${RUNS} run(s) per case, each a ${MINUTES} min window (figures per hour = window x 60 / its minutes; medians):`,
  );
  for (const s of summaries) {
    lines.push(`\n${TITLES[s.name]}`);
    s.runs.forEach((r, i) => {
      lines.push(`  run ${i + 1}: settle ${describe(r.settle)}`);
      lines.push(`         window ${describe(r.window)}; ${r.note}`);
    });
    lines.push(
      `  per hour (median): ${fmt(s.processes)} processes (${breakdown(new Map([...s.byComm].map(([k, v]) => [k, Math.round(v)])))}), ${fmt(s.channels)} channels (${fmt(s.forwardOut)} forwardOut), ${fmt(s.kib)} KiB`,
    );
  }
  lines.push(`\nwhole script: ${elapsedMin.toFixed(1)} min`);
  process.stdout.write(`${lines.join('\n')}\n`);

  const rows = summaries.map((s) => `| ${TITLES[s.name]} | ${fmt(s.processes)} | ${fmt(s.channels)} | ${fmt(s.kib)} |`);
  const what = summaries
    .map((s) => `${s.name}: ${breakdown(new Map([...s.byComm].map(([k, v]) => [k, Math.round(v)])))}`)
    .join('; ');
  const standing = summaries
    .map((x) => `${x.name}: ${x.standing.total ? breakdown(x.standing.byName) : 'none'}`)
    .join('; ');
  // How far apart the runs of a case were (the table has the medians).
  const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / Math.max(1e-9, median(xs));
  const counts = summaries.flatMap((x) => x.runs.map((r) => r.window)).length;
  const countSpread = Math.max(
    ...summaries.map((x) =>
      spread(x.runs.map((r) => perHour(r.window.processes.total + r.window.exec + r.window.forwardOut, r.window.ms))),
    ),
  );
  const bytesSpread = Math.max(
    ...summaries.map((x) => spread(x.runs.map((r) => perHour(r.window.bytes, r.window.ms)))),
  );
  const agreement =
    RUNS < 2
      ? ''
      : ` The runs of each case ${countSpread < 0.005 ? 'counted the same processes and channels' : `differed by up to ${(countSpread * 100).toFixed(0)} % in processes + channels`}, and by up to ${(bytesSpread * 100).toFixed(1)} % in bytes.`;
  const backstop =
    summaries.some((x) => x.name === 'steady') && SETTLE_MS + WINDOW_MS < 10 * 60_000
      ? '\nNot in the windows, so not in the first row: the `systemctl show` backstop that the steady watch runs every 10 minutes\nwhile the journal streams (about 6 more exec channels and 12 processes, sh + systemctl, per hour).'
      : '';
  const section = `${HEADING}

\`npm run bench:steady\` (scripts/bench-steady.ts; ${elapsedMin.toFixed(0)} min here), ${new Date().toISOString().slice(0, 10)}, commit ${gitHead()}: the cost of watching an idle ready
server, per hour, extrapolated from ${MINUTES}-minute windows (counts x 60 / ${MINUTES}; median of ${RUNS} run${RUNS > 1 ? 's' : ''} per case, ${counts} windows in all).

| case | remote processes/hour | SSH channels/hour (exec + forwardOut) | KiB/hour (both directions) |
|---|---|---|---|
${rows.join('\n')}

Measured on the simulated GPU host (real OpenSSH sshd, loopback only), from ${SETTLE_MS / 1000} s after a restart to ready with the
real ServerSession/LoadWatcher and the settings' defaults (steadyIntervalMs 30 000): processes are every process created
under the host's sshd in the window (BSD process accounting inside the host's pid namespace), channels the ssh2
client's exec + forwardOut opens (for the seed loop, sshd's sessions), bytes both directions through a TCP proxy in
front of sshd; the three cases ran side by side, each on its own simulated host, on this ${os.cpus().length}-core machine
(${os.cpus()[0]?.model ?? '?'}), which shifts timings but not these timer-driven counts.${agreement}${backstop}
Processes per hour by command: ${what}. Running all along, not counted above (alive under sshd from before the
window to its end): ${standing}.
`;
  // Other benchmarks own other sections of the same file: re-read it right before writing, and
  // write only this section.
  const doc = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
  fs.writeFileSync(OUT, replaceSection(doc, HEADING, section));
  log(`wrote "${HEADING}" to ${path.relative(process.cwd(), OUT) || OUT}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench-steady failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
