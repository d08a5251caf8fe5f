/**
 * A server that is one Slurm job over two nodes, against a real scheduler (Debian's Slurm 22.05:
 * munged, slurmctld and two slurmd, n1 and n2, started by test/gpu-host/slurm.ts) and the real
 * sshd of the simulated host, as its unprivileged login: `srun` starts the SGLang simulator once
 * per node (node rank = SLURM_PROCID), the ranks meet over a real TCP rendezvous, rank 0 serves
 * HTTP. A node's failure (one rank's process killed, a node set DOWN) is named as that node's.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GpuHost } from '../gpu-host/harness';
import type { SlurmCluster } from '../gpu-host/slurm';
import { FAST_WATCH, loginAs, sessionForHost, type TestSession } from './simHost';
import { waitFor } from '../util/waitFor';
import { freePort } from '../util/freePort';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { endJobsOf, jobState, ownedBy, sbatchAs, simulatorLaunch, startSlurmHost } from '../gpu-host/slurmJobs';

const USER = 'kimi';

/** The pids of `comm` whose environment has all of `vars`. */
function pidsWith(comm: string | undefined, vars: readonly string[]): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let env: string;
    let name: string;
    try {
      env = fs.readFileSync(`/proc/${entry}/environ`, 'utf8');
      name = fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const have = new Set(env.split('\0'));
    if ((comm === undefined || name === comm) && vars.every((v) => have.has(v))) pids.push(Number(entry));
  }
  return pids;
}

/** The pids whose environment says they are task `procId` of job `id`'s step 0. */
function taskPids(id: string, procId: number): number[] {
  return pidsWith(undefined, [`SLURM_JOB_ID=${id}`, `SLURM_PROCID=${procId}`, 'SLURM_STEP_ID=0']);
}

