/**
 * Add server on a login node (`kimi-service discover`, the fleet verb "Kimi Service: Add server"
 * uses), against a real scheduler (Debian's Slurm 22.05, two slurmd started by
 * test/gpu-host/slurm.ts) and the real sshd of the simulated host, logged in as its unprivileged
 * user through a ~/.ssh/config alias: the user's running SGLang job is offered with the entry
 * `"slurm": { job, script }` and a url on its node; a job of another program is not.
 */
import { strict as assert } from 'node:assert';
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { slurmMissing, startSlurm, type SlurmCluster } from '../gpu-host/slurm';
import { cliEnv } from './simHost';
import { parseSettings } from '../../src/config/parseSettings';
import { sbatchAs, simulatorLaunch, untilRunning } from '../gpu-host/slurmJobs';

const USER = 'kimi';
const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');

describe("slurm: Add server lists the login user's jobs that run SGLang (kimi-service discover, real scheduler)", function () {
  this.timeout(180_000);
  let host: GpuHost;
  let slurm: SlurmCluster;
  let home: string;

  const cli = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { cwd: home, env: cliEnv(home), timeout: 120_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
    });
  const submit = (dir: string, args: string): Promise<string> => sbatchAs(host, USER, dir, args);

  before(async function () {
    const missing = slurmMissing();
    if (missing) throw new Error(`Slurm is needed for these tests: ${missing}`);
    host = await startGpuHost({ users: [USER], shards: 2, shardBytes: 1024 * 1024 });
    slurm = await startSlurm(host, { nodes: 2 });
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-slurm-discover-'));
    const ssh = path.join(home, '.ssh');
    fs.mkdirSync(ssh, { mode: 0o700 });
    const login = host.login(USER);
    fs.writeFileSync(
      path.join(ssh, 'config'),
      [
        'Host login1',
        `  HostName ${host.sshHost}`,
        `  Port ${host.sshPort}`,
        `  User ${login.username}`,
        `  IdentityFile ${login.identityFile}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    fs.writeFileSync(path.join(ssh, 'known_hosts'), `${host.knownHostsLine()}\n`);
  });
  after(async () => {
    slurm?.run(['scancel', '--full', `--user=${USER}`]);
    await slurm?.stop();
    await host?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('a running SGLang job is offered with its script and a url on its node; a job of another program is not', async () => {
    const dir = slurm.userDir(USER, 'discover');
    const simDir = path.join(dir, 'sim');
    fs.mkdirSync(simDir);
    fs.writeFileSync(path.join(simDir, 'sim.json'), JSON.stringify({ readMBps: 40, warmReadMBps: 40 }));
    const script = path.join(dir, 'serve.sbatch');
    fs.writeFileSync(
      script,
      [
        '#!/bin/sh',
        `#SBATCH --output=${dir}/%x-%j.out`,
        `export KIMI_SIM_ROOT=${simDir}`,
        `exec ${simulatorLaunch(host)} \\`,
        `  --model-path ${host.modelPath} --tp 8 --host 0.0.0.0 --port ${host.httpPort}`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const other = path.join(dir, 'other.sbatch');
    fs.writeFileSync(other, ['#!/bin/sh', `#SBATCH --output=${dir}/%x-%j.out`, 'exec sleep 300', ''].join('\n'), {
      mode: 0o755,
    });
    assert.equal(slurm.run(['chown', '-R', `${USER}:`, dir]).status, 0);
    await untilRunning(slurm, await submit(dir, `-J kimi-serve ${script}`));
    await untilRunning(slurm, await submit(dir, `-J housekeeping ${other}`));

    const list = await cli('discover', 'login1', '--json');
    assert.equal(list.code, 0, `${list.stdout}\n${list.stderr}`);
    const listed = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; unit: string; entry: Record<string, unknown> });
    const jobs = listed.filter((e) => e.entry && 'slurm' in e.entry);
    assert.deepEqual(
      jobs.map((e) => e.unit),
      ['kimi-serve'],
      list.stdout,
    );
    assert.ok(!listed.some((e) => e.unit === 'housekeeping'));

    const added = await cli('discover', 'login1', '--add', 'kimi-serve', '--name', 'cluster', '--json');
    assert.equal(added.code, 0, `${added.stdout}\n${added.stderr}`);
    const file = path.join(home, 'config', 'kimi-service', 'servers.json');
    const written = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>[];
    assert.deepEqual(written, [
      {
        name: 'cluster',
        host: 'login1',
        slurm: { job: 'kimi-serve', script },
        url: `http://{node}:${host.httpPort}`,
      },
    ]);
    assert.ok(parseSettings({ servers: written }).ok, 'the entry is a valid server');
    // The entry names the job the extension then follows: its status through the same login.
    const status = await cli('status', '--server', 'cluster');
    assert.equal(status.code, 0, `${status.stdout}\n${status.stderr}`);
    assert.match(status.stdout, /^cluster: /);
  });
});
