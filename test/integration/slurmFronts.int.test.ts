/**
 * A server that is a Slurm batch job, through the fronts an agent or a script uses: the built
 * command line (`node dist/cli.js`) and the MCP server (`node dist/mcp.js`, through the SDK's
 * client over stdio), against a real scheduler (Debian's Slurm: munged, slurmctld and one slurmd
 * of one CPU, so a second job waits for the first) and the real sshd of the simulated host, as
 * its unprivileged login. One job runs through the whole file: its status while it runs, a
 * restart that sends it back to the queue behind another job, the bounded waits that say so,
 * the wait to ready once the other job ends, and the lines of its output file.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { GpuHost } from '../gpu-host/harness';
import type { SlurmCluster } from '../gpu-host/slurm';
import {
  endJobsOf,
  jobState,
  queueNow,
  sbatchAs,
  startSlurmHost,
  untilRunning,
  writeSimJob,
} from '../gpu-host/slurmJobs';
import { runCli, slurmCliConfig, type CliRun } from './slurmCli';
import { waitFor } from '../util/waitFor';

const USER = 'kimi';
const JOB = 'kimi-fronts';
const REPO = path.resolve(__dirname, '..', '..');
const MCP_JS = path.join(REPO, 'dist', 'mcp.js');

const show = (run: CliRun) => `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
const text = (r: CallToolResult, i = 0) => (r.content[i] as { type: 'text'; text: string }).text;

describe('slurm through the fronts: the CLI and the MCP tools on a batch job of a real scheduler', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let slurm: SlurmCluster;
  let dir: string;
  let config: string;
  let jobDir: string;
  let jobId: string;
  let url: string;

  const cli = (...args: string[]): Promise<CliRun> => runCli(dir, [...args, '--config', config]);

  before(async function () {
    ({ host, slurm } = await startSlurmHost(USER));
    for (const only of ['cli', 'mcp']) execFileSync(process.execPath, ['esbuild.mjs', `--only=${only}`], { cwd: REPO });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-slurm-fronts-'));
    url = `http://{node}:${host.httpPort}`;
    const job = writeSimJob(host, slurm, USER, 'fronts', { timeLimit: '60' });
    jobDir = job.dir;
    config = slurmCliConfig(dir, host, USER, { job: JOB, script: job.script, url });
    jobId = await sbatchAs(host, USER, jobDir, `-J ${JOB} ${job.script}`);
    await untilRunning(slurm, jobId);
  });
  after(async () => {
    if (slurm) await endJobsOf(slurm, USER);
    await slurm?.stop();
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('status --json of the running job: ready, its job id, the node it runs on and the url there', async () => {
    const ready = await cli('wait', '--timeout', '60');
    assert.equal(ready.code, 0, show(ready));
    const status = await cli('status', '--json');
    assert.equal(status.code, 0, show(status));
    const report = JSON.parse(status.stdout) as Record<string, unknown>;
    assert.equal(report.state, 'ready', status.stdout);
    assert.equal(report.job, jobId, status.stdout);
    assert.equal(report.node, 'n1', status.stdout);
    assert.equal(report.url, `http://n1:${host.httpPort}`, status.stdout);
    assert.match(String(report.endsAt), /^\d{4}-\d\d-\d\dT/, 'the time limit');
    const line = await cli('status');
    assert.match(line.stdout, new RegExp(`^cluster: ready · ready for \\d+s · job ${jobId} on n1( · |$)`), show(line));
  });

  it('restart behind another job: requeued, queued with the reason, bounded waits say so; then ready, and its output file', async () => {
    // A job of a time limit of its own, so the scheduler can estimate when the node is free again.
    const blocker = await sbatchAs(host, USER, jobDir, `-J blocker --time=5 --wrap 'sleep 300'`);
    assert.equal(jobState(slurm, blocker), 'PENDING');
    const restart = await cli('restart');
    assert.equal(restart.code, 0, show(restart));
    assert.match(
      restart.stdout.split('\n')[0]!,
      // Confirmed once the scheduler shows the job's next run: held in the queue until its begin time.
      new RegExp(
        `^cluster: restart issued \\(restart of the Slurm job ${JOB} on 127\\.0\\.0\\.1\\)\\. Now: cluster: queued( · starts ~\\d\\d:\\d\\d)? \\(\\w+\\) · for \\d+s · job ${jobId}$`,
      ),
      show(restart),
    );
    // The requeued job waits out its begin time, then the other job takes the node.
    await untilRunning(slurm, blocker);
    const queued = await waitFor(
      async () => {
        const run = await cli('status', '--json');
        const report = JSON.parse(run.stdout) as { state: string; queue?: string; job?: string; node?: string };
        return report.queue?.startsWith('waiting for Resources') ? report : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, message: 'a status that says queued (Resources) behind the other job' },
    );
    assert.equal(queued.state, 'queued');
    assert.equal(queued.job, jobId, 'the same job, requeued');
    assert.equal(queued.node, undefined, 'no node while it waits');
    assert.match(
      queued.queue ?? '',
      /^waiting for Resources; the scheduler (expects to start it at \d\d:\d\d \(in [\dhms ]+\)|has no estimate of its start yet)$/,
    );
    const said = await cli('status');
    assert.match(
      said.stdout,
      /^cluster: queued( · starts ~\d\d:\d\d)? \(Resources\) · for \d+s · job \d+$/,
      show(said),
    );

    // An agent's bounded wait: the command line's (exit 2, not finished) and the MCP tool's.
    const wait = await cli('wait', '--timeout', '5');
    assert.equal(wait.code, 2, show(wait));
    assert.match(
      wait.stdout.split('\n').at(-1)!,
      /^Still queued after waiting \d+s: waiting for Resources; .*: call kimi-service wait again to keep waiting \(a restart would not start it sooner\)\.$/,
      show(wait),
    );
    const mcp = await startMcp(config, dir);
    try {
      const tool = (await mcp.callTool({ name: 'kimi_wait', arguments: { timeoutSeconds: 3 } })) as CallToolResult;
      assert.match(
        text(tool),
        /^cluster: queued( · starts ~\d\d:\d\d)? \(Resources\) · for \d+s · job \d+\nStill queued after waiting \d+s: waiting for Resources; .*call kimi_wait again to keep waiting/,
        `${text(tool)}\n${queueNow(slurm, [blocker, jobId])}`,
      );
      const facts = tool.structuredContent as { result: string; report: Record<string, unknown> };
      assert.equal(facts.result, 'timeout');
      assert.equal(facts.report.state, 'queued');
      assert.equal(facts.report.job, jobId);
    } finally {
      await mcp.close();
    }
    assert.equal(jobState(slurm, jobId), 'PENDING');

    slurm.run(['scancel', blocker]);
    const ready = await cli('wait', '--timeout', '90');
    assert.equal(ready.code, 0, show(ready));
    assert.match(ready.stdout.split('\n').at(-1)!, /^cluster is ready: it answered a real completion/, show(ready));
    const after = JSON.parse((await cli('status', '--json')).stdout) as Record<string, unknown>;
    assert.equal(after.job, jobId);
    assert.equal(after.node, 'n1');

    const logs = await cli('logs', '-n', '20');
    assert.equal(logs.code, 0, show(logs));
    const out = fs
      .readFileSync(path.join(jobDir, `${JOB}-${jobId}.out`), 'utf8')
      .trim()
      .split('\n');
    assert.ok(out.length > 2, out.join('\n'));
    // Each line as the journal's are shown: a time (when it was read: the file keeps none), then the line.
    const shown = logs.stdout.split('\n').slice(-3);
    assert.deepEqual(
      shown.map((l) => l.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /, '')),
      out.slice(-3),
      'the last lines of the job file',
    );
    assert.match(logs.stdout, /The server is fired up and ready to roll!/);
  });
});

/** `node dist/mcp.js --config FILE` through the SDK's client over stdio. */
async function startMcp(configFile: string, stateDir: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_JS, '--config', configFile],
    env: { PATH: process.env.PATH ?? '', XDG_STATE_HOME: stateDir, XDG_CONFIG_HOME: stateDir, HOME: stateDir },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'kimi-slurm-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}
