/**
 * `kimi-service advice [--apply N]` as a script runs it: the built `node dist/cli.js` against the
 * real sshd and the simulated host, with a load whose weights take over 20 s (the threshold of
 * a phase worth advice): the suggestion with its evidence and source, `--apply` refused without
 * --yes in a script, then applied, restarted, ready with the flag.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { DROP_IN_NAME } from '../../src/target/systemd/parserDropIn';
import { cliEnv, writeServersFile } from './simHost';

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');

describe('CLI advice against the simulated GPU host', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let config: string;

  function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }
  const show = (r: { code: number | null; stdout: string; stderr: string }) =>
    `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

  before(async () => {
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
    // 12 MiB read cold at 0.5 MB/s: about 25 s of weights, with the single-threaded shard bar.
    host = await startGpuHost({
      shards: 4,
      shardBytes: 3 * 1024 * 1024,
      sim: { shardDesc: 'legacy', readMBps: 0.5, coldFiles: 'all', warmupSeconds: 0.3 },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-advice-cli-'));
    const knownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
    env = cliEnv(dir);
    config = writeServersFile(path.join(dir, 'servers.json'), host, knownHosts);
  });
  after(async () => {
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists the suggestion with its evidence, figure and source; --apply needs --yes in a script; --apply 1 --yes applies it', async () => {
    const load = await cli('restart', '--wait', '--config', config, '--timeout', '120');
    assert.equal(load.code, 0, show(load));

    const list = await cli('advice', '--config', config);
    assert.equal(list.code, 0, show(list));
    assert.match(
      list.stdout,
      /^sim: the last load took \S+( \S+)?; largest phase: loading weights \d+ s: 1 suggestion$/m,
    );
    assert.match(list.stdout, /^1\. Load the weights with 8 threads: add --model-loader-extra-config/m);
    assert.match(list.stdout, /evidence: loading weights took \d+ s of \S+/);
    assert.match(list.stdout, /published: DeepSeek-R1 from NVMe: 217 s -> 65 s/);
    assert.match(list.stdout, /source: https:\/\/github\.com\/sgl-project\/sglang\/pull\/7277/);
    assert.match(list.stdout, /^SGLang 0\.5\.4 \(from \/server_info\)$/m);

    const refused = await cli('advice', '--config', config, '--apply', '1');
    assert.equal(refused.code, 5, show(refused));
    assert.match(refused.stderr, /give --yes/);
    assert.equal((await host.readDropIns())[DROP_IN_NAME], undefined, 'nothing written without a yes');

    const applied = await cli('advice', '--config', config, '--apply', '1', '--yes', '--timeout', '120');
    assert.equal(applied.code, 0, show(applied));
    assert.match(applied.stdout, /^\+ --model-loader-extra-config /m);
    assert.match(applied.stdout, /sim is ready with --model-loader-extra-config\./);
    assert.match((await host.readDropIns())[DROP_IN_NAME] ?? '', /enable_multithread_load/);

    const after = await cli('advice', '--config', config, '--json');
    assert.equal(after.code, 0, show(after));
    const lines = after.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(!lines.some((l) => l['id'] === 'sglang-multithread-load'), 'the flag is set: not advised again');
    assert.equal(lines.at(-1)?.['event'], 'advice-summary');
  });
});
