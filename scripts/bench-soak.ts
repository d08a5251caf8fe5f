// Hours: N simulated GPU hosts (real OpenSSH sshd + the SGLang simulator each)
// watched for a long time by ONE extension core, under a schedule of faults, sampled every minute.
//
//   npm run bench:soak                                  # defaults: --minutes 120 --servers 8
//   npm run bench:soak -- --minutes 10 --servers 4
//   npm run bench:soak -- --out BENCHMARKS.md           # also rewrites its "## bench:soak" section
//
// The extension core runs in a child process of its own (this file with --core, started with
// --expose-gc), so that its heap, handles and timers are the core's alone: the hosts' harness
// (sshd logs it keeps, its child processes) lives in this parent. The core is what the VS Code
// front builds, without VS Code: a Fleet (src/fleet/fleet.ts) configured with the servers, every
// server under background watch (BackgroundWatches.start -> fleet.watchAll, as at activation), a
// parser verification after every ready that ends a restart (kimiService.verifyParsersWhenReady,
// as fronts/vscode/eventRouter.ts), the settings' defaults (poll 2 s, health 30 s, watch after
// ready), the load history in a file (FileMemento, as the CLI) and the log in a file (the output
// channel's stand-in).
//
// The schedule (wall clock, not compressed), spread over the servers:
//   - at the start: every server restarted to ready (a few seconds apart);
//   - a restart of each server every 15 min, server i first at (i + 0.5) x 15/N min (so one restart
//     somewhere every 15/N min), through fleet.restart (the restart rule) as the palette command;
//   - an SSH drop of each server every 20 min, server i first at (i + 0.25) x 20/N min: the host's
//     sshd is stopped (every sshd process killed: the connection drops) for 20 s, then started;
//   - a crash after ready: at 50 % of the run server 1 is restarted and, as soon as the core says
//     ready (its verification under way), its main process is killed (SIGKILL);
//   - a hang: at 30 % of the run the main process of server N-1 is stopped (SIGSTOP) for 3 min,
//     then continued (SIGCONT).
// Every minute: the core's heap used (after a forced gc), active handles and timers
// (process.getActiveResourcesInfo()), SSH channels open per server (the transport's openChannels:
// exec, stream and forwarded channels; the peak of each minute from a 1 s poll), the history file
// and the log file; and on each host the processes the SSH logins run (every process in the host's
// pid namespace that descends from a per-connection sshd or was adopted by the host's init, the
// server's own tree, the listening sshd and the harness's probes excepted; the login user is root).
// At the end the core stops every watch and disposes the fleet, and each host is checked for
// processes left (waited for up to 20 s: sshd ends a session a moment after its channel closes).
import { unitWithParsers } from '../test/e2e/scenario';
import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ServerProfile } from '../src/config/config';
import { parseSettings } from '../src/config/parseSettings';
import { BackgroundWatches } from '../src/fleet/sessions/backgroundWatches';
import { Fleet } from '../src/fleet/fleet';
import { FileMemento, NO_QUESTIONS_UI } from '../src/fleet/servers/standalone';
import { errorText } from '../src/util/errors';
import { startGpuHost, type GpuHost } from '../test/gpu-host/harness';
import { MemoryMemento, serverEntry } from '../test/integration/simHost';
import { gitHead, replaceSection } from './benchDoc';

const HEADING = '## bench:soak';
/** Verdicts of a watch that is not in a load (it may be in its parser verification right after ready). */
const STEADY = new Set(['ready', 'ready (not watched)', 'unhealthy', 'failed', 'failed (not watched)']);

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

const t0 = Date.now();
const log = (s: string): void =>
  void process.stderr.write(`[soak ${((Date.now() - t0) / 60_000).toFixed(1).padStart(6)} min] ${s}\n`);

// ---------------------------------------------------------------- messages between the parent and the core

