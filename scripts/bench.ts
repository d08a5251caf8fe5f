// Benchmark: the seed's bash polling loop against the extension's monitor, side by
// side, in one run, on the simulated GPU host behind a real OpenSSH sshd. `npm run bench`
// (options: --restarts N (default 5), --crashes N (default 2), --out FILE (default BENCHMARKS.md)).
//
// Each watched restart: the extension (ServerSession driven headless, the settings' defaults:
// pollIntervalSeconds 2) restarts the unit and watches it; at the same moment the seed loop is
// started, exactly as the user ran it after restarting by hand. Both watch the SAME load. Each
// side reaches sshd through its own small TCP proxy, which counts the bytes and records its
// upstream source ports, so sshd's own log ("Accepted publickey ... port P", "Starting session
// ... port P") tells which side made which handshake and which session.
//
// Measured per side:
//  - readiness latency: journal timestamp of "The server is fired up and ready to roll!"
//    (host.firedUpAt()) -> the verdict ready (extension: state.readyAt; loop: the moment it
//    printed READY); median and p90 over the restarts;
//  - crash latency (fault crashAt weights): journal timestamp of systemd's "Main process exited"
//    -> failed; the loop has no such verdict (it prints " loading..." forever): "never";
//  - SSH handshakes per watched restart (sshd "Accepted publickey" lines from the side's ports);
//  - remote processes started per minute of watching: sshd sessions ("Starting session") of
//    the side, plus the stand-in commands logged in exec.log (systemctl/journalctl/sudo/
//    nvidia-smi: only the extension runs those; the loop's single command is curl, one process
//    per session, counted by its session);
//  - bytes through the side's proxy (both directions) per minute of watching;
//  - extension activation: dist/extension.js loaded with a stub `vscode` module (require hook)
//    and activate() timed over 20 runs (median) — a stub host, not VS Code;
//  - bundle size (node esbuild.mjs --production) and VSIX size (npm run package).
import { execFileSync, execSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../src/config/parseSettings';
import type { Settings } from '../src/config/config';
import { ServerSession } from '../src/monitor/watch/session';
import type { WatchOptions, WatchOutcome } from '../src/monitor/watch/watchTypes';
import { TunnelAgent } from '../src/transport/httpAgent';
import { ServerHttpClient } from '../src/engine/serverHttp';
import { createTransport } from '../src/fleet/sessions/sessionFactory';
import { startGpuHost, type GpuHost } from '../test/gpu-host/harness';
import { BENCHMARKS_INTRO, gitHead, replaceSection } from './benchDoc';
import { CountingProxy } from './countingProxy';

/** The section of BENCHMARKS.md this benchmark writes (the others' sections are left as they are). */
const HEADING = '## Restart watch: the seed loop vs the extension';

const REPO = path.resolve(__dirname, '..');

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : def;
}
const RESTARTS = Number(arg('restarts', '5'));
const CRASHES = Number(arg('crashes', '2'));
const OUT = path.resolve(REPO, arg('out', 'BENCHMARKS.md'));
/** --load-seconds S: loads of about S seconds (±30 %) instead of 21-39 s (a real Kimi load is ~600 s). */
const LOAD_SECONDS = Number(arg('load-seconds', '0'));
// ~28 s simulated loads: 16 shards x 8 MiB at 5 MB/s, plus init, KV, graphs, warm-up.
const SHARDS = 16;
const SHARD_BYTES = 8 * 1024 * 1024;
const SIM = { readMBps: 5, warmReadMBps: 5, warmupSeconds: 1.0 };
/** Seconds from restart to "fired up" wanted for restart 1, 2, ...; the read rate is derived from them. */
const LOAD_TARGETS = [23, 37, 27, 33, 21, 39, 25, 35, 29, 31];
/** Init, KV cache, CUDA graphs, uvicorn and warm-up of the simulator, about. */
const FIXED_SECONDS = 3.5;
/** Iterations of the loop on a crash run (the crash comes mid-load): it never reports the crash. */
const CRASH_LOOP_ITERATIONS = 2;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const log = (s: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

// ---------------------------------------------------------------- the seed loop

function seedLoopScript(proxyPort: number, key: string, httpPort: number, iterations: number): string {
  // Exactly the seed's loop, pointed at the simulated host through the proxy.
  return (
    `for i in $(seq 1 ${iterations}); do sleep 30; r=$(timeout 12 ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -p ${proxyPort} -i ${key} root@127.0.0.1 ` +
    `'curl -s --max-time 8 http://127.0.0.1:${httpPort}/v1/completions -H "Content-Type: application/json" -d "{\\"model\\":\\"/root/models/Kimi-K2.6\\",\\"prompt\\":\\"hi\\",\\"max_tokens\\":3,\\"temperature\\":0}"'); ` +
    `echo "$r" | grep -q choices && { echo READY; break; } || echo " loading..."; done`
  );
}

interface LoopRun {
  readonly startedAt: number;
  readyAt: number | undefined;
  loadingLines: { at: number }[];
  readonly done: Promise<void>;
  kill(): void;
}

function startSeedLoop(script: string): LoopRun {
  const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const run: LoopRun = {
    startedAt: Date.now(),
    readyAt: undefined,
    loadingLines: [],
    done: new Promise<void>((resolve) => child.on('close', () => resolve())),
    kill: () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    },
  };
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    const at = Date.now();
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === 'READY') run.readyAt ??= at;
      else if (line.includes('loading...')) run.loadingLines.push({ at });
    }
  });
  child.stderr!.on('data', () => undefined); // ssh's "Warning: Permanently added ..." lines
  return run;
}

