// npm run demo: the whole story with no GPU and no remote host.
//   1. builds and packages the extension (dist/kimi-service.vsix);
//   2. starts the simulated GPU host: a real OpenSSH sshd on 127.0.0.1 with a fresh host key,
//      systemctl/journalctl/nvidia-smi stand-ins, and the SGLang simulator reading a small
//      model folder (~170 MB) slowly enough that a load takes about a minute;
//   3. starts code-server (VS Code in the browser) with the extension installed and its
//      settings pointing at that host, and prints the URL to open.
// Ctrl-C stops everything it started (sshd, the simulator, code-server) and removes the
// temporary folders.
//
// Options (or environment): --port N (KIMI_DEMO_PORT, default 8080 or a free port)
//                           --seconds N (KIMI_DEMO_SECONDS, load length, default 75)
//                           --no-build (use the existing dist/kimi-service.vsix)
//                           --replay ID (a published log of test/fixtures/real-logs played as the server
//                             instead of the simulated load, docs/replay.md; --speed N (default 30) and
//                             --max-gap S (longest silence, default 10 s) compress its timing)
//                           KIMI_DEMO_VSIX=path (install that VSIX instead of building)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGpuHost, type GpuHost } from '../test/gpu-host/harness';
import { ensureCodeServer, REPO_ROOT, startCodeServer, type CodeServer } from '../test/e2e/codeServer';
import { freePort } from '../test/util/freePort';
import { kimiSettings, simForLoad, unitWithParsers, VSIX } from '../test/e2e/scenario';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

const say = (s: string) => console.log(`[demo] ${s}`);

/** `--replay ID`: the fixture's header (engine, outcome) and the sim.json that plays it. */
function replayOf(id: string): { engine: 'sglang' | 'vllm'; outcome: string; sim: Record<string, unknown> } {
  const file = join(REPO_ROOT, 'test', 'fixtures', 'real-logs', `${id}.json`);
  if (!/^[\w.-]+$/.test(id) || !existsSync(file))
    throw new Error(`no published log ${id} (test/fixtures/real-logs/${id}.json)`);
  const header = JSON.parse(readFileSync(file, 'utf8')) as { engine: 'sglang' | 'vllm'; outcome: string };
  const speed = Number(arg('speed') ?? 30);
  const maxGapMs = Number(arg('max-gap') ?? 10) * 1000;
  return { engine: header.engine, outcome: header.outcome, sim: { replay: { log: id, speed, maxGapMs } } };
}

