/**
 * The hooks and builders of a suite about one login user's Slurm jobs on a simulated host with a
 * real scheduler: the host and cluster started once, each test's sessions disposed and the user's
 * jobs ended after it, so the next test starts with an empty queue.
 */
import type { GpuHost } from '../gpu-host/harness';
import type { SlurmCluster } from '../gpu-host/slurm';
import {
  endJobsOf,
  holdTheNode,
  sbatchAs,
  startSlurmHost,
  writeSimJob,
  type SimJobOptions,
} from '../gpu-host/slurmJobs';
import { loginAs, sessionForHost, type TestSession } from './simHost';

export interface SlurmSuite {
  readonly host: GpuHost;
  readonly slurm: SlurmCluster;
  /** The job folder `name` of the user: its batch script (the simulator as its program) and sim.json. */
  jobFiles(name: string, opts?: SimJobOptions): { dir: string; script: string };
  /** `sbatch --parsable ARGS` in `dir` as the user; the job id. */
  submit(dir: string, args: string): Promise<string>;
  /** A job that takes the one node, running; the id. */
  holdTheNode(dir: string): Promise<string>;
  /** A session on the server that is the job `job` (its script `script`), logged in as the user; disposed after the test. */
  session(job: string, script: string, url?: string): Promise<TestSession>;
}

/** Registers the suite's hooks (call it in a describe) and gives its builders. */
export function slurmSuite(user: string, sim?: Record<string, unknown>): SlurmSuite {
  let host: GpuHost | undefined;
  let slurm: SlurmCluster | undefined;
  const sessions: TestSession[] = [];
  const started = <T>(made: T | undefined): T => {
    if (made === undefined) throw new Error('the Slurm host is not started (its before hook failed)');
    return made;
  };
  before(async function () {
    ({ host, slurm } = await startSlurmHost(user, sim ? { sim } : {}));
  });
  afterEach(async () => {
    for (const made of sessions.splice(0)) made.dispose();
    if (slurm) await endJobsOf(slurm, user);
  });
  after(async () => {
    await slurm?.stop();
    await host?.stop();
  });
  return {
    get host() {
      return started(host);
    },
    get slurm() {
      return started(slurm);
    },
    jobFiles(name, opts = {}) {
      return writeSimJob(this.host, this.slurm, user, name, opts);
    },
    submit(dir, args) {
      return sbatchAs(this.host, user, dir, args);
    },
    holdTheNode(dir) {
      return holdTheNode(this.host, this.slurm, user, dir);
    },
    async session(job, script, url) {
      const made = await sessionForHost(this.host, {
        server: {
          ...loginAs(this.host, user, false),
          unit: undefined,
          slurm: { job, script },
          ...(url ? { url } : {}),
        },
      });
      sessions.push(made);
      return made;
    },
  };
}