// ---------------------------------------------------------------- the extension, headless

async function extensionSession(
  host: GpuHost,
  proxyPort: number,
  dir: string,
): Promise<{ session: ServerSession; settings: Settings }> {
  const knownHostsFile = path.join(dir, `known_hosts-${proxyPort}`);
  fs.writeFileSync(knownHostsFile, `[127.0.0.1]:${proxyPort} ${host.hostPublicKey}\n`);
  const parsed = parseSettings({
    servers: [
      {
        name: 'sim',
        host: '127.0.0.1',
        port: proxyPort,
        username: 'root',
        identityFile: host.clientKeyPath,
        unit: host.unitName,
        url: host.serverUrl,
      },
    ],
    knownHostsFile,
    hostKeyPolicy: 'strict',
  });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const server = parsed.settings.servers[0];
  const noLog = () => undefined;
  const transport = await createTransport(
    server,
    parsed.settings,
    { trustUnknownHostKey: async () => false, requestPassphrase: async () => undefined },
    noLog,
  );
  const http = new ServerHttpClient(server.url, new TunnelAgent(transport.openStream));
  return { session: new ServerSession(server, transport, http, noLog), settings: parsed.settings };
}

function watchOptions(settings: Settings): WatchOptions {
  return {
    pollIntervalMs: settings.pollIntervalMs,
    stallMs: settings.stallMs,
    loadTimeoutMs: settings.loadTimeoutMs,
    unreachableTimeoutMs: settings.unreachableTimeoutMs,
  };
}

// ---------------------------------------------------------------- sshd log attribution

function sshdCounts(host: GpuHost, from: number, ports: Set<number>): { handshakes: number; sessions: number } {
  const lines = host.sshdLog().slice(from);
  const portOf = (l: string) => Number(/ port (\d+)/.exec(l)?.[1] ?? NaN);
  return {
    handshakes: lines.filter((l) => l.includes('Accepted publickey') && ports.has(portOf(l))).length,
    sessions: lines.filter((l) => /Starting session: /.test(l) && ports.has(portOf(l))).length,
  };
}

async function execLogSince(host: GpuHost, fromMs: number, toMs: number): Promise<number> {
  return (await host.execLog()).filter((l) => {
    const t = Date.parse(l.slice(0, 24));
    return t >= fromMs && t <= toMs;
  }).length;
}

async function exitLineAt(host: GpuHost): Promise<number | undefined> {
  const entries = await host.journalEntries();
  for (let i = entries.length - 1; i >= 0; i--)
    if (entries[i].pid === 1 && /Main process exited/.test(entries[i].msg)) return Math.floor(entries[i].t / 1000);
  return undefined;
}