describe('slurm: a job over two nodes is one server, and a node failure is named as that node', function () {
  this.timeout(180_000);
  let host: GpuHost;
  let slurm: SlurmCluster;
  let test: TestSession | undefined;

  before(async function () {
    ({ host, slurm } = await startSlurmHost(USER, { nodes: 2 }));
  });
  afterEach(async () => {
    test?.dispose();
    test = undefined;
    await endJobsOf(slurm, USER);
    slurm.run(['scontrol', 'update', 'nodename=n2', 'state=resume']);
  });
  after(async () => {
    await slurm?.stop();
    await host?.stop();
  });

  /** The batch script: srun runs the simulator on each node, its node rank from SLURM_PROCID (rank.sh). */
  const jobFiles = async (name: string): Promise<{ dir: string; script: string }> => {
    const dir = slurm.userDir(USER, name);
    for (const rank of [0, 1]) {
      const simDir = path.join(dir, `sim-${rank}`);
      fs.mkdirSync(simDir, { recursive: true });
      fs.writeFileSync(
        path.join(simDir, 'sim.json'),
        JSON.stringify({ readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3 }),
      );
    }
    const rankScript = path.join(dir, 'rank.sh');
    fs.writeFileSync(
      rankScript,
      ['#!/bin/sh', `export KIMI_SIM_ROOT=${dir}/sim-$SLURM_PROCID`, 'exec "$@" --node-rank "$SLURM_PROCID"', ''].join(
        '\n',
      ),
      { mode: 0o755 },
    );
    const dist = await freePort([host.httpPort, host.sshPort]);
    const script = path.join(dir, 'serve.sbatch');
    fs.writeFileSync(
      script,
      [
        '#!/bin/sh',
        '#SBATCH --nodes=2',
        `#SBATCH --output=${dir}/%x-%j.out`,
        '#SBATCH --time=10',
        `srun ${rankScript} ${simulatorLaunch(host)} \\`,
        `  --model-path ${host.modelPath} --tp 8 --nnodes 2 --dist-init-addr 127.0.0.1:${dist} --dist-timeout 60 \\`,
        `  --host 127.0.0.1 --port ${host.httpPort}`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    ownedBy(slurm, USER, dir);
    return { dir, script };
  };
  const submit = (dir: string, args: string): Promise<string> => sbatchAs(host, USER, dir, args);
  const session = (job: string, script: string): Promise<TestSession> =>
    sessionForHost(host, {
      server: {
        ...loginAs(host, USER, false),
        unit: undefined,
        slurm: { job, script },
        url: `http://{node}:${host.httpPort}`,
      },
    });
  /** The first state with a failure, within `timeoutMs`; else the watch's log up to then. */
  const failureWithin = async (states: LoadState[], timeoutMs: number, what: string): Promise<LoadState> => {
    try {
      return await waitFor(() => states.find((s) => s.failure !== undefined), { timeoutMs, message: what });
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${test?.logLines.join('\n') ?? ''}`);
    }
  };
  /** Watches the running job until ready; then follows the steady watch's states. */
  const readyJob = async (name: string, sbatchArgs = ''): Promise<{ id: string; dir: string; states: LoadState[] }> => {
    const { dir, script } = await jobFiles(name);
    const id = await submit(dir, `-J ${name} ${sbatchArgs} ${script}`);
    test = await session(name, script);
    const states: LoadState[] = [];
    const first = await test.session.watch(
      'watch',
      { ...FAST_WATCH, steadyIntervalMs: 1000 },
      { onState: (s) => void states.push(s) },
    );
    assert.equal(first.end, 'ready', `${first.end}: ${first.message}\n${test.logLines.join('\n')}`);
    const shown = slurm.run(['scontrol', 'show', 'job', '-o', id]).stdout;
    assert.match(shown, /NodeList=n\[1-2\] /, shown);
    // Rank 0's node, the first of the job's node list, is where HTTP went.
    assert.equal(test.session.client.baseUrl, `http://n1:${host.httpPort}`);
    const out = fs.readFileSync(path.join(dir, `${name}-${id}.out`), 'utf8');
    assert.match(out, /The server is fired up and ready to roll!/);
    assert.equal(taskPids(id, 1).length > 0, true, 'rank 1 runs on n2');
    return { id, dir, states };
  };

  it("one rank's process killed on the second node while rank 0 serves: the server failed, that node named", async () => {
    const { id, dir, states } = await readyJob('kimi-two');
    for (const pid of taskPids(id, 1)) process.kill(pid, 'SIGKILL');
    const failed = await waitFor(() => states.find((s) => s.failure !== undefined), {
      timeoutMs: 60_000,
      message: `the failure of n2's rank: ${JSON.stringify(states.at(-1)?.unit)}\n${fs.readFileSync(path.join(dir, `kimi-two-${id}.out`), 'utf8').slice(-3000)}`,
    });
    assert.match(failed.failure?.summary ?? '', /lost node 1 \(n2\) of the job: its process ended: Killed/);
    assert.doesNotMatch(failed.failure?.summary ?? '', /exited with status|crash/);
    // Rank 0 still runs in the job: the scheduler says RUNNING, the server is failed all the same.
    assert.equal(jobState(slurm, id), 'RUNNING');
  });

  it("the second node set DOWN (scontrol update state=down): NODE_FAIL, named as that node's failure", async () => {
    const { id, states } = await readyJob('kimi-down', '--no-requeue');
    const down = slurm.run(['scontrol', 'update', 'nodename=n2', 'state=down', 'reason=kimi-test']);
    assert.equal(down.status, 0, down.stderr);
    const failed = await failureWithin(states, 90_000, 'the end by NODE_FAIL');
    assert.match(
      failed.failure?.summary ?? '',
      /ended because node 1 \(n2\) of the job failed \(NODE_FAIL; srun: Node failure on n2\)/,
    );
    // The failure may be shown while the job still completes (Reason=NodeDown); the scheduler's end follows.
    await waitFor(() => /JobState=NODE_FAIL/.test(slurm.run(['scontrol', 'show', 'job', '-o', id]).stdout), {
      timeoutMs: 60_000,
      message: `job ${id} NODE_FAIL in the scheduler`,
    });
  });

  it("the second node set DOWN while the job's processes say nothing: the scheduler's NODE_FAIL is shown within a few steady rounds", async () => {
    const { id, states } = await readyJob('kimi-quiet', '--no-requeue');
    // Nothing of the job speaks: srun (in the batch script) cannot write its node-failure line,
    // and n1's slurmd cannot end rank 0, which keeps answering /health, nor the sampler's step;
    // the job stays COMPLETING (Reason=NodeDown). Only the scheduler's state says the job ended.
    const slurmd = Number(fs.readFileSync(path.join(slurm.dir, 'log', 'slurmd-n1.pid'), 'utf8').trim());
    const srun = pidsWith('srun', [`SLURM_JOB_ID=${id}`]);
    assert.notEqual(srun.length, 0, "the batch script's srun");
    const stopped = [slurmd, ...srun];
    for (const pid of stopped) process.kill(pid, 'SIGSTOP');
    try {
      const down = slurm.run(['scontrol', 'update', 'nodename=n2', 'state=down', 'reason=kimi-test']);
      assert.equal(down.status, 0, down.stderr);
      const failed = await failureWithin(states, 90_000, 'the end by NODE_FAIL, from the scheduler alone');
      assert.match(failed.failure?.summary ?? '', /ended because .* failed \(NODE_FAIL/);
      assert.match(slurm.run(['scontrol', 'show', 'job', '-o', id]).stdout, / Reason=NodeDown /);
    } finally {
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
    }
  });
});
