/**
 * The command line, as agents and scripts run it: the built `node dist/cli.js` against a real
 * sshd and the simulated GPU host. Exit codes (ready 0, crash 1, wait timeout 2, unreachable 3,
 * changed host key 4, bad configuration 5 with nothing run), JSON lines, bounded `wait` output,
 * signals, a prompt exit, and two clients asking for a restart at once: one restart.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import { whenRestartIssued } from '../../src/fleet/restart/observe';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { waitFor } from '../util/waitFor';
import { markHost, serverEntry, headlessFleet } from './simHost';
import { freePort } from '../util/freePort';

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');
const OTHER_KEY = 'AAAAC3NzaC1lZDI1NTE5AAAAIHNnJvBm2dFvpQ0rEYnTVo8bNmmG3JQ+xsZmrFRvn7Xx';

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string[];
  readonly stderr: string;
  /** ms between the last line on stdout and the process's exit. */
  readonly exitLagMs: number;
  readonly startedAt: number;
}

interface Running {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly done: Promise<Run>;
}

describe('CLI (node dist/cli.js) against the simulated GPU host', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let knownHosts: string;
  /** A servers file for the simulated host (strict host keys, fast polls). */
  let config: string;

  function writeConfig(name: string, servers: Record<string, unknown>[], extra: Record<string, unknown> = {}): string {
    const file = path.join(dir, name);
    fs.writeFileSync(
      file,
      JSON.stringify(
        { servers, knownHostsFile: knownHosts, hostKeyPolicy: 'strict', pollIntervalSeconds: 0.5, ...extra },
        null,
        2,
      ),
    );
    return file;
  }

  function start(args: readonly string[], locale: NodeJS.ProcessEnv = {}): Running {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: dir,
      env: { ...env, ...locale },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let stderr = '';
    let pending = '';
    let lastLineAt = startedAt;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const parts = pending.split('\n');
      pending = parts.pop()!;
      if (parts.length) lastLineAt = Date.now();
      lines.push(...parts);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const done = new Promise<Run>((resolve) => {
      let exitedAt = 0;
      child.on('exit', () => (exitedAt = Date.now()));
      // 'close': exited and its stdout/stderr drained. A handle left open keeps the process until
      // main.ts's grace is over, which then says so on stderr (closedByItself).
      child.on('close', (code, signal) => {
        if (pending) lines.push(pending);
        resolve({ code, signal, stdout: lines, stderr, exitLagMs: (exitedAt || Date.now()) - lastLineAt, startedAt });
      });
    });
    return { child, lines, done };
  }

  const cli = (...args: string[]): Promise<Run> => start(args).done;
  /** The run ended as its work did, not by main.ts's grace timer after a handle was left open. */
  const closedByItself = (run: Run): void =>
    assert.doesNotMatch(run.stderr, /handles still open/, `exited ${run.exitLagMs} ms after its last line`);
  const show = (run: Run) => `exit ${run.code}\nstdout:\n${run.stdout.join('\n')}\nstderr:\n${run.stderr}`;
  const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;
  const json = (run: Run) => run.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);
  /** The extension's core (Fleet) on the simulated host, as VS Code runs it, asking no questions. */
  function coreFleet() {
    const settings = parseSettings({
      servers: [serverEntry(host)],
      knownHostsFile: knownHosts,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
    });
    assert.ok(settings.ok);
    const log = () => undefined;
    const fleet = headlessFleet(settings.settings, log);
    return { fleet, settings };
  }

  before(async () => {
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
    host = await startGpuHost({
      shards: 8,
      shardBytes: 2 * 1024 * 1024,
      sim: { readMBps: 16, warmReadMBps: 16, coldFiles: 'all' },
      // A stop held until a client has seen it (stopHold) must not be cut by systemd's SIGKILL
      // while a busy machine still starts that client's node and SSH login.
      timeoutStopSec: 120,
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-cli-'));
    knownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
    // A home of its own: no servers.json, VS Code settings or history of the machine's user.
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      XDG_STATE_HOME: path.join(dir, 'state'),
      LANG: 'C.UTF-8',
    };
    config = writeConfig('servers.json', [serverEntry(host)]);
  });
  after(async () => {
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('restart (exit 0, issued) then wait: state lines, a summary line, exit 0 ready; status says ready', async () => {
    await host.configureSimulator({ fault: {}, warmupSeconds: 0.5 });
    const before = await restarts();
    const restart = await cli('restart', '--config', config);
    assert.equal(restart.code, 0, show(restart));
    assert.match(
      restart.stdout[0]!,
      /^sim: restart issued \(systemctl restart sglang-k26-ddtree\.service on 127\.0\.0\.1\)/,
      show(restart),
    );
    assert.match(restart.stdout.at(-1)!, /kimi-service wait --server sim/);
    assert.equal((await restarts()) - before, 1, 'restart ran systemctl restart once, before exiting');
    closedByItself(restart);

    const wait = await cli('wait', '--config', config, '--timeout', '60');
    assert.equal(wait.code, 0, show(wait));
    assert.match(wait.stdout.at(-1)!, /^sim is ready: it answered a real completion/, show(wait));
    // The load's breakdown ("sim: loaded in 3s: ...") comes before it only when the wait saw the
    // load from its start: this wait's process starts about a second after the restart's, a
    // boundary (LATE_WATCH_MS) that a busy machine falls on either side of.
    const body = wait.stdout.slice(0, -1);
    const breakdown = body.at(-1)?.startsWith('sim: loaded in ') ? body.pop() : undefined;
    if (breakdown !== undefined) assert.match(breakdown, /^sim: loaded in \d+s: .*; the first load on record here$/);
    assert.ok(
      body.every((l) => /^\[\+\d/.test(l)),
      show(wait),
    );
    assert.ok(
      wait.stdout.some((l) => /sim: ready/.test(l)),
      show(wait),
    );
    closedByItself(wait);

    const status = await cli('status', '--config', config, '--json');
    assert.equal(status.code, 0, show(status));
    const [report] = json(status);
    assert.equal(report!.state, 'ready', show(status));
    assert.equal(report!.server, 'sim');
    assert.equal(report!.unit, 'sglang-k26-ddtree.service');
    closedByItself(status);
    assert.equal((await restarts()) - before, 1, 'wait and status restart nothing');
  });

  it('LANG=zh_CN.UTF-8: status says its words in Chinese, --json keeps the English state; LC_ALL=C wins', async () => {
    const zh = await start(['status', '--config', config], { LANG: 'zh_CN.UTF-8' }).done;
    assert.equal(zh.code, 0, show(zh));
    assert.match(zh.stdout[0]!, /^sim: 就绪 · 已就绪 \d/, show(zh));
    const zhJson = await start(['status', '--config', config, '--json'], { LANG: 'zh_CN.UTF-8' }).done;
    const [report] = json(zhJson);
    assert.equal(report!.state, 'ready', show(zhJson));
    assert.match(String(report!.summary), /^sim: 就绪/, show(zhJson));
    const c = await start(['status', '--config', config], { LANG: 'zh_CN.UTF-8', LC_ALL: 'C' }).done;
    assert.match(c.stdout[0]!, /^sim: ready · ready for \d/, show(c));
  });

  it('--json lines: each parses and carries state; the last is the wait report', async () => {
    await host.configureSimulator({ fault: {}, warmupSeconds: 0.5 });
    const run = await cli('restart', '--wait', '--json', '--config', config, '--timeout', '60');
    assert.equal(run.code, 0, show(run));
    const objects = json(run);
    assert.ok(objects.length >= 3, show(run));
    for (const o of objects) assert.equal(typeof o.state, 'string', JSON.stringify(o));
    assert.equal(objects[0]!.event, 'restart');
    assert.equal(objects[0]!.action, 'restarted');
    const last = objects.at(-1)!;
    assert.equal(last.event, 'result');
    assert.equal(last.result, 'ready');
    assert.equal(last.state, 'ready');
    assert.equal((last.report as { state: string }).state, 'ready');
    assert.match(String(last.next), /is ready/);
    const logs = await cli('logs', '-n', '5', '--json', '--config', config);
    assert.equal(logs.code, 0, show(logs));
    const [entry] = json(logs);
    assert.equal(entry!.event, 'logs');
    assert.ok(Array.isArray(entry!.journal) && (entry!.journal as string[]).length === 5, show(logs));
    const text = await cli('logs', '-n', '3', '--config', config);
    assert.equal(text.code, 0, show(text));
    assert.equal(text.stdout.length, 3, show(text));
  });

  it('a crash during the load: wait exits 1 with the cause; a wait after it exits 1 too', async () => {
    await host.configureSimulator({ fault: { crashAt: 'weights', afterShards: 2, kind: 'oom' } });
    // Followed from the restart on: the crash and its cause as they happen.
    const run = await cli('restart', '--wait', '--config', config, '--timeout', '60');
    assert.equal(run.code, 1, show(run));
    assert.match(
      run.stdout.at(-1)!,
      /^sim failed: the service exited with status 1 \(.*(OutOfMemoryError|CUDA out of memory).*\)\. Do not wait again; read the logs/,
      show(run),
    );
    // A wait that starts after the crash watches the failed unit: failed at once.
    const wait = await cli('wait', '--config', config, '--timeout', '60');
    assert.equal(wait.code, 1, show(wait));
    assert.match(
      wait.stdout.at(-1)!,
      /^sim failed: the service exited with status 1.*Do not wait again; read the logs/,
      show(wait),
    );
    const status = await cli('status', '--config', config);
    assert.equal(status.code, 0, show(status));
    assert.match(status.stdout[0]!, /^sim: failed/, show(status));
    // Its parsers are not checked: exit 1, the state, and where to look instead.
    const verify = await cli('verify', '--config', config);
    assert.equal(verify.code, 1, show(verify));
    assert.deepEqual([verify.stdout.length, verify.stdout[0]?.startsWith('sim: failed')], [1, true], show(verify));
    assert.match(
      verify.stderr,
      /sim is not serving, so its parsers cannot be checked: .*logs --server sim.* Nothing was run\./,
    );
    // The logs it points to have the cause.
    const logs = await cli('logs', '-n', '100', '--config', config);
    assert.equal(logs.code, 0, show(logs));
    assert.match(logs.stdout.join('\n'), /OutOfMemoryError|CUDA out of memory/, show(logs));
  });

  it('a wait shorter than the load exits 2 and says to call wait again', async () => {
    await host.configureSimulator({ fault: { hangAt: 'weights', afterShards: 2 } });
    const restart = await cli('restart', '--config', config);
    assert.equal(restart.code, 0, show(restart));
    const started = Date.now();
    const wait = await cli('wait', '--config', config, '--timeout', '4');
    assert.equal(wait.code, 2, show(wait));
    assert.match(
      wait.stdout.at(-1)!,
      /^Still loading.* call kimi-service wait again \(the load goes on; do not restart\)/,
      show(wait),
    );
    assert.ok(Date.now() - started < 12_000, `a 4 s wait took ${Date.now() - started} ms`);
    // verify during the load: refused as the LM and MCP tools refuse it, exit 2 (wait first).
    const verify = await cli('verify', '--config', config);
    assert.equal(verify.code, 2, show(verify));
    assert.deepEqual([verify.stdout.length, /^sim: loading/.test(verify.stdout[0] ?? '')], [1, true], show(verify));
    assert.match(
      verify.stderr,
      /the parsers can be checked only on a ready server: run `kimi-service wait --server sim`, then verify again\. Nothing was run\./,
    );
  });

  it('a load that stalls during wait ends it with exit 6 and what was last seen, since when', async () => {
    await host.configureSimulator({ fault: { hangAt: 'init' } });
    const stalling = writeConfig('stall.json', [serverEntry(host)], { stallSeconds: 10 });
    // --force: the test before leaves a load hanging in its weights, which a plain restart would follow.
    const wait = await cli('restart', '--force', '--wait', '--timeout', '90', '--yes', '--config', stalling);
    assert.equal(wait.code, 6, show(wait));
    assert.match(
      wait.stdout.at(-1)!,
      /^Kimi on sim is stalled: no witness has moved for 1\ds; last seen: starting 0% .* at \d\d:\d\d:\d\d\. The process lives but nothing moves: read the logs/,
      show(wait),
    );
    await host.configureSimulator({ fault: {} });
  });

  it('SIGTERM / SIGINT during wait end it at once (143 / 130), touching nothing on the host', async () => {
    await host.configureSimulator({ fault: { hangAt: 'weights', afterShards: 2 } });
    assert.equal((await cli('restart', '--config', config)).code, 0);
    for (const [signal, expected] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const before = await host.execLog();
      const running = start(['wait', '--config', config, '--timeout', '60']);
      await waitFor(() => running.lines.length > 0, { timeoutMs: 30_000, message: 'the first line of wait' });
      const sentAt = Date.now();
      running.child.kill(signal);
      const run = await running.done;
      assert.equal(run.code, expected, show(run));
      assert.ok(Date.now() - sentAt < 3000, `exited ${Date.now() - sentAt} ms after ${signal}`);
      assert.match(run.stdout.at(-1)!, /The wait was cancelled after .*; the load goes on/, show(run));
      const added = (await host.execLog()).slice(before.length);
      assert.ok(!added.some((l) => /systemctl.* (restart|stop|start|kill) /.test(l)), added.join('\n'));
    }
  });

  it('wait output stays bounded over a long load: a line per state change, progress at most every 10 s', async function () {
    this.timeout(180_000);
    // 16 MB at 0.5 MB/s: about 30 s of loading, with progress signals every poll.
    await host.configureSimulator({
      fault: {},
      readMBps: 0.5,
      warmReadMBps: 0.5,
      coldFiles: 'all',
      warmupSeconds: 0.5,
    });
    try {
      // --force: an earlier test left a hung load, which a plain restart would rightly watch instead.
      const run = await cli('restart', '--force', '--wait', '--json', '--config', config, '--timeout', '150');
      assert.equal(run.code, 0, show(run));
      const objects = json(run);
      const elapsed = Number(objects.at(-2)!.elapsedSeconds);
      assert.ok(elapsed >= 20, `the load took ${elapsed} s: too short to show the bound\n${show(run)}`);
      const progress = objects.filter((o) => o.event === 'progress');
      const states = objects.filter((o) => o.event === 'state');
      assert.ok(progress.length >= 1, show(run));
      assert.ok(
        progress.length <= Math.floor(elapsed / 10) + 1,
        `${progress.length} progress lines in ${elapsed} s\n${show(run)}`,
      );
      for (let i = 1; i < progress.length; i++) {
        assert.ok(Number(progress[i]!.elapsedSeconds) - Number(progress[i - 1]!.elapsedSeconds) >= 9, show(run));
      }
      assert.ok(states.length <= 10, `${states.length} state lines\n${show(run)}`);
      assert.ok(objects.length <= 20, `${objects.length} lines over a ${elapsed} s load\n${show(run)}`);
    } finally {
      await host.configureSimulator({ readMBps: 16, warmReadMBps: 16 });
    }
  });

  it('unreachable host (a closed port): exit 3 for every subcommand', async () => {
    const closed = writeConfig('closed.json', [{ ...serverEntry(host), port: await freePort() }]);
    for (const args of [['status'], ['restart'], ['wait', '--timeout', '30'], ['logs'], ['verify']]) {
      const run = await cli(...args, '--config', closed);
      assert.equal(run.code, 3, `${args.join(' ')}: ${show(run)}`);
      assert.match(run.stdout[0]!, /^sim: unreachable/, show(run));
    }
    const run = await cli('status', '--json', '--config', closed);
    assert.equal(json(run)[0]!.state, 'unreachable');
  });

  it('a changed host key: exit 4, both fingerprints, nothing run on the host', async () => {
    const changedKnownHosts = path.join(dir, 'known_hosts_changed');
    fs.writeFileSync(changedKnownHosts, `[127.0.0.1]:${host.sshPort} ssh-ed25519 ${OTHER_KEY}\n`);
    const changed = writeConfig('changed.json', [serverEntry(host)], {
      knownHostsFile: changedKnownHosts,
      hostKeyPolicy: 'accept-new',
    });
    const mark = await markHost(host);
    for (const args of [['restart'], ['wait'], ['status', '--json']]) {
      const run = await cli(...args, '--config', changed);
      assert.equal(run.code, 4, `${args.join(' ')}: ${show(run)}`);
      if (args.includes('--json')) {
        const [report] = json(run);
        assert.equal(report!.state, 'host key changed');
        assert.ok(String(report!.lastError).includes(host.hostKeyFingerprint), show(run));
      } else {
        assert.match(run.stdout[0]!, /^sim: host key changed/, show(run));
        assert.match(run.stderr, /has CHANGED/, show(run));
      }
    }
    // An unknown key under "ask" without a terminal is refused, not asked (ask becomes strict).
    const unknown = path.join(dir, 'known_hosts_empty');
    fs.writeFileSync(unknown, '');
    const ask = writeConfig('ask.json', [serverEntry(host)], { knownHostsFile: unknown, hostKeyPolicy: 'ask' });
    const run = await cli('restart', '--config', ask);
    assert.equal(run.code, 4, show(run));
    assert.match(run.stdout[0]!, /^sim: host key refused/, show(run));
    assert.equal(fs.readFileSync(unknown, 'utf8'), '', 'nothing was trusted');
    assert.deepEqual(
      (await mark.newRuns()).map((e) => e.line),
      [],
      'nothing ran on the host',
    );
  });

  it('bad configuration or usage: exit 5 and nothing runs on the host', async () => {
    const mark = await markHost(host);
    const handshakes = host.handshakes();
    const bad = writeConfig('bad.json', [{ ...serverEntry(host), unit: 'x; rm -rf /' }]);
    const cases: string[][] = [
      ['restart', '--config', bad],
      ['restart', '--config', path.join(dir, 'missing.json')],
      ['restart', '--config', config, '--server', 'nope'],
      ['restart'], // no servers anywhere
      ['restart', '--config', config, '--bogus'],
      ['wait', '--config', config, '--timeout', '4000'],
      ['frobnicate'],
      ['restart', '--host', '127.0.0.1', '--unit', 'u', '--config', config],
    ];
    for (const args of cases) {
      const run = await cli(...args);
      assert.equal(run.code, 5, `${args.join(' ')}: ${show(run)}`);
      assert.match(run.stderr, /^kimi-service: /, show(run));
    }
    const run = await cli('restart', '--json', '--config', bad);
    assert.equal(run.code, 5);
    const [error] = json(run);
    assert.equal(error!.state, 'settings');
    assert.match(String(error!.error), /kimiService\.servers\[0\]\.unit/);
    assert.deepEqual(
      (await mark.newRuns()).map((e) => e.line),
      [],
      'nothing ran on the host',
    );
    assert.equal(host.handshakes(), handshakes, 'no SSH connection was made');
  });

  it('a restart of a server under its steady watch is issued: the watch it replaces ending does not answer for it', async () => {
    const { fleet, settings } = coreFleet();
    try {
      const server = settings.settings.servers[0]!;
      await fleet.restart(server, { force: true });
      assert.equal((await fleet.waitFor(server, { timeoutMs: 90_000 })).kind, 'ready');
      await waitFor(() => fleet.snapshot(server).state?.readyAt !== undefined || undefined, {
        timeoutMs: 30_000,
        message: 'ready in the snapshot',
      });
      assert.ok(fleet.snapshot(server).watching, 'the steady watch goes on after ready');
      const before = await restarts();
      const answer = await fleet.restart(server, { force: true });
      assert.equal(answer.kind, 'restarted');
      assert.ok(answer.kind === 'restarted' && answer.issued, 'issued, once the host had the restart');
      assert.equal((await restarts()) - before, 1);
      assert.equal((await fleet.waitFor(server, { timeoutMs: 90_000 })).kind, 'ready');
    } finally {
      fleet.dispose();
    }
  });

  describe('two clients, one restart', () => {
    /** The next load halts after 2 of its 8 shards until the fault is cleared: a second client arrives during it, however busy the machine. */
    const holdLoad = () =>
      host.configureSimulator({ fault: { hangAt: 'weights', afterShards: 2, untilCleared: true } });
    const releaseLoad = () => host.configureSimulator({ fault: {} });
    before(async () => {
      await host.configureSimulator({ fault: {}, readMBps: 2, warmReadMBps: 2, warmupSeconds: 0.5 });
      const ready = await cli('restart', '--force', '--wait', '--config', config, '--timeout', '90');
      assert.equal(ready.code, 0, show(ready));
      // The old process takes 4 s to stop, as an 8-GPU server's NCCL teardown does (longer in life):
      // a second client arriving within a second finds the unit being restarted.
      await host.setStopDelay(4000);
    });
    after(async () => {
      await host.setStopDelay(0);
      await host.configureSimulator({ readMBps: 16, warmReadMBps: 16 });
    });

    it("the extension's core and the CLI restart within a second: one systemctl restart, the CLI watches instead", async () => {
      const { fleet, settings } = coreFleet();
      try {
        const server = settings.settings.servers[0]!;
        await fleet.connect(server);
        const before = await restarts();
        const since = Date.now();
        await holdLoad();
        const first = await fleet.restart(server);
        assert.equal(first.kind, 'restarted');
        assert.ok((await whenRestartIssued(fleet, server, { timeoutMs: 30_000, since })).issued);
        const run = await cli('restart', '--config', config);
        // No time bound here (it would flake on a busy machine): the old process's stop (4 s) and
        // the held load keep the core's restart under way until the CLI has answered.
        assert.equal(run.code, 0, show(run));
        assert.match(run.stdout[0]!, /^sim: watching, not restarted: /, show(run));
        assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));
        await releaseLoad();
        assert.equal((await fleet.waitFor(server, { timeoutMs: 90_000 })).kind, 'ready');
        assert.equal((await restarts()) - before, 1);
      } finally {
        fleet.dispose();
        await releaseLoad();
      }
    });

    it('the CLI twice in a row: the second watches instead (--json says "attached"), one systemctl restart; --force restarts', async () => {
      const before = await restarts();
      await holdLoad();
      try {
        const first = await cli('restart', '--config', config);
        assert.equal(first.code, 0, show(first));
        const second = await cli('restart', '--json', '--config', config);
        assert.equal(second.code, 0, show(second));
        const [line] = json(second);
        assert.equal(line!.event, 'restart');
        assert.equal(line!.action, 'attached', show(second));
        assert.equal(typeof line!.reason, 'string');
        assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));
      } finally {
        await releaseLoad();
      }
      const forced = await cli('restart', '--force', '--config', config);
      assert.equal(forced.code, 0, show(forced));
      assert.match(forced.stdout[0]!, /restart issued/, show(forced));
      assert.equal((await restarts()) - before, 2);
      // (A `wait` now would start watching while the old process is still stopping: see the pending test below.)
      await waitFor(async () => json(await cli('status', '--json', '--config', config))[0]?.state === 'ready', {
        timeoutMs: 90_000,
        intervalMs: 500,
        message: 'the server ready again',
      });
    });

    // A watch that starts while the unit is `deactivating` (the old process of a restart still
    // stopping, up to TimeoutStopSec) follows the stop and then the new run.
    it('wait right after a restart whose old process is still stopping follows the restart to ready', async () => {
      // The stop lasts until the wait has said so, however long its node and SSH login take.
      await host.configureSimulator({ stopHold: true });
      try {
        assert.equal((await cli('restart', '--config', config)).code, 0);
        const wait = start(['wait', '--config', config, '--timeout', '90']);
        await waitFor(() => wait.lines.some((l) => /sim: stopping/.test(l)) || wait.child.exitCode !== null, {
          timeoutMs: 60_000,
          message: 'the wait watching the stop',
        });
        await host.configureSimulator({ stopHold: false });
        const run = await wait.done;
        assert.equal(run.code, 0, show(run));
        assert.ok(
          run.stdout.some((l) => /sim: stopping/.test(l)),
          show(run),
        );
        assert.match(run.stdout.at(-1)!, /ready/, show(run));
      } finally {
        await host.configureSimulator({ stopHold: false });
      }
    });

    // A Type=simple unit (SGLang's, the simulator's) is `active` for its whole load: a second
    // client that arrives then asks /health, finds the server not serving yet, and watches it instead.
    it('a second client during the load itself (unit active, port still closed) watches it instead', async () => {
      await host.setStopDelay(0);
      // The load halts after 2 of its 8 shards until the second client has answered: the status
      // calls and its own start (node, an SSH login each) take seconds on a busy machine.
      await holdLoad();
      try {
        const before = await restarts();
        assert.equal((await cli('restart', '--config', config)).code, 0);
        await waitFor(
          async () => {
            const status = await cli('status', '--json', '--config', config);
            const [report] = json(status);
            return report?.state === 'loading' && report.phase === 'loading weights';
          },
          { timeoutMs: 60_000, message: 'the new process loading its weights' },
        );
        const second = await cli('restart', '--config', config);
        assert.equal(second.code, 0, show(second));
        assert.match(second.stdout[0]!, /watching, not restarted/, show(second));
        assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));
      } finally {
        await releaseLoad();
      }
    });

    // The VS Code command's path below VS Code: the same verb, with the dialog's choice as a callback.
    it('the VS Code restart during a load started elsewhere asks, follows it (one systemctl restart), or restarts anyway', async () => {
      // The old process takes 4 s to stop: the load the CLI started is still under way when the
      // verb looks, however busy the machine (a 5 s load could be over before it).
      await host.setStopDelay(4000);
      // The test before leaves its load going: a restart now would be followed, not issued.
      await waitFor(async () => json(await cli('status', '--json', '--config', config))[0]?.state === 'ready', {
        timeoutMs: 90_000,
        intervalMs: 500,
        message: 'the server ready before the test',
      });
      const { fleet, settings } = coreFleet();
      try {
        const server = settings.settings.servers[0]!;
        const before = await restarts();
        assert.equal((await cli('restart', '--config', config)).code, 0);
        const asked: string[] = [];
        const confirmations: string[] = [];
        const followed = await fleet.restartAsking(server, {
          choose: async (reason) => (asked.push(reason), 'follow'),
          confirm: async () => (confirmations.push('asked'), true),
        });
        assert.equal(followed?.kind, 'watched');
        assert.equal(asked.length, 1);
        assert.match(asked[0]!, /being stopped|being started|still loading/);
        assert.deepEqual(confirmations, [], 'no restart confirmation when a load is followed');
        assert.equal((await followed.outcome)?.end, 'ready');
        assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));

        assert.equal((await cli('restart', '--config', config)).code, 0);
        const anyway = await fleet.restartAsking(server, { choose: async () => 'restart' });
        assert.equal(anyway?.kind, 'restarted');
        assert.ok(anyway.kind === 'restarted' && anyway.issued, 'the host has the restart when the verb answers');
        assert.equal((await restarts()) - before, 3);
        assert.equal((await anyway.outcome)?.end, 'ready');
      } finally {
        fleet.dispose();
        await host.setStopDelay(0);
      }
    });

    describe('the old process gone, the new one not started yet (an ExecStartPre, a pull)', () => {
      /** The unit's job is starting it: activating, no main process. */
      const starting = async () => {
        const shown = await host.ssh(`systemctl show ${host.unit} -p ActiveState -p MainPID`);
        return /ActiveState=activating/.test(shown.stdout) && /MainPID=0\b/.test(shown.stdout);
      };
      const untilStarting = () =>
        waitFor(starting, { timeoutMs: 30_000, intervalMs: 100, message: 'the unit activating with no main process' });
      const untilReady = () =>
        waitFor(async () => json(await cli('status', '--json', '--config', config))[0]?.state === 'ready', {
          timeoutMs: 90_000,
          intervalMs: 500,
          message: 'the server ready again',
        });
      before(async () => {
        await untilReady();
        await host.setStopDelay(0);
        await host.configureSimulator({ startDelayMs: 5000 });
      });
      after(() => host.configureSimulator({ startDelayMs: 0 }));

      it('a second client then follows the load under way: one systemctl restart', async () => {
        const before = await restarts();
        // The start is held until the second client has answered (a CLI's start takes seconds on a busy machine).
        await host.configureSimulator({ startHold: true });
        try {
          const first = await cli('restart', '--config', config);
          assert.equal(first.code, 0, show(first));
          await untilStarting();
          const second = await cli('restart', '--json', '--config', config);
          assert.equal(second.code, 0, show(second));
          assert.equal(json(second)[0]!.action, 'attached', show(second));
          assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));
        } finally {
          await host.configureSimulator({ startHold: false });
        }
        await untilReady();
        assert.equal((await restarts()) - before, 1);
      });

      it('a wait that starts then follows the restart to ready (exit 0), not stopped', async () => {
        await host.configureSimulator({ startHold: true });
        try {
          assert.equal((await cli('restart', '--config', config)).code, 0);
          await untilStarting();
          const wait = start(['wait', '--config', config, '--timeout', '90']);
          await waitFor(() => wait.lines.length > 0 || wait.child.exitCode !== null, {
            timeoutMs: 60_000,
            message: "the wait's first line",
          });
          assert.ok(await starting(), 'the wait came in while the unit was starting');
          await host.configureSimulator({ startHold: false });
          const run = await wait.done;
          assert.equal(run.code, 0, show(run));
          assert.match(run.stdout.at(-1)!, /ready/, show(run));
        } finally {
          await host.configureSimulator({ startHold: false });
        }
      });

      it('a wait that starts while the restart is under way (the old process stopping, then the start) follows it to ready', async () => {
        // The old process's stop is held until the wait has come in (node's start, an SSH login:
        // seconds on a busy machine), then the start takes its 5 s.
        await host.configureSimulator({ stopHold: true });
        try {
          assert.equal((await cli('restart', '--config', config)).code, 0);
          const wait = start(['wait', '--config', config, '--timeout', '90']);
          await waitFor(() => wait.lines.length > 0 || wait.child.exitCode !== null, {
            timeoutMs: 60_000,
            message: "the wait's first line",
          });
          await host.configureSimulator({ stopHold: false });
          const run = await wait.done;
          assert.equal(run.code, 0, show(run));
          // It came in before the new process, and followed the stop and the start.
          assert.match(run.stdout[0]!, /sim: (stopping|restarting)/, show(run));
          assert.match(run.stdout.at(-1)!, /ready/, show(run));
        } finally {
          await host.configureSimulator({ stopHold: false });
        }
      });
    });
  });
});
