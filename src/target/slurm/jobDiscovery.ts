/**
 * Finding the login user's batch jobs that run a model server ("Kimi Service: Add server" on a
 * login node): one remote command lists the user's jobs still in the queue or running (`squeue
 * --me`), with each job's `scontrol show job -o` line and the batch script the controller keeps
 * (`scontrol write batch_script ID -`); the pure reader here keeps the jobs whose script runs
 * SGLang or vLLM and derives the entry `"slurm": { job, script }` with the url `http://{node}:PORT`
 * (the server runs on the job's node, whatever its --host says). A job whose script is not a file
 * (`sbatch --wrap`) or whose name could not be named in an entry is left out.
 */
import { findServerCommand, modelPathOf } from '../../engine/engine';
import { SLURM_JOB_NAME, isValidScriptPath } from '../../config/names';
import { slurmDiscoveryWhat, slurmDiscoveryWhere } from '../../present/words/slurmWords';
import type { HostCommand } from '../../transport/shell';
import { serverPortOf, type DiscoveredUnit, type HostDiscovery } from '../discovered';
import { serverArgvOfScript } from './scriptArgv';
import { parseScontrolJob, type SlurmJob } from './slurmJob';

/** Jobs looked at, at most; script bytes read of each. */
const MAX_JOBS = 50;
const MAX_SCRIPT_BYTES = 65536;

/**
 * The login's uid first (as every kind's listing), then per job: `job=ID`, scontrol's line, the
 * script's lines each behind `| `. Nothing when the login node has no squeue. Constant text.
 */
export const JOB_DISCOVERY_SCRIPT = [
  'id -u',
  'command -v squeue >/dev/null 2>&1 || exit 0',
  `squeue --me -h -o %i 2>/dev/null | grep -E '^[0-9]+$' | head -n ${MAX_JOBS} | while read -r id; do`,
  '  echo "job=$id"',
  '  scontrol show job -o "$id" 2>/dev/null | head -n 1',
  `  scontrol write batch_script "$id" - 2>/dev/null | head -c ${MAX_SCRIPT_BYTES} | sed 's/^/| /'`,
  '  echo',
  'done',
  'exit 0',
].join('\n');

export const JOB_DISCOVERY_COMMAND: HostCommand = { argv: ['sh', '-c', JOB_DISCOVERY_SCRIPT] };

interface ListedJob {
  readonly id: string;
  readonly job: SlurmJob | undefined;
  readonly script: string[];
}

function listedJobs(stdout: string): ListedJob[] {
  const jobs: { id: string; line?: string; script: string[] }[] = [];
  for (const line of stdout.split('\n')) {
    const id = /^job=(\d{1,12})$/.exec(line.trim())?.[1];
    if (id) jobs.push({ id, script: [] });
    const current = jobs[jobs.length - 1];
    if (!current || id) continue;
    if (line.startsWith('JobId=') && current.line === undefined) current.line = line;
    else if (line.startsWith('|')) current.script.push(line.replace(/^\| ?/, ''));
  }
  return jobs.map((j) => ({ id: j.id, job: j.line ? parseScontrolJob(j.line, 0) : undefined, script: j.script }));
}

/** The jobs of the listing that run SGLang or vLLM, one per job name (the newest), by name. */
export function parseJobDiscovery(stdout: string): DiscoveredUnit[] {
  const byName = new Map<string, DiscoveredUnit & { id: number }>();
  for (const { id, job, script } of listedJobs(stdout)) {
    if (!job || job.id !== id || !SLURM_JOB_NAME.test(job.name)) continue;
    const path = job.command;
    if (!path || !path.startsWith('/') || !isValidScriptPath(path)) continue;
    const argv = serverArgvOfScript(script.join('\n'));
    if (findServerCommand(argv) === null) continue;
    const previous = byName.get(job.name);
    if (previous && previous.id > Number(id)) continue;
    byName.set(job.name, {
      id: Number(id),
      unit: job.name,
      entry: { slurm: { job: job.name, script: path } },
      sudoUnlessRoot: false,
      description: `Slurm job ${id}, ${job.stateText}${job.nodeList ? ` on ${job.nodeList}` : ''}`,
      activeState: job.stateText,
      fragmentPath: path,
      argv,
      modelPath: modelPathOf(argv),
      url: `http://{node}:${serverPortOf(argv)}`,
    });
  }
  return [...byName.values()].map(({ id: _id, ...unit }) => unit).sort((a, b) => a.unit.localeCompare(b.unit));
}

/** How the Slurm kind finds a login node's servers: the login user's jobs. */
export const jobDiscovery: HostDiscovery = {
  get what() {
    return slurmDiscoveryWhat();
  },
  get where() {
    return slurmDiscoveryWhere();
  },
  command: JOB_DISCOVERY_COMMAND,
  parse: parseJobDiscovery,
};
