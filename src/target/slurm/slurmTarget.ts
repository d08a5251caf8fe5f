/**
 * A server that runs as a Slurm batch job, reached through the login node: the job is found by
 * its name and the login user (`squeue --me`), read with `scontrol show job`, restarted with
 * `scontrol requeue` when the job allows it (same id) or with scancel and sbatch of the script,
 * and its output file followed on the login node (a shared filesystem, as clusters have).
 */
import type { SlurmTargetConfig } from '../../config/names';
import { slurmNeedsNoRule } from '../../present/words/targetWords';
import {
  insideJob,
  jobNotStarted,
  jobSuspended,
  noJob,
  noOutputFile,
  squeueFailedWith,
  tailExited,
} from '../../present/words/slurmWords';
import type { RemoteProcess } from '../../transport/transport';
import type { ArgsEditor } from '../argsEdit';
import {
  TargetError,
  type LogFollowHandlers,
  type LogTail,
  type RestartResult,
  type Target,
  type TargetExec,
  type TargetIo,
  type ServerNodeShell,
  type TargetPrivileges,
  type TargetState,
} from '../targetTypes';
import { shellLine } from '../../transport/shell';
import { jobServiceStatus, nodeFailed, noJobStatus } from './jobStatus';
import { NodeTroubleLog } from './nodeTrouble';
import { serverArgvOfScript } from './scriptArgv';
import { BatchScriptEditor } from './scriptEditor';
import {
  followCommand,
  inJobCommand,
  JOB_ROOTS_SH,
  requeueCommand,
  resubmitCommand,
  scriptChangedCommand,
  scriptTextCommand,
  stateCommand,
  tailCommand,
} from './slurmCommands';
import { expandOutputPath, parseJobReading, type JobReading, type SlurmJob } from './slurmJob';

const LIVE: ReadonlySet<string> = new Set(['RUNNING', 'CONFIGURING', 'SUSPENDED']);

export class SlurmTarget implements Target {
  readonly kind = 'slurm';
  readonly label: string;
  readonly logFollowEndsWithService = true;
  /** A node failure, preemption or the time limit ends the job in the scheduler first. */
  readonly endsOnlyInState = true;
  readonly commandRunsOnHost = false;
  readonly argsEdit: ArgsEditor;
  readonly privileges: TargetPrivileges;
  /** The job last seen: found again when squeue no longer lists it (to say it is gone). */
  private lastId: string | undefined;
  private script: { readonly id: string; readonly argv: readonly string[] } | undefined;
  /** The run last read (a requeue is the next run of the same id): the output's node trouble is noted under it. */
  private lastRun: { readonly id: string; readonly restarts: number } | undefined;
  /** What the followed output file said of the job's nodes (srun's own lines). */
  private readonly trouble = new NodeTroubleLog();
  /** The run whose output file was read for the node a NODE_FAIL lost. */
  private nodeFailureRead: string | undefined;
  /**
   * The node list of the run while it ran: a job completing after a node's failure lists only
   * the nodes still completing, and a node's rank is its place in the whole list.
   */
  private runHosts: { readonly run: string; readonly hosts: readonly string[] } | undefined;

  constructor(private readonly config: SlurmTargetConfig) {
    this.label = config.label;
    this.argsEdit = new BatchScriptEditor(config);
    this.privileges = {
      kind: 'none',
      why: slurmNeedsNoRule(config.label),
    };
  }

  /** What the scheduler says of the job now. */
  async read(io: TargetExec): Promise<JobReading> {
    const result = await io.exec(stateCommand(this.config.job, this.lastId));
    const reading = parseJobReading(result.stdout);
    if (reading.kind === 'job') {
      this.lastId = reading.job.id;
      this.lastRun = { id: reading.job.id, restarts: reading.job.restarts };
    }
    return reading;
  }