interface CoreSample {
  readonly heapMB: number;
  readonly rssMB: number;
  readonly handles: number;
  readonly timers: number;
  readonly resources: Record<string, number>;
  /** Per server, now. */
  readonly channels: Record<string, number>;
  /** Per server, the most seen by the 1 s poll since the last sample. */
  readonly peakChannels: Record<string, number>;
  /** Per server, channel slots held now (ChannelLimitedTransport). */
  readonly slots: Record<string, number>;
  readonly watching: number;
  readonly historyKB: number;
  readonly logKB: number;
  readonly verdicts: Record<string, string>;
}

type ToCoreBody =
  | { readonly type: 'restart'; readonly server: string }
  | { readonly type: 'sample' }
  | { readonly type: 'stop' };
type ToCore = ToCoreBody & { readonly id: number };

type FromCore =
  | { readonly type: 'up' }
  | { readonly type: 'reply'; readonly id: number; readonly value: unknown }
  | { readonly type: 'note'; readonly text: string };

interface CoreConfig {
  readonly settings: Record<string, unknown>;
  readonly dir: string;
}

// ---------------------------------------------------------------- the core (child process)

async function core(configFile: string): Promise<void> {
  const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as CoreConfig;
  const parsed = parseSettings(config.settings);
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const settings = parsed.settings;
  const send = (m: FromCore) => process.send!(m);
  const note = (text: string) => send({ type: 'note', text });
  const historyFile = path.join(config.dir, 'history.json');
  const logFile = path.join(config.dir, 'core.log');
  const logFd = fs.openSync(logFile, 'a');
  const fleet = new Fleet({
    ui: NO_QUESTIONS_UI,
    log: (level, message) => fs.writeSync(logFd, `${new Date().toISOString()} ${level}: ${message}\n`),
    history: new FileMemento(historyFile),
  });
  fleet.configure(settings);
  const byName = (name: string): ServerProfile => {
    const s = fleet.server(name);
    if (!s) throw new Error(`no server ${name}`);
    return s;
  };
  // As fronts/vscode/eventRouter.ts: a ready that is news gets its parsers verified.
  const verifying = new Set<string>();
  fleet.onEvent((event) => {
    if (event.type === 'end') {
      if (event.outcome.end !== 'ready' || !event.quiet)
        note(
          `${event.server.name}: watch end ${event.outcome.end}${event.quiet ? ' (quiet)' : ''}${event.outcome.message ? `: ${event.outcome.message}` : ''}`,
        );
      if (!event.quiet && event.outcome.end === 'ready' && settings.verifyParsersWhenReady) {
        verifying.add(event.server.name);
        void fleet
          .verifyParsers(event.server, (line) => fs.writeSync(logFd, `info: [${event.server.name}] ${line}\n`))
          .then(
            (r) => note(`${event.server.name}: verification ${r.verdict}: ${r.summary}`),
            (e: unknown) => note(`${event.server.name}: verification failed to run: ${errorText(e)}`),
          )
          .finally(() => verifying.delete(event.server.name));
      }
    }
    if (event.type === 'watching' && !event.watching) note(`${event.server.name}: no longer watched`);
  });
  const background = new BackgroundWatches(fleet, new MemoryMemento(), () => false);
  await background.takeOffers(settings);

  const transportOf = async (server: ServerProfile) => {
    const session = await fleet.sessionFor(server);
    if (!('transport' in session)) throw new Error('a multi-node session');
    return session.transport as { openChannels?: number; slotsInUse?: number };
  };
  const peaks = new Map<string, number>();
  const channelPoll = setInterval(() => {
    void Promise.all(
      settings.servers.map(async (s) => {
        const n = (await transportOf(s)).openChannels ?? 0;
        peaks.set(s.name, Math.max(peaks.get(s.name) ?? 0, n));
      }),
    );
  }, 1000);
  const kb = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size / 1024 : 0);

  const sample = async (): Promise<CoreSample> => {
    (globalThis as { gc?: () => void }).gc?.();
    const resources: Record<string, number> = {};
    for (const r of process.getActiveResourcesInfo()) resources[r] = (resources[r] ?? 0) + 1;
    const channels: Record<string, number> = {};
    const slots: Record<string, number> = {};
    const peakChannels: Record<string, number> = {};
    const verdicts: Record<string, string> = {};
    for (const s of settings.servers) {
      const t = await transportOf(s);
      channels[s.name] = t.openChannels ?? 0;
      slots[s.name] = t.slotsInUse ?? 0;
      peakChannels[s.name] = Math.max(peaks.get(s.name) ?? 0, channels[s.name]);
      const snap = fleet.snapshot(s);
      verdicts[s.name] =
        `${snap.state?.verdict ?? '-'}${snap.watching ? '' : ' (not watched)'}${verifying.has(s.name) ? ' (verifying)' : ''}`;
    }
    peaks.clear();
    const mem = process.memoryUsage();
    return {
      heapMB: mem.heapUsed / 1024 / 1024,
      rssMB: mem.rss / 1024 / 1024,
      handles: Object.values(resources).reduce((a, b) => a + b, 0),
      timers: resources.Timeout ?? 0,
      resources,
      channels,
      peakChannels,
      slots,
      watching: fleet.snapshots().filter((s) => s.watching).length,
      historyKB: kb(historyFile),
      logKB: kb(logFile),
      verdicts,
    };
  };

  const restart = async (name: string): Promise<{ end: string; message?: string }> => {
    try {
      const r = await fleet.restart(byName(name));
      const outcome = await r.outcome;
      return {
        end: `${r.kind === 'watched' ? 'followed, ' : ''}${outcome?.end ?? 'no outcome'}`,
        message: outcome?.message,
      };
    } catch (e) {
      return { end: 'error', message: errorText(e) };
    }
  };

  process.on('message', (m: ToCore) => {
    const reply = (value: unknown) => send({ type: 'reply', id: m.id, value });
    if (m.type === 'sample') void sample().then(reply);
    else if (m.type === 'restart') void restart(m.server).then(reply);
    else if (m.type === 'stop') {
      clearInterval(channelPoll);
      fleet.stopAll('the soak is over');
      background.dispose();
      fleet.dispose();
      fs.closeSync(logFd);
      const resources: Record<string, number> = {};
      for (const r of process.getActiveResourcesInfo()) resources[r] = (resources[r] ?? 0) + 1;
      reply({ resources });
    }
  });
  // The parent gone (killed, crashed) without a stop: nothing is left running for it.
  process.once('disconnect', () => {
    fleet.dispose();
    setTimeout(() => process.exit(0), 2000).unref();
  });
  background.start(settings);
  send({ type: 'up' });
}

