/**
 * The fleet verbs the CLI gained (`parsers enable|rollback`, `discover`), as a script runs them:
 * the built `node dist/cli.js` against a real sshd and the simulated GPU host.
 */
import { strict as assert } from 'node:assert';
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DROP_IN_NAME } from '../../src/target/systemd/parserDropIn';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { cliEnv, writeServersFile } from './simHost';

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('CLI fleet verbs: parsers enable/rollback, discover (node dist/cli.js, real sshd)', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let config: string;

  const cli = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(process.execPath, [CLI, ...args], { cwd: dir, env, timeout: 170_000 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  const show = (run: Run) => `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
  const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;

  before(async () => {
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
    host = await startGpuHost({ shards: 4, shardBytes: 1024 * 1024 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-cli-verbs-'));
    // The user's own ~/.ssh: an alias for the host, and its key already known.
    const ssh = path.join(dir, '.ssh');
    fs.mkdirSync(ssh, { mode: 0o700 });
    fs.writeFileSync(
      path.join(ssh, 'config'),
      [
        'Host gpu-sim',
        `  HostName ${host.sshHost}`,
        `  Port ${host.sshPort}`,
        `  User ${host.username}`,
        `  IdentityFile ${host.clientKeyPath}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    fs.writeFileSync(path.join(ssh, 'known_hosts'), `${host.knownHostsLine()}\n`);
    env = cliEnv(dir);
    config = writeServersFile(path.join(dir, 'servers.json'), host, path.join(ssh, 'known_hosts'));
    await host.configureSimulator({ warmupSeconds: 0.5 });
  });
  after(async () => {
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('parsers enable in a script without --yes: the diff is shown, nothing written or restarted, exit 5', async () => {
    const before = await restarts();
    const run = await cli('parsers', 'enable', '--config', config);
    assert.equal(run.code, 5, show(run));
    assert.match(run.stdout, /proposed change of \/etc\/systemd\/system\/.*50-kimi-parsers\.conf/);
    assert.match(run.stdout, /\+.*--tool-call-parser kimi_k2/);
    assert.match(run.stderr, /pass --yes/);
    assert.deepEqual(Object.keys(await host.readDropIns()), []);
    assert.equal(await restarts(), before);
  });

  it('parsers enable --yes: drop-in written, one restart, waits to ready (exit 0); again: already set, exit 0, no restart', async () => {
    const before = await restarts();
    const run = await cli('parsers', 'enable', '--yes', '--timeout', '120', '--config', config);
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /wrote .*50-kimi-parsers\.conf; restarting/);
    assert.match(run.stdout, /ready/);
    const dropIns = await host.readDropIns();
    assert.match(dropIns[DROP_IN_NAME] ?? '', /--reasoning-parser kimi_k2/);
    assert.match(dropIns[DROP_IN_NAME] ?? '', /Before it: no drop-in/);
    assert.equal(await restarts(), before + 1);

    const again = await cli('parsers', 'enable', '--yes', '--config', config);
    assert.equal(again.code, 0, show(again));
    assert.match(again.stdout, /already set/);
    assert.equal(await restarts(), before + 1);
  });

  it('parsers rollback --yes (a new process: the host says what came before): drop-in removed, restart, ready; again: nothing to roll back', async () => {
    const before = await restarts();
    const run = await cli('parsers', 'rollback', '--yes', '--timeout', '120', '--json', '--config', config);
    assert.equal(run.code, 0, show(run));
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(events.some((e) => e.event === 'parsers' && e.action === 'rolled-back' && e.restored === 'removed'));
    assert.equal(events.at(-1)?.state, 'ready', show(run));
    assert.deepEqual(Object.keys(await host.readDropIns()), []);
    assert.equal(await restarts(), before + 1);

    const again = await cli('parsers', 'rollback', '--yes', '--config', config);
    assert.equal(again.code, 0, show(again));
    assert.match(again.stdout, /nothing to roll back/);
    assert.equal(await restarts(), before + 1);
  });

  it('parsers enable with a name the engine does not know: refused before anything is written, exit 1', async () => {
    const run = await cli('parsers', 'enable', '--yes', '--reasoning-parser', 'kimi-k2', '--config', config);
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /kimi-k2/);
    assert.deepEqual(Object.keys(await host.readDropIns()), []);
  });

  it('discover HOST (a ~/.ssh/config alias): lists the unit with its url; --add writes the entry, status then reads it', async () => {
    const serversFile = path.join(dir, 'config', 'kimi-service', 'servers.json');
    const list = await cli('discover', 'gpu-sim');
    assert.equal(list.code, 0, show(list));
    assert.match(list.stdout, new RegExp(`^${host.unitName}\\.service\\s+\\S+\\s+http://127\\.0\\.0\\.1:\\d+`, 'm'));
    assert.equal(fs.existsSync(serversFile), false, 'listing writes nothing');

    const added = await cli('discover', 'gpu-sim', '--add', host.unitName, '--name', 'found');
    assert.equal(added.code, 0, show(added));
    assert.match(added.stdout, /added found/);
    const written = JSON.parse(fs.readFileSync(serversFile, 'utf8')) as Record<string, unknown>[];
    assert.equal(written.length, 1);
    assert.equal(written[0]!.host, 'gpu-sim');
    assert.equal(written[0]!.unit, `${host.unitName}.service`);

    const taken = await cli('discover', 'gpu-sim', '--add', host.unitName, '--name', 'found');
    assert.equal(taken.code, 5, show(taken));
    assert.equal((JSON.parse(fs.readFileSync(serversFile, 'utf8')) as unknown[]).length, 1, 'nothing written');

    const status = await cli('status', '--server', 'found');
    assert.equal(status.code, 0, show(status));
    assert.match(status.stdout, /^found: /);
  });

  it('discover a unit that is not there: exit 5, the units found named, nothing written', async () => {
    const run = await cli('discover', 'gpu-sim', '--add', 'nope.service', '--config', path.join(dir, 'other.json'));
    assert.equal(run.code, 5, show(run));
    assert.match(run.stderr, new RegExp(`found: ${host.unitName}\\.service`));
    assert.equal(fs.existsSync(path.join(dir, 'other.json')), false);
  });
});