  async readState(io: TargetExec): Promise<TargetState> {
    const reading = this.withRunHosts(await this.read(io));
    if (reading.kind === 'error') throw new TargetError('failed', `squeue failed: ${reading.message}`);
    if (reading.kind === 'job' && nodeFailed(reading.job, this.trouble.of(reading.job.id, reading.job.restarts)))
      await this.readNodeFailure(io, reading.job);
    // Rank 0 (the server's HTTP) runs on the first node of the job's node list.
    const node =
      reading.kind === 'job' && LIVE.has(reading.job.state) ? (reading.hosts?.[0] ?? reading.job.batchHost) : undefined;
    const unit =
      reading.kind === 'job'
        ? {
            ...jobServiceStatus(reading, this.trouble.of(reading.job.id, reading.job.restarts)),
            ...(node ? { node } : {}),
          }
        : noJobStatus(this.config.job, reading);
    const argv = reading.kind === 'job' ? await this.scriptArgv(io, reading.job.id) : [];
    // The script's paths are the cluster's shared filesystem, which the login node sees too.
    const serverNode = reading.kind === 'job' ? serverNodeOf(reading.job) : undefined;
    return { unit, argv, hostPath: (path) => path, ...(node ? { node } : {}), ...(serverNode ? { serverNode } : {}) };
  }

  /** The reading with the node list the run had while it ran (kept from its live readings). */
  private withRunHosts(reading: JobReading): JobReading {
    if (reading.kind !== 'job') return reading;
    const run = `${reading.job.id}.${reading.job.restarts}`;
    if (LIVE.has(reading.job.state) && reading.hosts && reading.hosts.length > 0) {
      this.runHosts = { run, hosts: reading.hosts };
      return reading;
    }
    return this.runHosts?.run === run ? { ...reading, hosts: this.runHosts.hosts } : reading;
  }

  /**
   * The node a NODE_FAIL lost, from the output file's last lines when the follow has not told it
   * (the scheduler's state may be read before the follow's line arrives): read once per run.
   */
  private async readNodeFailure(io: TargetExec, job: SlurmJob): Promise<void> {
    const run = `${job.id}.${job.restarts}`;
    if (this.nodeFailureRead === run || this.trouble.of(job.id, job.restarts).nodeFailure || !job.stdOut) return;
    this.nodeFailureRead = run;
    const result = await io.exec(tailCommand(expandOutputPath(job.stdOut, job), 200));
    for (const line of result.stdout.split('\n')) this.trouble.note(job.id, job.restarts, line);
  }

  /** The server's command line in the job's batch script (the controller's copy), read once per job. */
  private async scriptArgv(io: TargetExec, id: string): Promise<readonly string[]> {
    if (this.script?.id === id) return this.script.argv;
    const result = await io.exec(scriptTextCommand(id));
    const argv = result.code === 0 ? serverArgvOfScript(result.stdout) : [];
    this.script = { id, argv };
    return argv;
  }

  async restart(io: TargetExec): Promise<RestartResult> {
    const reading = await this.read(io);
    if (reading.kind === 'error') return failed(`squeue failed: ${reading.message}`);
    const job = reading.kind === 'job' ? reading.job : undefined;
    if (job?.state === 'PENDING')
      return failed(
        `${this.label} (job ${job.id}) has not started yet: it waits in the queue (${job.reason ?? 'no reason given'}); nothing to restart`,
      );
    // A requeue runs the job's own copy of the script: once the file changed (parser flags), submit it again.
    if (
      job &&
      LIVE.has(job.state) &&
      job.requeue &&
      (await io.exec(scriptChangedCommand(this.config.script, job.id))).code !== 1
    ) {
      const result = await io.exec(requeueCommand(job.id));
      if (result.code === 0) return { ok: true };
      return failed(`scontrol requeue ${job.id} failed: ${oneLine(result.stdout + result.stderr)}`);
    }
    const cancel = job && (LIVE.has(job.state) || job.state === 'COMPLETING') ? job.id : undefined;
    const result = await io.exec(resubmitCommand(this.config.script, job?.workDir, cancel, this.config.job));
    const id = /^(\d+)/.exec(result.stdout.trim().split('\n').pop() ?? '')?.[1];
    if (result.code !== 0 || !id)
      return failed(`sbatch ${this.config.script} failed: ${oneLine(result.stdout + result.stderr) || 'no message'}`);
    this.lastId = id;
    return { ok: true };
  }

