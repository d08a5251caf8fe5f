// A server that is a Slurm batch job, restarted from the palette of the packaged extension in
// code-server: a real scheduler (munged, slurmctld, one slurmd of one CPU, as the integration
// tests start it) on the simulated host, the job the unprivileged login's. The restart requeues
// the job behind another job: the status bar says queued, then loading, then ready once the
// other job ends.
import assert from 'node:assert/strict';
import type { GpuHost } from '../gpu-host/harness';
import { startSlurm, type SlurmCluster } from '../gpu-host/slurm';
import { endJobsOf, sbatchAs, writeSimJob } from '../gpu-host/slurmJobs';
import { loginAs } from '../integration/simHost';
import { waitFor } from '../util/waitFor';
import { printResultsDir, restartFromPalette, useScenario } from './scenario';
import { formatStatusHistory, runCommand, screenshot, waitForStatus } from './workbench';

after(printResultsDir);

const USER = 'kimi';
const JOB = 'kimi-e2e';

describe('e2e: a Slurm job restarted from the palette', function () {
  let slurm: SlurmCluster;
  let job: { dir: string; script: string; id: string };
  const jobState = (id: string): string => slurm.run(['squeue', '-h', '-j', id, '-o', '%T']).stdout.trim();
  const running = (id: string) =>
    waitFor(() => (jobState(id) === 'RUNNING' ? true : undefined), { timeoutMs: 60_000, message: `job ${id} RUNNING` });

  const scenario = useScenario({
    name: 'slurm',
    gpuHost: { users: [USER], shards: 4, shardBytes: 1024 * 1024, sim: { readMBps: 40, warmReadMBps: 40 } },
    hostKeyPolicy: 'strict',
    prepare: async (host: GpuHost) => {
      slurm = await startSlurm(host, { nodes: 1 });
      // A load of about 10 s (4 MiB at 0.4 MB/s): long enough for the status bar to show it.
      const files = writeSimJob(host, slurm, USER, 'e2e', {
        sim: { readMBps: 0.4, warmReadMBps: 0.4, coldFiles: 'all' },
        timeLimit: '60',
      });
      const id = await sbatchAs(host, USER, files.dir, `-J ${JOB} ${files.script}`);
      job = { ...files, id };
      await running(id);
      return async () => {
        await endJobsOf(slurm, USER);
        await slurm.stop();
      };
    },
    settings: (host: GpuHost) => ({
      // VS Code's default http.proxySupport ('override') is kept: it swaps a caller's HTTP agent
      // for its own on a url whose host is not loopback, which the extension's tunnel must survive.
      'kimiService.servers': [
        {
          name: 'sim',
          host: '127.0.0.1',
          port: host.sshPort,
          ...loginAs(host, USER, false),
          slurm: { job: JOB, script: job.script },
          url: `http://{node}:${host.httpPort}`,
        },
      ],
    }),
  });

  it('restart from the palette behind another job: queued, then loading, then ready', async () => {
    const page = scenario().page;
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 120_000 });
    await runCommand(page, 'Watch Kimi service until ready');
    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000, failOn: /failed|stopped|unreachable/ });
    const blocker = await sbatchAs(scenario().host, USER, job.dir, `-J blocker --time=5 --wrap 'sleep 300'`);
    await restartFromPalette(page);
    await waitForStatus(page, /^Kimi: queued/, { timeoutMs: 60_000, failOn: /failed|stopped|unreachable/ });
    await running(blocker);
    await waitForStatus(page, /^Kimi: queued.*\(Resources\)/, { timeoutMs: 60_000, failOn: /failed|stopped/ });
    await screenshot(page, 'slurm-queued');
    slurm.run(['scancel', blocker]);
    const hist = await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000, failOn: /failed|stopped/ });
    await screenshot(page, 'slurm-ready');
    console.log(`    status bar texts:\n${formatStatusHistory(hist)}`);
    const texts = hist.map((h) => h.text);
    const queued = texts.findIndex((t) => /^Kimi: queued/.test(t));
    const loading = texts.findIndex((t, i) => i > queued && /^Kimi: loading/.test(t));
    const ready = texts.findIndex((t, i) => i > loading && /^Kimi: ready/.test(t));
    assert.ok(
      queued >= 0 && loading > queued && ready > loading,
      `queued, loading, ready in order:\n${texts.join('\n')}`,
    );
    assert.equal(jobState(job.id), 'RUNNING', 'the same job, requeued');
    // The test's own sbatch runs log in with the harness's key, which handshakes() leaves out.
    const logins = scenario().host.handshakes();
    assert.equal(logins, 1, `one SSH login to the login node:\n${scenario().host.sshdLog().join('\n')}`);
  });
});