// ---------------------------------------------------------------- activation and size

/**
 * Runs in a plain `node` child (no tsx require hooks, which would transform the bundle on
 * load): loads dist/extension.js with a stub `vscode` module and times activate() `runs` times.
 */
const ACTIVATION_SCRIPT = String.raw`
const Module = require('node:module');
const path = require('node:path');
const [file, repo, runs] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const universal = new Proxy(function () {}, {
  get: (_t, prop) => (prop === 'then' ? undefined : prop === Symbol.toPrimitive ? () => '' : universal),
  apply: () => universal,
  construct: () => universal,
  set: () => true,
  defineProperty: () => true,
});
const config = { get: (_k, d) => d, has: () => false, inspect: () => undefined, update: async () => undefined };
// Own enumerable keys: esbuild's CommonJS interop copies the module's own properties.
const stub = { workspace: new Proxy({ getConfiguration: () => config }, { get: (t, p) => (p in t ? t[p] : universal) }) };
for (const name of ['window', 'commands', 'env', 'extensions', 'languages', 'l10n', 'Uri', 'EventEmitter', 'Disposable', 'ThemeColor', 'ThemeIcon',
  'StatusBarAlignment', 'ViewColumn', 'ProgressLocation', 'ConfigurationTarget', 'LogLevel', 'MarkdownString', 'CancellationTokenSource',
  'ExtensionKind', 'lm', 'LanguageModelToolResult', 'LanguageModelTextPart', 'Range']) stub[name] = universal;
const origLoad = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? stub : origLoad.call(this, request, ...rest); };
const memento = new Map();
const context = () => ({
  subscriptions: [],
  globalState: { get: (k, d) => (memento.has(k) ? memento.get(k) : d), update: async (k, v) => void memento.set(k, v), keys: () => [...memento.keys()], setKeysForSync: () => undefined },
  workspaceState: { get: (_k, d) => d, update: async () => undefined, keys: () => [] },
  secrets: { get: async () => undefined, store: async () => undefined, delete: async () => undefined, onDidChange: universal },
  extension: { id: 'kimi-tools.kimi-service', extensionPath: repo, extensionKind: 1 },
  extensionUri: universal, extensionPath: repo, asAbsolutePath: (p) => path.join(repo, p),
  storageUri: undefined, globalStorageUri: universal, logUri: universal, extensionMode: 1,
});
let t = process.hrtime.bigint();
let ext = require(file);
const coldLoadMs = Number(process.hrtime.bigint() - t) / 1e6;
const times = [];
for (let i = 0; i < runs; i++) {
  const ctx = context();
  t = process.hrtime.bigint();
  ext.activate(ctx);
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
  for (const d of ctx.subscriptions) { try { d.dispose(); } catch {} }
  try { ext.deactivate && ext.deactivate(); } catch {}
  delete require.cache[require.resolve(file)];
  ext = require(file);
}
process.stdout.write(JSON.stringify({ coldLoadMs, times }));
setTimeout(() => process.exit(0), 50);
`;

