/**
 * The host sampler of a server that is a Slurm batch job runs inside the job's allocation (a step
 * beside the server, `srun --overlap` on its batch host), against a real scheduler (Debian's
 * Slurm 22.05: test/gpu-host/slurm.ts) and the real sshd of the simulated host, as its
 * unprivileged login. The login node here cannot see the job's processes at all (the host's sshd
 * has a PID namespace of its own; slurmd runs the job outside it), so any process the sampler
 * reads was read inside the job. A job that waits in the queue has no node: the watch says which
 * witnesses it lacks.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { FAST_WATCH } from './simHost';
import { waitFor } from '../util/waitFor';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { jobState, untilRunning } from '../gpu-host/slurmJobs';
import { slurmSuite } from './slurmSuite';

const USER = 'kimi';
/**
 * The simulator reads its 4 MB at 0.25 MB/s, 16 s: the sampler (a job step srun starts beside the
 * server) has readings of a load under way even when a busy machine takes seconds to start it (at
 * 1 MB/s, a busy run's load was over before its first reading).
 */
const SLOW_READ = { readMBps: 0.25, warmReadMBps: 0.25 };

describe('slurm: the host sampler runs inside the job, on its node', function () {
  this.timeout(180_000);
  const suite = slurmSuite(USER, SLOW_READ);

  it("reads the job's own processes on its node: bytes read by the simulator the job runs", async () => {
    const { dir, script } = suite.jobFiles('inside', { sim: SLOW_READ });
    const id = await suite.submit(dir, `-J kimi-inside ${script}`);
    await untilRunning(suite.slurm, id);
    const test = await suite.session('kimi-inside', script);
    const states: LoadState[] = [];
    const outcome = await test.session.watch('watch', FAST_WATCH, { onState: (s) => void states.push(s) });
    const log = test.logLines.join('\n');
    assert.equal(outcome.end, 'ready', `${outcome.end}: ${outcome.message}\n${log}`);
    const said = new RegExp(
      `The host sampler runs inside job ${id} on n1 \\(srun --overlap\\): the server's processes there are PIDs ([\\d, ]+)\\.`,
    ).exec(log);
    assert.ok(said, `the sampler said where it runs and what it reads:\n${log}`);
    // Each process it names is the job's: the simulator, with the job's id in its environment.
    const pids = (said[1] ?? '').split(', ').map(Number);
    for (const pid of pids) {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      assert.ok(environ.includes(`SLURM_JOB_ID=${id}`), `pid ${pid} belongs to job ${id}`);
      assert.match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /sglang-sim.*sglang\.launch_server/);
    }
    // The bytes it read: the model's shards, counted by a witness the login node could not have.
    const read = states.map((s) => s.io?.readBytes ?? 0).reduce((a, b) => Math.max(a, b), 0);
    assert.ok(read >= 1024 * 1024, `the sampler saw the simulator read the model (max ${read} bytes)`);
    assert.doesNotMatch(log, /No host sampler for/);
  });

  it('a job that waits in the queue: the watch says which witnesses it lacks, and reads none of the login node', async () => {
    const { dir, script } = suite.jobFiles('waiting', { sim: SLOW_READ });
    await suite.holdTheNode(dir);
    const id = await suite.submit(dir, `-J kimi-waiting ${script}`);
    const test = await suite.session('kimi-waiting', script);
    const states: LoadState[] = [];
    void test.session.watch('watch', FAST_WATCH, { onState: (s) => void states.push(s) }).catch(() => undefined);
    const lacks = await waitFor(
      () =>
        test.logLines.find(
          (l) => l.includes(`No host sampler for`) && l.includes(`job ${id} has not started yet (PENDING`),
        ),
      { timeoutMs: 30_000, message: `the watch said it lacks the sampler's witnesses:\n${test.logLines.join('\n')}` },
    );
    assert.match(
      lacks,
      /The watch lacks its witnesses \(GPU memory, bytes read by the server's processes, the listener on its port\)/,
    );
    assert.equal(jobState(suite.slurm, id), 'PENDING');
    assert.ok(
      states.every((s) => s.io === undefined && s.gpu === undefined),
      'no figure from the login node',
    );
  });
});