async function main(): Promise<void> {
  const seconds = Number(arg('seconds') ?? process.env.KIMI_DEMO_SECONDS ?? 75);
  const wantedPort = Number(arg('port') ?? process.env.KIMI_DEMO_PORT ?? 8080);
  const SHARDS = 40;
  const SHARD_BYTES = 4 * 1024 * 1024;

  let host: GpuHost | undefined;
  let cs: CodeServer | undefined;
  let tmp: string | undefined;
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping code-server and the simulated GPU host ...');
    await cs?.stop().catch((e) => say(`code-server: ${e}`));
    if (cs) rmSync(cs.root, { recursive: true, force: true });
    await host?.stop().catch((e) => say(`gpu host: ${e}`));
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    say('stopped; nothing left running.');
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  process.on('SIGHUP', () => void stopAll(0));

  try {
    // 1. The VSIX.
    let vsix = VSIX;
    if (process.env.KIMI_DEMO_VSIX) {
      vsix = process.env.KIMI_DEMO_VSIX;
      say(`using ${vsix}`);
    } else if (process.argv.includes('--no-build') && existsSync(VSIX)) {
      say(`using ${VSIX}`);
    } else {
      say('building and packaging the extension (npm run package) ...');
      const r = spawnSync('npm', ['run', '--silent', 'package'], { cwd: REPO_ROOT, stdio: 'inherit' });
      if (r.status !== 0 || !existsSync(VSIX)) throw new Error('npm run package failed');
    }
    ensureCodeServer();
    if (stopping) return;

    // 2. The simulated GPU host.
    const replayId = arg('replay');
    const replay = replayId ? replayOf(replayId) : undefined;
    if (replay) {
      say(
        `starting the simulated GPU host (sshd on 127.0.0.1, ${replay.engine} replaying ${replayId}: ${replay.outcome}) ...`,
      );
      host = await startGpuHost({
        shards: 8,
        shardBytes: SHARD_BYTES,
        engine: replay.engine,
        ...(replay.engine === 'vllm' ? { unitName: 'vllm-k26' } : {}),
        sim: replay.sim,
      });
    } else {
      say(
        `starting the simulated GPU host (sshd on 127.0.0.1, SGLang simulator, ${SHARDS} x ${SHARD_BYTES / 1048576} MiB model, ~${seconds} s load) ...`,
      );
      host = await startGpuHost({
        shards: SHARDS,
        shardBytes: SHARD_BYTES,
        sim: simForLoad(seconds, SHARDS, SHARD_BYTES),
      });
    }
    if (replay?.engine !== 'vllm') await host.writeUnit(unitWithParsers(host), { reload: true });
    if (stopping) return;

    // 3. code-server with the extension, configured for that host.
    tmp = mkdtempSync(join(tmpdir(), 'kimi-demo-'));
    const knownHostsFile = join(tmp, 'known_hosts');
    writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    const folder = join(tmp, 'workspace');
    mkdirSync(folder);
    writeFileSync(
      join(folder, 'README.md'),
      [
        '# Kimi Service demo',
        '',
        `The status bar (bottom left) shows "Kimi: ..." for the server **sim**: the systemd unit`,
        `\`${host.unitName}\` on a simulated GPU host reached over SSH (127.0.0.1:${host.sshPort}).`,
        '',
        '1. Press Ctrl+Shift+P (or F1), run **Kimi Service: Restart Kimi service**, confirm **Restart**.',
        replay
          ? `2. Watch the status bar: the server replays the published log ${replayId} (it ends ${replay.outcome}).`
          : '2. Watch the status bar: restarting -> loading NN% -> warming up -> ready.',
        '3. The notification says how long the load took; **Show log** opens the log channel.',
        '4. After ready, the parsers are verified ("Parsers verified").',
        '',
        'Settings: File > Preferences > Settings > Extensions > Kimi Service.',
        '',
      ].join('\n'),
    );
    const port = (await portFree(wantedPort)) ? wantedPort : await freePort();
    say('starting code-server ...');
    cs = await startCodeServer({
      port,
      folder,
      vsix: [vsix],
      settings: { ...kimiSettings(host, knownHostsFile, 'ask'), 'kimiService.pollIntervalSeconds': 1 },
      env: { SSH_AUTH_SOCK: undefined },
    });
    if (stopping) return;

    console.log(`
  Kimi Service demo is running.

  Open:   ${cs.url}
          (on another machine: ssh -L ${port}:127.0.0.1:${port} THIS_HOST, then open the same URL)

  Then:   Ctrl+Shift+P (or F1) -> "Kimi Service: Restart Kimi service" -> Restart.
          ${
            replay
              ? `Watch the status bar, bottom left: the unit replays the published log ${replayId}
          (it ends ${replay.outcome}); Show log opens the extension's log.`
              : `Watch the status bar, bottom left: Kimi: restarting -> loading NN% -> warming up -> ready
          (~${Math.round(seconds)} s), the "is ready" notification (Show log opens the log), then "Parsers verified".`
          }

  GPU host: ssh -p ${host.sshPort} -i ${host.clientKeyPath} root@127.0.0.1   unit ${host.unit}
  code-server log: ${cs.logFile}

  Ctrl-C stops everything.
`);
  } catch (e) {
    console.error(`[demo] ${e instanceof Error ? e.message : e}`);
    await stopAll(1);
  }
}

void main();
