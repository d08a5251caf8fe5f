/**
 * A server that runs as a Slurm batch job, against a real scheduler (Debian's Slurm 22.05:
 * munged, slurmctld and one slurmd started by test/gpu-host/slurm.ts) and the real sshd of the
 * simulated host: the jobs are the unprivileged login's, submitted and watched through SSH, the
 * SGLang simulator is the job's program with its output in the job's file. One node of one CPU:
 * a second job waits in the queue for the first.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FAST_WATCH } from './simHost';
import { runCli, slurmCliConfig, type CliRun } from './slurmCli';
import { waitFor } from '../util/waitFor';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import type { WatchAlert } from '../../src/monitor/watch/watchTypes';
import { statusText } from '../../src/fronts/vscode/status/statusBarText';
import { jobState, untilRunning } from '../gpu-host/slurmJobs';
import { slurmSuite } from './slurmSuite';

const USER = 'kimi';
const REPO = path.resolve(__dirname, '..', '..');

describe('slurm: a server that is a batch job, on a real scheduler, as the login user', function () {
  this.timeout(180_000);
  const suite = slurmSuite(USER);
  let cliDir: string;

  before(async function () {
    const built = spawnSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, `node esbuild.mjs --only=cli failed:\n${built.stdout}\n${built.stderr}`);
    cliDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-slurm-cli-'));
  });
  after(() => {
    if (cliDir) fs.rmSync(cliDir, { recursive: true, force: true });
  });

  const jobFiles = (name: string, sim: Record<string, unknown> = {}, timeLimit = '10') =>
    suite.jobFiles(name, { sim, timeLimit });
  /** A servers file for `node dist/cli.js` naming the job, logging in as the login user. */
  const cliConfig = (job: string, script: string): string => slurmCliConfig(cliDir, suite.host, USER, { job, script });
  /** `node dist/cli.js ARGS` with a home of its own: its exit code and stdout. */
  const cli = (...args: string[]): Promise<CliRun> => runCli(cliDir, args);

  it('a running job restarted: scontrol requeue (same job id), then loading and ready again', async () => {
    const { dir, script } = jobFiles('requeue');
    const id = await suite.submit(dir, `-J kimi-requeue ${script}`);
    await untilRunning(suite.slurm, id);
    const test = await suite.session('kimi-requeue', script);
    const first = await test.session.watch('watch', FAST_WATCH);
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    assert.equal(first.state.unit?.invocationId, `slurm job ${id} run 0`);
    const again = await test.session.watch('restart', FAST_WATCH);
    assert.equal(again.end, 'ready', `${again.end}: ${again.message}\n${test.logLines.join('\n')}`);
    assert.equal(again.state.unit?.invocationId, `slurm job ${id} run 1`, 'the same job, its next run');
    assert.match(test.logLines.join('\n'), new RegExp(`scontrol requeue ${id}`));
    const out = fs.readFileSync(path.join(dir, `kimi-requeue-${id}.out`), 'utf8');
    assert.match(out, /The server is fired up and ready to roll!/);
    assert.match(again.state.unit?.endsAt ? 'limit' : '', /limit/, 'the time limit is known');
  });

  it('a job that waits behind another: queued with its reason, then it runs and is ready', async () => {
    const { dir, script } = jobFiles('queued');
    const blocker = await suite.holdTheNode(dir);
    const id = await suite.submit(dir, `-J kimi-queued ${script}`);
    const test = await suite.session('kimi-queued', script);
    const states: LoadState[] = [];
    const watch = test.session.watch('watch', FAST_WATCH, { onState: (s) => void states.push(s) });
    // Reason=None until the scheduler's next pass looks at the job (sched_interval=2).
    const queued = await waitFor(() => states.find((s) => s.unit?.queued?.reason === 'Resources'), {
      timeoutMs: 30_000,
      message: `a state that says queued (Resources): ${JSON.stringify(states.at(-1)?.unit?.queued)}`,
    });
    assert.equal(queued.unit?.mainPid, 0);
    assert.match(statusText({ server: undefined, state: queued, watching: true }), /Kimi: queued.*\(Resources\)/);
    assert.equal(jobState(suite.slurm, id), 'PENDING');
    // The command line (what agents and scripts run) says the same: queued, and why.
    const config = cliConfig('kimi-queued', script);
    const status = await cli('status', '--config', config);
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      new RegExp(`^cluster: queued( · starts ~\\d\\d:\\d\\d)? \\(Resources\\) · for \\d+s · job ${id}$`),
    );
    const json = await cli('status', '--json', '--config', config);
    const report = JSON.parse(json.stdout) as { state: string; queue?: string };
    assert.equal(report.state, 'queued', json.stdout);
    assert.match(report.queue ?? '', /^waiting for Resources; the scheduler (expects to start it at|has no estimate)/);
    // A bounded wait on a queued job (long enough for its first reading on a busy machine) says so, and to wait again rather than restart (exit 2: not finished).
    const wait = await cli('wait', '--timeout', '10', '--config', config);
    assert.equal(wait.code, 2, `${wait.stdout}\n${wait.stderr}`);
    assert.match(
      wait.stdout.split('\n').at(-1) ?? '',
      /^Still queued after waiting \d+s: waiting for Resources.*call .* again to keep waiting \(a restart would not start it sooner\)\.$/,
    );
    suite.slurm.run(['scancel', blocker]);
    const outcome = await watch;
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);
    assert.equal(outcome.state.unit?.queued, undefined);
  });

  it('a url that follows the job to its node ({node}): HTTP waits while it is queued, then goes to the batch host', async () => {
    // The sim listens on the port of the node it runs on; the node's name (n1) resolves on the login node as on a cluster.
    const { dir, script } = jobFiles('node');
    const blocker = await suite.holdTheNode(dir);
    const id = await suite.submit(dir, `-J kimi-node ${script}`);
    const test = await suite.session('kimi-node', script, `http://{node}:${suite.host.httpPort}`);
    const states: LoadState[] = [];
    const watch = test.session.watch('watch', FAST_WATCH, { onState: (s) => void states.push(s) });
    await waitFor(() => states.find((s) => s.unit?.queued !== undefined), { timeoutMs: 30_000, message: 'queued' });
    await waitFor(
      () => test.logLines.find((l) => /HTTP waits: .*runs on no node now \(it waits in the queue/.test(l)),
      {
        timeoutMs: 30_000,
        message: `the HTTP witness says it waits for the node:\n${test.logLines.join('\n')}`,
      },
    );
    assert.equal(jobState(suite.slurm, id), 'PENDING');
    assert.ok(
      states.every((s) => s.healthFailures === 0),
      'no /health asked while the job has no node',
    );
    suite.slurm.run(['scancel', blocker]);
    const outcome = await watch;
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);
    const batchHost = suite.slurm.run(['scontrol', 'show', 'job', '-o', id]).stdout.match(/BatchHost=(\S+)/)?.[1];
    assert.equal(batchHost, 'n1');
    assert.equal(test.session.client.baseUrl, `http://n1:${suite.host.httpPort}`);
    assert.doesNotMatch(test.logLines.join('\n'), /\/health (error|timeout).*\{node\}/);
  });

  it('a server that exits 1 inside the job: submitted by the restart (sbatch), FAILED, the cause from the output file', async () => {
    const { script } = jobFiles('crash', {
      fault: { crashAt: 'weights', afterShards: 2, kind: 'oom' },
      crashExit: 'code',
    });
    const test = await suite.session('kimi-crash', script);
    const outcome = await test.session.watch('restart', FAST_WATCH);
    assert.equal(outcome.end, 'failed', `${outcome.end}: ${outcome.message}\n${test.logLines.join('\n')}`);
    assert.match(outcome.state.failure?.summary ?? '', /exited with status 1|CUDA out of memory|OutOfMemory/);
    assert.ok(
      outcome.state.failure?.lines.some((l) => /OutOfMemoryError|CUDA out of memory/.test(l)),
      `the root cause from the job's output file: ${JSON.stringify(outcome.state.failure)}`,
    );
    assert.match(test.logLines.join('\n'), /sbatch --parsable -J/);
  });

  it('scancel by someone else after ready: stopped (cancelled), not a crash', async () => {
    const { dir, script } = jobFiles('cancel');
    const id = await suite.submit(dir, `-J kimi-cancel ${script}`);
    const test = await suite.session('kimi-cancel', script);
    const ends: string[] = [];
    let last: LoadState | undefined;
    const first = await test.session.watch(
      'watch',
      { ...FAST_WATCH, steadyIntervalMs: 1000 },
      {
        onEnd: (o) => void ends.push(o.end),
        onState: (s) => void (last = s),
      },
    );
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    suite.slurm.run(['scancel', id]);
    await waitFor(() => (last?.verdict === 'stopped' || last?.verdict === 'failed' ? true : undefined), {
      timeoutMs: 60_000,
      message: 'the watch sees the cancel',
    });
    assert.equal(last?.verdict, 'stopped', JSON.stringify(last?.failure));
    // This cluster keeps no accounting (no slurmdbd): sacct says so, and the words say why the canceller is unknown.
    assert.equal(
      last?.unit?.endedBecause,
      'was cancelled (scancel; by whom only accounting knows, and this cluster keeps none)',
    );
  });

  it('a job ended at its time limit after ready: failed, named TIMEOUT by the scheduler, not a crash of the server', async () => {
    // The shortest limit Slurm takes is a minute: this test waits it out.
    const { dir, script } = jobFiles('timeout', {}, '1');
    const id = await suite.submit(dir, `-J kimi-timeout ${script}`);
    const test = await suite.session('kimi-timeout', script);
    let last: LoadState | undefined;
    const alerts: WatchAlert[] = [];
    const first = await test.session.watch(
      'watch',
      { ...FAST_WATCH, steadyIntervalMs: 1000 },
      { onState: (s) => void (last = s), onAlert: (a) => void alerts.push(a) },
    );
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}`);
    assert.ok(first.state.unit?.endsAt !== undefined && first.state.unit.endsAt - Date.now() < 60_000);
    // Inside the last 15 minutes from its start: the warning once, and the status bar's words.
    const warned = await waitFor(() => alerts.find((a) => a.kind === 'time-limit'), {
      timeoutMs: 30_000,
      message: 'the time-limit warning',
    });
    assert.match(
      warned.message,
      /^Slurm job kimi-timeout reaches its time limit at \d\d:\d\d, in (1m )?\d+s: Slurm ends it then, and the server stops\.$/,
    );
    assert.match(
      statusText({ server: undefined, state: first.state, watching: true }),
      /Kimi: ready · ends in (1m )?\d+s/,
    );
    await waitFor(() => (last?.failure || last?.verdict === 'stopped' ? true : undefined), {
      timeoutMs: 120_000,
      message: `the end at the time limit of job ${id}`,
    });
    assert.match(last?.failure?.summary ?? `no failure: ${last?.verdict}`, /time limit \(TIMEOUT\)/);
    assert.equal(alerts.filter((a) => a.kind === 'time-limit').length, 1, 'warned once');
  });
});