  /** The job's output file, as the scheduler names it; undefined with why when there is none. */
  private async outputFile(io: TargetExec): Promise<{ file: string; job: SlurmJob } | { problem: string }> {
    const reading = await this.read(io);
    if (reading.kind === 'error') return { problem: squeueFailedWith(reading.message) };
    if (reading.kind !== 'job') return { problem: noJobStatus(this.config.job, reading).notFoundText ?? noJob() };
    const path = reading.job.stdOut;
    if (!path) return { problem: noOutputFile(reading.job.id) };
    return { file: expandOutputPath(path, reading.job), job: reading.job };
  }

  async followLog(io: TargetIo, _sinceEpochMs: number, handlers: LogFollowHandlers): Promise<RemoteProcess> {
    const out = await this.outputFile(io);
    if ('problem' in out) throw new TargetError('failed', out.problem);
    const id = out.job.id;
    return io.stream(
      followCommand(out.file, id),
      (line) => {
        // srun's lines name the node whose tasks ended: noted under the run read last.
        const run = this.lastRun?.id === id ? this.lastRun.restarts : out.job.restarts;
        const news = this.trouble.note(id, run, line);
        handlers.onEntry({ message: line, at: Date.now(), ...(news ? { stateNews: true } : {}) });
      },
      handlers.onStderr,
    );
  }

  async tailLog(io: TargetExec, lines: number): Promise<LogTail> {
    const out = await this.outputFile(io);
    if ('problem' in out) return { entries: [], problem: out.problem };
    const result = await io.exec(tailCommand(out.file, lines));
    const at = Date.now();
    const entries = result.stdout
      .split('\n')
      .filter((line, i, all) => i < all.length - 1 || line !== '')
      .map((message) => ({ message, at }));
    const problem = result.code === 0 ? undefined : oneLine(result.stderr) || tailExited(result.code);
    return { entries, ...(problem ? { problem } : {}) };
  }

  async runningArgv(io: TargetExec): Promise<readonly string[] | undefined> {
    const state = await this.readState(io);
    return state.unit.mainPid > 0 ? state.argv : undefined;
  }

  /** Not read: a job's environment is the submitting shell's, which may hold secrets. */
  async readEnvironment(): Promise<undefined> {
    return undefined;
  }
}

/**
 * Where the host sampler runs for a job: a step inside its allocation on its batch host while it
 * runs (rank 0's node); why not while it waits for one; nothing once it ended (no process).
 */
export function serverNodeOf(job: SlurmJob): ServerNodeShell | undefined {
  if (job.state === 'RUNNING' && job.batchHost) {
    const node = job.batchHost;
    return {
      kind: 'inside',
      where: insideJob(job.id, node),
      key: `${job.id} run ${job.restarts} on ${node}`,
      rootsSh: JOB_ROOTS_SH,
      wrap: (script) => shellLine(inJobCommand(job.id, node, script)),
    };
  }
  if (['PENDING', 'REQUEUED', 'CONFIGURING'].includes(job.state))
    return {
      kind: 'lacking',
      why: jobNotStarted(job.id, job.stateText, job.reason || undefined),
    };
  if (job.state === 'SUSPENDED') return { kind: 'lacking', why: jobSuspended(job.id) };
  return undefined;
}

function failed(message: string): RestartResult {
  return { ok: false, error: new TargetError('failed', message) };
}

function oneLine(text: string): string {
  return text.trim().split('\n').slice(-3).join(' ');
}