// ---------------------------------------------------------------- the parent: hosts, schedule, samples

class CoreProcess {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (e: Error) => void }>();
  private up?: () => void;
  readonly ready = new Promise<void>((resolve) => (this.up = resolve));
  readonly exited: Promise<number | null>;

  constructor(private readonly child: ChildProcess) {
    child.on('message', (m: FromCore) => {
      if (m.type === 'up') this.up!();
      else if (m.type === 'note') log(`core: ${m.text}`);
      else {
        this.pending.get(m.id)?.resolve(m.value);
        this.pending.delete(m.id);
      }
    });
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        for (const p of this.pending.values()) p.reject(new Error(`the core exited (${code ?? signal})`));
        this.pending.clear();
        resolve(code);
      }),
    );
    child.on('error', (e) => log(`core: ${errorText(e)}`));
  }

  ask<T>(m: ToCoreBody): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      if (this.child.exitCode !== null || !this.child.connected) return reject(new Error('the core is not running'));
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ ...m, id });
    });
  }
}

interface Proc {
  readonly host: number;
  readonly ns: number;
  readonly ppid: number; // host pid
  readonly comm: string;
  readonly cmdline: string;
}

function procs(host: GpuHost): Proc[] {
  const out: Proc[] = [];
  for (const hp of host.nsPids()) {
    try {
      const status = fs.readFileSync(`/proc/${hp}/status`, 'utf8');
      const nspid = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
      out.push({
        host: hp,
        ns: Number(nspid?.[nspid.length - 1]),
        ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]),
        comm: fs.readFileSync(`/proc/${hp}/comm`, 'utf8').trim(),
        cmdline: fs.readFileSync(`/proc/${hp}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(),
      });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * What the SSH logins run on the host now: processes below a per-connection sshd (the connection's
 * own sshd processes included), or adopted by the host's init (outlived their session). Not
 * counted: init, the listening sshd and the harness's probes (no parent in the namespace), and the
 * server's tree (below the unit's supervisor).
 */
function loginProcesses(host: GpuHost): Proc[] {
  const all = procs(host);
  const byPid = new Map(all.map((p) => [p.host, p]));
  const init = all.find((p) => p.ns === 1);
  const server = (p: Proc): boolean => {
    for (let cur: Proc | undefined = p, i = 0; cur && i < 64; cur = byPid.get(cur.ppid), i++)
      if (cur.cmdline.includes('supervisor.js')) return true;
    return false;
  };
  return all.filter((p) => {
    // The host's init (pid 1 and its helper child) is the harness's, not a login's.
    if (p === init || p.comm.startsWith('kimi-gpu-host') || !byPid.has(p.ppid) || server(p)) return false;
    const parent = byPid.get(p.ppid)!;
    if (parent === init) return true; // adopted (the listening sshd's parent is outside the namespace)
    for (let cur: Proc | undefined = parent, i = 0; cur && i < 64; cur = byPid.get(cur.ppid), i++)
      if (cur.comm === 'sshd') return true;
    return false;
  });
}

/** The default unit with the Kimi parsers, so that the verification after ready passes. */
function withParsers(host: GpuHost): string {
  return unitWithParsers(host);
}

interface Row {
  readonly minute: number;
  /** The last sample, after the events under way at the end of the schedule. */
  readonly end?: boolean;
  readonly core: CoreSample;
  readonly remote: number[];
}

interface Event {
  readonly at: number; // ms from the start of the schedule
  readonly kind: 'restart' | 'drop' | 'crash' | 'hang';
  readonly server: number;
}

function schedule(minutes: number, servers: number): Event[] {
  const min = 60_000;
  const end = minutes * min;
  const events: Event[] = [];
  for (let i = 0; i < servers; i++) {
    for (let at = ((i + 0.5) * 15 * min) / servers; at < end - 2 * min; at += 15 * min)
      events.push({ at, kind: 'restart', server: i });
    const restarts = events.filter((e) => e.server === i).map((e) => e.at);
    for (let at = ((i + 0.25) * 20 * min) / servers; at < end - 2 * min; at += 20 * min) {
      // Not while the same server restarts (a restart refused for want of sshd tells nothing new).
      const clash = restarts.some((r) => Math.abs(r - at) < min);
      events.push({ at: clash ? at + 1.5 * min : at, kind: 'drop', server: i });
    }
  }
  events.push({ at: 0.5 * end, kind: 'crash', server: Math.min(1, servers - 1) });
  events.push({ at: 0.3 * end, kind: 'hang', server: servers - 1 });
  return events.sort((a, b) => a.at - b.at);
}

function slope(points: readonly [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  const sxy = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const sxx = points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  return sxx === 0 ? NaN : sxy / sxx;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) return false;
    await sleep(250);
  }
  return true;
}

async function parent(): Promise<void> {
  const minutes = Number(arg('minutes', '120'));
  const servers = Math.floor(Number(arg('servers', '8')));
  const out = arg('out', '');
  if (!(minutes >= 3) || !(servers >= 2)) throw new Error('--minutes must be >= 3 and --servers >= 2');
  const commit = gitHead(); // the code that runs, whatever is committed meanwhile
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-soak-'));
  const hosts: GpuHost[] = [];
  let child: ChildProcess | undefined;
  const hung = new Set<number>();
  try {
    log(`starting ${servers} simulated GPU hosts`);
    for (let i = 0; i < servers; i += 2) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(2, servers - i) }, (_, k) =>
          startGpuHost({
            shards: 4,
            shardBytes: 1024 * 1024,
            sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.5 },
            unitName: `sglang-soak-${i + k}`,
          }),
        ),
      );
      for (const h of batch) {
        await h.writeUnit(withParsers(h), { reload: true });
        hosts.push(h);
      }
    }
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, hosts.map((h) => h.knownHostsLine()).join('\n') + '\n');
    const names = hosts.map((_, i) => `s${i}`);
    const configFile = path.join(dir, 'core.json');
    const config: CoreConfig = {
      dir,
      settings: {
        servers: hosts.map((h, i) => serverEntry(h, names[i])),
        knownHostsFile,
        hostKeyPolicy: 'strict',
      },
    };
    fs.writeFileSync(configFile, JSON.stringify(config));
    child = fork(__filename, ['--core', configFile], {
      execArgv: ['--require', 'tsx/cjs', '--import', 'tsx/esm', '--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const c = new CoreProcess(child);
    await c.ready;
    log(`core up (pid ${child.pid}); restarting every server to ready`);
    const firstLoads = await Promise.all(
      names.map(
        async (name, i) => (
          await sleep(i * 3000),
          c.ask<{ end: string; message?: string }>({ type: 'restart', server: name })
        ),
      ),
    );
    firstLoads.forEach((r, i) => log(`${names[i]}: first load ${r.end}${r.message ? ` (${r.message})` : ''}`));

    const started = Date.now();
    const events = schedule(minutes, servers);
    log(`schedule: ${events.length} events over ${minutes} min (wall clock, not compressed)`);
    const rows: Row[] = [];
    const running: Promise<void>[] = [];
    const perform = async (e: Event): Promise<void> => {
      const host = hosts[e.server]!;
      const name = names[e.server]!;
      if (e.kind === 'restart') {
        log(`${name}: restart`);
        const r = await c.ask<{ end: string; message?: string }>({ type: 'restart', server: name });
        hung.delete(e.server);
        log(`${name}: restart ended ${r.end}${r.message ? ` (${r.message})` : ''}`);
      } else if (e.kind === 'drop') {
        log(`${name}: SSH drop (sshd stopped for 20 s)`);
        await host.stopSshd();
        await sleep(20_000);
        await host.startSshd();
        log(`${name}: sshd back`);
      } else if (e.kind === 'crash') {
        log(`${name}: restart, then a crash right after ready`);
        const r = await c.ask<{ end: string; message?: string }>({ type: 'restart', server: name });
        if (!r.end.endsWith('ready')) {
          log(`${name}: the load before the crash ended ${r.end}; no crash`);
          return;
        }
        await host.killServer('SIGKILL');
        log(`${name}: main process killed (SIGKILL) after ready`);
      } else {
        const pid = await host.mainPid();
        if (!pid) {
          log(`${name}: not running, no hang`);
          return;
        }
        await host.killServer('SIGSTOP');
        hung.add(e.server);
        log(`${name}: main process ${pid} stopped (SIGSTOP) for 3 min`);
        await sleep(180_000);
        if (hung.delete(e.server)) {
          await host.nsExec(`kill -s CONT ${pid}`);
          log(`${name}: main process ${pid} continued (SIGCONT)`);
        }
      }
    };
    const sampleRow = async (minute: number, end = false): Promise<Row> => {
      const core = await c.ask<CoreSample>({ type: 'sample' });
      const remote = hosts.map((h) => loginProcesses(h).length);
      const row = { minute, core, remote, end };
      rows.push(row);
      log(
        `sample ${minute}: heap ${core.heapMB.toFixed(2)} MB, handles ${core.handles}, timers ${core.timers}, channels ${Object.values(core.channels).join(' ')} (peak ${Object.values(core.peakChannels).join(' ')}, slots ${Object.values(core.slots).join(' ')}), remote ${remote.join(' ')}, history ${core.historyKB.toFixed(1)} KB, log ${core.logKB.toFixed(0)} KB; ${Object.entries(
          core.verdicts,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
      return row;
    };
    await sampleRow(0);
    let nextEvent = 0;
    for (let minute = 1; minute <= minutes; minute++) {
      const at = minute * 60_000;
      while (Date.now() - started < at) {
        const e = events[nextEvent];
        if (e && Date.now() - started >= e.at) {
          nextEvent++;
          running.push(
            perform(e).catch(
              (err: unknown) => void log(`event ${e.kind} on ${names[e.server]} failed: ${errorText(err)}`),
            ),
          );
          continue;
        }
        await sleep(Math.max(10, Math.min(500, (e ? e.at : at) - (Date.now() - started))));
      }
      await sampleRow(minute);
    }
    log('schedule over; waiting for the events under way');
    await Promise.all(running);
    for (const s of [...hung]) await hosts[s]!.nsExec(`kill -s CONT ${await hosts[s]!.mainPid()}`);
    await sampleRow(Math.round((Date.now() - started) / 60_000), true);
    log('stopping the core (every watch stopped, the fleet disposed)');
    const stopped = await c.ask<{ resources: Record<string, number> }>({ type: 'stop' });
    const stopAt = Date.now();
    child.disconnect();
    // With every watch stopped and the fleet disposed, nothing should keep the core alive.
    const exitedBy = await Promise.race([c.exited.then(() => true), sleep(20_000).then(() => false)]);
    log(
      exitedBy
        ? `core exited by itself ${((Date.now() - stopAt) / 1000).toFixed(1)} s after the stop`
        : 'core still alive 20 s after the stop: killed',
    );
    if (!exitedBy) child.kill('SIGKILL');
    await waitUntil(() => hosts.every((h) => loginProcesses(h).length === 0), 20_000);
    const left = hosts.map((h) => loginProcesses(h));
    const leftMs = Date.now() - stopAt;
    report({
      commit,
      rows,
      left,
      leftMs,
      logins: hosts.map((h) => h.handshakes()),
      stopped: stopped.resources,
      exitedBy,
      minutes,
      servers,
      out,
      events,
    });
  } finally {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    for (const h of hosts) await h.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(r: {
  commit: string;
  rows: Row[];
  left: Proc[][];
  exitedBy: boolean;
  leftMs: number;
  /** SSH logins of the core per host (sshd's "Accepted publickey", the harness's own excepted). */
  logins: number[];
  stopped: Record<string, number>;
  minutes: number;
  servers: number;
  out: string;
  events: Event[];
}): void {
  const { rows, minutes, servers } = r;
  const warmup = Math.min(15, Math.floor(minutes / 3));
  const after = rows.filter((x) => x.minute >= warmup);
  const growth = slope(after.map((x) => [x.minute / 60, x.core.heapMB]));
  const maxOf = (rec: Record<string, number>) => Math.max(...Object.values(rec));
  // A server in a load or a verification holds a third channel for its probes: the steady
  // figure is of the servers whose watch was steady at the sample (not loading).
  const steadyChannels = after.flatMap((x) =>
    Object.entries(x.core.channels)
      .filter(([name]) => STEADY.has(x.core.verdicts[name] ?? ''))
      .map(([, n]) => n),
  );
  const atSample = Math.max(...steadyChannels);
  const peak = Math.max(...rows.map((x) => maxOf(x.core.peakChannels)));
  const leftCount = r.left.reduce((a, l) => a + l.length, 0);
  const counts = (k: Event['kind']) => r.events.filter((e) => e.kind === k).length;
  const everyNth = Math.max(1, Math.round(rows.length / 25));
  const table = [
    '| minute | heap MB | handles | channels/server (max; peak in the minute) | timers | remote procs (all hosts) | history KB | log KB |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows
      .filter((_, i) => i % everyNth === 0 || i === rows.length - 1)
      .map(
        (x) =>
          `| ${x.minute}${x.end ? ' (end)' : ''} | ${x.core.heapMB.toFixed(1)} | ${x.core.handles} | ${maxOf(x.core.channels)}; ${maxOf(x.core.peakChannels)} | ${x.core.timers} | ${x.remote.reduce((a, b) => a + b, 0)} | ${x.core.historyKB.toFixed(1)} | ${x.core.logKB.toFixed(0)} |`,
      ),
  ];
  const ok = (b: boolean) => (b ? 'ok' : 'NOT MET');
  const verdicts = [
    `heap growth after the ${warmup} min warm-up: ${growth.toFixed(2)} MB/h (linear fit of ${after.length} samples; target < 5 MB/h): ${ok(growth < 5)}`,
    `channels per server: at most ${atSample} at the minute samples after warm-up, of the ${steadyChannels.length} (server, sample) pairs under steady watch (target <= 2): ${ok(atSample <= 2)}; peak ${peak} within the minutes (loads, verifications; the cap is 3)`,
    `growth after warm-up: history ${slope(after.map((x) => [x.minute / 60, x.core.historyKB])).toFixed(1)} KB/h (one record per load, bounded), log ${slope(after.map((x) => [x.minute / 60, x.core.logKB])).toFixed(0)} KB/h (the output channel's text); standing remote processes per watched host ${Math.max(...after.map((x) => Math.max(...x.remote)))} at most (the journal follower's and the sampler's pipelines and the connection's sshd)`,
    `SSH logins per host: ${r.logins.join(' ')} (one at the start, one more per reconnection after a drop; ${counts('drop')} drops in all)`,
    `processes left on the hosts ${(r.leftMs / 1000).toFixed(1)} s after the core stopped: ${leftCount} (target 0): ${ok(leftCount === 0)}${
      leftCount
        ? ` (${r.left
            .map((l, i) => l.map((p) => `s${i}:${p.comm}`).join(' '))
            .filter(Boolean)
            .join(' ')})`
        : ''
    }`,
    `resources in the core right after dispose: ${
      Object.entries(r.stopped)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }; ${r.exitedBy ? 'it then exited by itself' : 'it did NOT exit by itself within 20 s'}`,
  ];
  const section = [
    HEADING,
    '',
    `\`npm run bench:soak -- --minutes ${minutes} --servers ${servers}\` (scripts/bench-soak.ts), ${new Date().toISOString().slice(0, 10)}, commit ${r.commit}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'} (shared with other jobs):`,
    `${servers} simulated GPU hosts watched for ${minutes} min${minutes < 120 ? ' (shorter than the 2 h of the target)' : ''} by one extension core (a Fleet with background watches, settings' defaults),`,
    `${counts('restart')} restarts (each server every 15 min), ${counts('drop')} SSH drops (each server every 20 min, sshd down 20 s), a crash right after ready, a 3 min hang (SIGSTOP);`,
    'wall clock, not compressed. Heap after a forced gc; handles and timers from process.getActiveResourcesInfo(); channels from the',
    "transport (exec, streams, forwards); remote procs: the SSH logins' processes on all hosts (server excepted).",
    '',
    ...table,
    '',
    ...verdicts.map((v) => `- ${v}`),
    '',
  ].join('\n');
  process.stdout.write(`\n${section}\n`);
  if (r.out)
    fs.writeFileSync(
      r.out,
      replaceSection(fs.existsSync(r.out) ? fs.readFileSync(r.out, 'utf8') : '', HEADING, section),
    );
}

const coreIndex = process.argv.indexOf('--core');
(coreIndex >= 0 ? core(process.argv[coreIndex + 1]!) : parent()).then(
  () => {
    if (coreIndex < 0) process.exit(0);
  },
  (e: unknown) => {
    process.stderr.write(`bench-soak failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