function activationTimes(runs: number): { coldLoadMs: number; activateMedianMs: number; activateP90Ms: number } {
  const script = path.join(os.tmpdir(), `kimi-bench-activation-${process.pid}.js`);
  fs.writeFileSync(script, ACTIVATION_SCRIPT);
  try {
    const out = execFileSync(process.execPath, [script, path.join(REPO, 'dist', 'extension.js'), REPO, String(runs)], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
    const { coldLoadMs, times } = JSON.parse(out) as { coldLoadMs: number; times: number[] };
    return { coldLoadMs, activateMedianMs: quantile(times, 0.5), activateP90Ms: quantile(times, 0.9) };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

function buildSizes(): { bundleBytes: number; vsixBytes: number | undefined; vsixNote: string } {
  execFileSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: REPO, stdio: 'ignore' });
  const bundleBytes = fs.statSync(path.join(REPO, 'dist', 'extension.js')).size;
  let vsixBytes: number | undefined;
  let vsixNote = '';
  try {
    execSync('npm run --silent package', { cwd: REPO, stdio: 'pipe' });
    vsixBytes = fs.statSync(path.join(REPO, 'dist', 'kimi-service.vsix')).size;
  } catch (e) {
    vsixNote = `npm run package failed: ${String((e as { stderr?: Buffer }).stderr ?? e)
      .split('\n')
      .slice(-3)
      .join(' ')}`;
  }
  return { bundleBytes, vsixBytes, vsixNote };
}

// ---------------------------------------------------------------- statistics

function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const kb = (b: number) => (b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(2)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
function ratio(seed: number | undefined, ext: number | undefined): string {
  if (seed === undefined || ext === undefined || !Number.isFinite(seed) || !Number.isFinite(ext)) return '—';
  if (ext === 0) return seed === 0 ? '1x' : '∞';
  const r = seed / ext;
  return r >= 10 ? `${r.toFixed(0)}x` : r >= 0.1 ? `${r.toFixed(1)}x` : `${r.toFixed(3)}x`;
}

// ---------------------------------------------------------------- main

interface SideTotals {
  bytes: number;
  handshakes: number;
  sessions: number;
  standIns: number;
  watchMs: number;
}

async function ensureCurl(): Promise<void> {
  try {
    execSync('command -v curl', { stdio: 'ignore' });
  } catch {
    log('curl is missing: installing it with apt-get (the seed loop runs curl on the GPU host)');
    const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
    execSync(`${sudo}apt-get update -qq && ${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl`, {
      stdio: 'inherit',
    });
  }
}

async function main(): Promise<void> {
  await ensureCurl();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-bench-'));
  log(`starting the simulated GPU host (${SHARDS} x ${SHARD_BYTES / 1024 / 1024} MiB shards)`);
  const host = await startGpuHost({ shards: SHARDS, shardBytes: SHARD_BYTES, sim: { ...SIM, coldFiles: 'all' } });
  const seedProxy = new CountingProxy(host.sshPort);
  const extProxy = new CountingProxy(host.sshPort);
  await seedProxy.listen();
  await extProxy.listen();
  const seed: SideTotals = { bytes: 0, handshakes: 0, sessions: 0, standIns: 0, watchMs: 0 };
  const ext: SideTotals = { bytes: 0, handshakes: 0, sessions: 0, standIns: 0, watchMs: 0 };
  const readySeed: number[] = [];
  const readyExt: number[] = [];
  const crashExt: number[] = [];
  const loadSeconds: number[] = [];
  let seedCrashLoadingLines = 0;
  let seedCrashReady = 0;
  const loop = (iterations: number) => seedLoopScript(seedProxy.port, host.clientKeyPath, host.httpPort, iterations);

  try {
    const watched = async (kind: 'ready' | 'crash', i: number): Promise<void> => {
      // Loads of 20-40 s that do not line up with the loop's 30 s period (a real load's length is
      // unrelated to it): the read rate is set so restart i takes about LOAD_TARGETS[i] seconds.
      const base = LOAD_TARGETS[(i - 1) % LOAD_TARGETS.length]!;
      const target = LOAD_SECONDS > 0 ? LOAD_SECONDS * (base / 30) : base;
      const readMBps = (SHARDS * SHARD_BYTES) / 1e6 / (target - FIXED_SECONDS);
      await host.configureSimulator({
        ...SIM,
        readMBps,
        warmReadMBps: readMBps,
        fault: kind === 'crash' ? { crashAt: 'weights', kind: 'oom', afterShards: SHARDS / 2 } : {},
      });
      const { session, settings } = await extensionSession(host, extProxy.port, tmp);
      const sshdFrom = host.sshdLog().length;
      const seedBytes0 = seedProxy.bytes;
      const extBytes0 = extProxy.bytes;
      let failedAt: number | undefined;
      const t0 = Date.now();
      // Both start together: the extension restarts the unit; the seed loop starts polling, as after a manual restart.
      const loopIterations = Math.ceil(target / 30) + 4;
      const loopRun = startSeedLoop(loop(kind === 'crash' ? CRASH_LOOP_ITERATIONS : loopIterations));
      const outcome: WatchOutcome = await session.watch('restart', watchOptions(settings), {
        onState: (s) => {
          if (s.verdict === 'failed' && failedAt === undefined) failedAt = Date.now();
        },
      });
      const extEnd = Date.now();
      session.dispose();
      await Promise.race([
        loopRun.done,
        sleep(kind === 'ready' ? loopIterations * 30_000 + 30_000 : CRASH_LOOP_ITERATIONS * 30_000 + 30_000),
      ]);
      loopRun.kill();
      const seedEnd = loopRun.readyAt ?? Date.now();
      await sleep(300);
      const seedSshd = sshdCounts(host, sshdFrom, seedProxy.upstreamPorts);
      const extSshd = sshdCounts(host, sshdFrom, extProxy.upstreamPorts);
      seed.handshakes += seedSshd.handshakes;
      seed.sessions += seedSshd.sessions;
      ext.handshakes += extSshd.handshakes;
      ext.sessions += extSshd.sessions;
      ext.standIns += await execLogSince(host, t0 - 1000, extEnd + 2000);
      seed.bytes += seedProxy.bytes - seedBytes0;
      ext.bytes += extProxy.bytes - extBytes0;
      seed.watchMs += seedEnd - loopRun.startedAt;
      ext.watchMs += extEnd - t0;
      if (kind === 'ready') {
        const fired = await host.firedUpAt();
        if (outcome.end !== 'ready' || fired === undefined)
          throw new Error(`restart ${i}: the extension ended ${outcome.end} (${outcome.message})`);
        readyExt.push(outcome.state.readyAt! - fired);
        loadSeconds.push((fired - t0) / 1000);
        if (loopRun.readyAt !== undefined) readySeed.push(loopRun.readyAt - fired);
        log(
          `restart ${i}: load ${((fired - t0) / 1000).toFixed(1)} s; ready after fired-up: extension ${sec(outcome.state.readyAt! - fired)}, ` +
            `seed loop ${loopRun.readyAt !== undefined ? sec(loopRun.readyAt - fired) : 'never'}; handshakes ext ${extSshd.handshakes} / seed ${seedSshd.handshakes}`,
        );
      } else {
        const exit = await exitLineAt(host);
        if (outcome.end !== 'failed' || exit === undefined || failedAt === undefined)
          throw new Error(`crash ${i}: the extension ended ${outcome.end}`);
        crashExt.push(failedAt - exit);
        seedCrashLoadingLines += loopRun.loadingLines.filter((l) => l.at > exit).length;
        if (loopRun.readyAt !== undefined) seedCrashReady++;
        log(
          `crash ${i}: extension failed ${sec(failedAt - exit)} after the exit line ("${outcome.state.failure?.summary}"); ` +
            `seed loop printed " loading..." ${loopRun.loadingLines.filter((l) => l.at > exit).length} time(s) after the crash and never reported it`,
        );
      }
    };

    for (let i = 1; i <= RESTARTS; i++) await watched('ready', i);
    for (let i = 1; i <= CRASHES; i++) await watched('crash', i);
  } finally {
    await seedProxy.close();
    await extProxy.close();
    await host.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  log('building the production bundle and the VSIX');
  const sizes = buildSizes();
  log('timing activation (20 runs, stub vscode)');
  const act = activationTimes(20);

  const watched = RESTARTS + CRASHES;
  const perMin = (n: number, ms: number) => n / (ms / 60_000);
  const rows: [string, string, string, string][] = [];
  const seedReadyMed = readySeed.length ? quantile(readySeed, 0.5) : NaN;
  const extReadyMed = quantile(readyExt, 0.5);
  rows.push([
    `readiness latency after "fired up", median (${RESTARTS} restarts)`,
    readySeed.length ? sec(seedReadyMed) : 'never',
    sec(extReadyMed),
    ratio(seedReadyMed, extReadyMed),
  ]);
  rows.push([
    'readiness latency, p90',
    readySeed.length ? sec(quantile(readySeed, 0.9)) : 'never',
    sec(quantile(readyExt, 0.9)),
    ratio(quantile(readySeed, 0.9), quantile(readyExt, 0.9)),
  ]);
  rows.push([
    `crash detection latency after the exit line, median (${CRASHES} crashes at weights)`,
    seedCrashReady > 0
      ? `never (said READY ${seedCrashReady}x?)`
      : `never (${seedCrashLoadingLines} x " loading..." after the crashes)`,
    `${sec(quantile(crashExt, 0.5))} (max ${sec(Math.max(...crashExt))})`,
    '∞',
  ]);
  rows.push([
    'SSH handshakes per watched restart',
    (seed.handshakes / watched).toFixed(1),
    (ext.handshakes / watched).toFixed(1),
    ratio(seed.handshakes, ext.handshakes),
  ]);
  rows.push([
    'remote processes started per minute of watching (sshd sessions + stand-in commands)',
    perMin(seed.sessions + seed.standIns, seed.watchMs).toFixed(1),
    perMin(ext.sessions + ext.standIns, ext.watchMs).toFixed(1),
    ratio(perMin(seed.sessions + seed.standIns, seed.watchMs), perMin(ext.sessions + ext.standIns, ext.watchMs)),
  ]);
  rows.push([
    'bytes over the network per minute of watching (both directions)',
    kb(perMin(seed.bytes, seed.watchMs)),
    kb(perMin(ext.bytes, ext.watchMs)),
    ratio(perMin(seed.bytes, seed.watchMs), perMin(ext.bytes, ext.watchMs)),
  ]);
  rows.push([
    'bytes over the network per watched restart',
    kb(seed.bytes / watched),
    kb(ext.bytes / watched),
    ratio(seed.bytes, ext.bytes),
  ]);
  rows.push([
    'extension activation, median of 20 (stub vscode host)',
    '—',
    `${act.activateMedianMs.toFixed(2)} ms (p90 ${act.activateP90Ms.toFixed(2)} ms; first require ${act.coldLoadMs.toFixed(1)} ms)`,
    '—',
  ]);
  rows.push(['bundle dist/extension.js (production)', '—', kb(sizes.bundleBytes), '—']);
  rows.push(['VSIX', '—', sizes.vsixBytes !== undefined ? kb(sizes.vsixBytes) : sizes.vsixNote, '—']);

  const table = [
    '| metric | seed loop | extension | ratio (seed / extension) |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

  const targets = [
    ['ready median < 1 s', extReadyMed < 1000],
    ['crash < 2 s', Math.max(...crashExt) < 2000],
    ['1 handshake per watched restart', ext.handshakes === watched],
    ['activation < 50 ms', act.activateMedianMs < 50],
    ['bundle < 1 MB', sizes.bundleBytes < 1_000_000],
  ] as const;
  const targetLines = targets.map(([name, ok]) => `- ${ok ? 'met' : 'MISSED'}: ${name}`).join('\n');

  const mem = os.totalmem();
  const spread = LOAD_SECONDS > 0 ? `about ${LOAD_SECONDS} s (±30 %)` : '20-40 s';
  const command = `npm run bench -- --restarts ${RESTARTS} --crashes ${CRASHES}${LOAD_SECONDS > 0 ? ` --load-seconds ${LOAD_SECONDS}` : ''}`;
  const machine = [
    `- measured: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${gitHead()}, \`${command}\``,
    `- machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, ${(mem / 1024 ** 3).toFixed(1)} GiB, shared with other work; node ${process.version}; ${sshVersion()}; kernel ${os.release()}`,
    `- simulated loads: ${SHARDS} × ${SHARD_BYTES / 1024 / 1024} MiB shards, read at a rate chosen per restart so the loads spread over ${spread}, then KV, CUDA graphs, warm-up ${SIM.warmupSeconds} s: ${loadSeconds.map((s) => s.toFixed(1)).join(', ')} s from restart to "fired up"`,
  ].join('\n');

  const section = `${HEADING}

${machine}

${table}

Targets:
${targetLines}

### Reading the table
The extension trades a few processes per load for knowing: it follows the unit's journal
(\`journalctl -f -o json\`, its address fields cut on the host) and runs one sampler (a POSIX sh
loop paced by \`nvidia-smi -lms\` that prints the main process's liveness, the bytes its tree has
read, whether the server's port listens and GPU memory, one line per round, starting no process
per round), both long-lived and ending themselves when their channel closes; it asks \`/health\`
through the tunnel every round once the port listens (every 5th round before);
\`systemctl show\` runs only around the restart and when the journal or the sampler says
something ended. The loop sends one small request every 30 s and knows nothing until then.
Readiness and crashes are detected from the journal stream and the sampler, so the latencies
above do not depend on the poll interval. The per-load commands (about 10 remote processes
whatever the load's length) and the journal's lines (a fixed number per load) weigh on short
loads: a 2-minute load comes to about 5 processes per minute, above the loop's 2; on loads of
real length (a Kimi K2.6 load is ~600 s, \`--load-seconds 600\`) they are spread thin.

### What was run
- One simulated GPU host (test/gpu-host/harness.ts): a real OpenSSH \`sshd\` on 127.0.0.1 inside
  a mount+pid namespace, the systemd/journalctl stand-ins, and the SGLang simulator started from
  the unit's ExecStart.
- ${RESTARTS} watched restarts to ready and ${CRASHES} crashes (\`crashAt: weights\`, OOM). For each, the
  extension's \`ServerSession\` (no VS Code; the settings' defaults: pollIntervalSeconds 2) runs
  \`watch('restart')\` with a fresh session, and at the same moment the seed loop starts:
  \`for i in $(seq 1 N); do sleep 30; r=$(timeout 12 ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null ... 'curl -s --max-time 8 .../v1/completions ...'); echo "$r" | grep -q choices && { echo READY; break; } || echo " loading..."; done\`
  (host-key check disabled exactly as the seed did; N long enough to cover the loads).
  Both watch the same load.
- Each side reaches sshd through its own counting TCP proxy; sshd's log lines ("Accepted
  publickey", "Starting session") are attributed to a side by the proxy's upstream source port.
- Readiness latency: from the journal timestamp of SGLang's \`The server is fired up and ready to
  roll!\` to the extension's \`ready\` verdict (after its real 1-token completion through the tunnel),
  or to the loop printing READY. Crash latency: from systemd's \`Main process exited\` journal line to
  \`failed\`; the loop cannot tell a crash from a load, it prints " loading..." until its iterations
  run out (${CRASH_LOOP_ITERATIONS} iterations on the crash runs, all after the crash).
- Remote processes: sshd exec sessions of the side plus the stand-in commands it ran (exec.log:
  systemctl, journalctl, sudo, nvidia-smi; only the extension runs those; the loop's only command
  is curl, one process per session). Commands inside a session that are not stand-ins (\`sh\`, cat,
  find) are not counted for either side.
- Activation: dist/extension.js (production build) is loaded in this Node process with a stub
  \`vscode\` module (a require hook) and \`activate()\` is timed 20 times (median). This is a stub
  host, not VS Code: it measures the extension's own start-up work, not the editor's.
- Sizes: \`node esbuild.mjs --production\` and \`npm run package\` (vsce).

### Reproduce
\`\`\`
npm run setup        # once: system packages (openssh-server, curl) and node modules
npm run bench        # options: -- --restarts 5 --crashes 2 --load-seconds 600 --out BENCHMARKS.md
\`\`\`
`;
  // Only this benchmark's section is replaced: the other benchmarks' sections stay as they are.
  const previous = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : BENCHMARKS_INTRO;
  fs.writeFileSync(OUT, replaceSection(previous, HEADING, section));
  process.stdout.write(
    `\n${table}\n\nTargets:\n${targetLines}\n\n${machine}\n\nWritten to ${path.relative(process.cwd(), OUT)}\n`,
  );
}

function sshVersion(): string {
  try {
    return (
      execFileSync('ssh', ['-V'], { stdio: ['ignore', 'pipe', 'pipe'] })
        .toString()
        .trim() || execFileSync('sh', ['-c', 'ssh -V 2>&1']).toString().trim()
    );
  } catch {
    return '?';
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
