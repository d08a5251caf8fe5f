// A login user's Slurm job, as the tests submit it: a folder holding the batch script (the SGLang
// simulator as the job's program, its output in %x-%j.out) and the simulator's sim.json, owned by
// that user; and sbatch run as that user through the real sshd.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from './harness';
import { slurmMissing, startSlurm, type SlurmCluster } from './slurm';
import { waitFor } from '../util/waitFor';

export interface SimJobOptions {
  /** sim.json, over a quick load (40 MB/s, warm-up 0.3 s). */
  readonly sim?: Record<string, unknown>;
  /** `#SBATCH --time=`, in minutes. */
  readonly timeLimit?: string;
}

/** The simulated `python -m sglang.launch_server` of the host, as a job's command line starts it. */
export function simulatorLaunch(host: GpuHost): string {
  return `${path.join(host.fixtureDir, 'opt', 'sglang', 'bin', 'python')} -m sglang.launch_server`;
}

/** Writes the job folder `name` of `user` with a one-node batch script; its folder and script. */
export function writeSimJob(
  host: GpuHost,
  slurm: SlurmCluster,
  user: string,
  name: string,
  opts: SimJobOptions = {},
): { dir: string; script: string } {
  const dir = slurm.userDir(user, name);
  const simDir = path.join(dir, 'sim');
  fs.mkdirSync(simDir, { recursive: true });
  fs.writeFileSync(
    path.join(simDir, 'sim.json'),
    JSON.stringify({ readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3, ...opts.sim }),
  );
  const script = path.join(dir, 'serve.sbatch');
  fs.writeFileSync(
    script,
    [
      '#!/bin/sh',
      `#SBATCH --output=${dir}/%x-%j.out`,
      `#SBATCH --time=${opts.timeLimit ?? '10'}`,
      `export KIMI_SIM_ROOT=${simDir}`,
      `exec ${simulatorLaunch(host)} \\`,
      `  --model-path ${host.modelPath} --tp 8 --host 127.0.0.1 --port ${host.httpPort}`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  ownedBy(slurm, user, dir);
  return { dir, script };
}

/** Gives `dir` and all below it to `user`, as a folder of their own would be. */
export function ownedBy(slurm: SlurmCluster, user: string, dir: string): void {
  const r = slurm.run(['chown', '-R', `${user}:`, dir]);
  assert.equal(r.status, 0, r.stderr);
}

/** `sbatch --parsable ARGS` in `dir`, as `user` through SSH; the job id. */
export async function sbatchAs(host: GpuHost, user: string, dir: string, args: string): Promise<string> {
  const r = await host.ssh(`cd '${dir}' && sbatch --parsable ${args}`, { user });
  assert.equal(r.code, 0, `sbatch: ${r.stderr}${r.stdout}`);
  return r.stdout.trim();
}

/**
 * A simulated GPU host with `user` as its login, and a real Slurm cluster on it (one or two
 * nodes); refused when Slurm is not installed.
 */
export async function startSlurmHost(
  user: string,
  opts: { nodes?: 1 | 2; sim?: Record<string, unknown> } = {},
): Promise<{ host: GpuHost; slurm: SlurmCluster }> {
  const missing = slurmMissing();
  if (missing) throw new Error(`Slurm is needed for these tests: ${missing}`);
  const host = await startGpuHost({
    users: [user],
    shards: 4,
    shardBytes: 1024 * 1024,
    sim: { readMBps: 40, warmReadMBps: 40, warmupSeconds: 0.3, ...opts.sim },
  });
  return { host, slurm: await startSlurm(host, { nodes: opts.nodes ?? 1 }) };
}

/**
 * Cancels every job of `user` and waits until the queue is empty, so the next test starts clean.
 * A job leaves the queue once slurmd has killed its steps (KillWait) and run its epilog, which a
 * busy machine can stretch past 30 s for a job whose rank was killed: up to 90 s, and a timeout
 * names what was still queued and why.
 */
export async function endJobsOf(slurm: SlurmCluster, user: string): Promise<void> {
  slurm.run(['scancel', '--full', `--user=${user}`]);
  let queued = '';
  try {
    await waitFor(
      () => {
        queued = slurm.run(['squeue', '-h', '-o', '%i %T %R']).stdout.trim();
        return queued === '' ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, message: 'the jobs of the test ended' },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; still queued: ${queued}`);
  }
}

/** The state squeue shows for job `id` (RUNNING, PENDING ...); empty once it has left the queue. */
export function jobState(slurm: SlurmCluster, id: string): string {
  return slurm.run(['squeue', '-h', '-j', id, '-o', '%T']).stdout.trim();
}

/** For a failing assertion's message: every job in the queue, and how jobs `ids` ended (sacct). */
export function queueNow(slurm: SlurmCluster, ids: readonly string[]): string {
  const queue = slurm.run(['squeue', '-h', '-o', '%i %j %T %r %S %L']).stdout.trim();
  const ended = slurm.run([
    'sacct',
    '-n',
    '-X',
    '-P',
    '-j',
    ids.join(','),
    '-o',
    'JobID,JobName,State,ExitCode,Start,End',
  ]);
  return `squeue:\n${queue || '(empty)'}\nsacct:\n${ended.stdout.trim() || ended.stderr.trim()}`;
}

/** Waits until job `id` runs. */
export function untilRunning(slurm: SlurmCluster, id: string): Promise<true> {
  return waitFor(() => (jobState(slurm, id) === 'RUNNING' ? true : undefined), {
    timeoutMs: 30_000,
    message: `job ${id} RUNNING`,
  });
}

/** A job of `user` that takes the one node (it sleeps), running: the next job waits in the queue. Its id. */
export async function holdTheNode(host: GpuHost, slurm: SlurmCluster, user: string, dir: string): Promise<string> {
  const id = await sbatchAs(host, user, dir, `-J blocker --wrap 'sleep 300'`);
  await untilRunning(slurm, id);
  return id;
}
