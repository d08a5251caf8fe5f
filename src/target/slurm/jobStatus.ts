/**
 * A batch job's reading as the target's state model (ServiceStatus, systemd's words): queued
 * and configuring are `activating` without a process, running is `active`, completing is
 * `deactivating`, and each end state is said in the scheduler's words. The job id stands for
 * the main PID (`mainPidElsewhere`: the server runs on a compute node, not on the login node);
 * the id and the restart count name the run, so a requeued job is a new run. Pure.
 */
import type { ServiceStatus } from '../targetTypes';
import { nodeFailWords, taskEndedWords, type RunTrouble } from './nodeTrouble';
import type { Accounting, JobReading, SlurmJob } from './slurmJob';
import {
  cancelledWords,
  endedBySlurm,
  endedInState,
  jobForgotten,
  noAccountingCannotSay,
  noJobNamed,
  sacctCannotSay,
  sacctSaysEnded,
} from '../../present/words/slurmWords';

const MANAGER = { manager: 'scheduler', managerName: 'Slurm', dropInPaths: [], needDaemonReload: false } as const;

/** "was cancelled by root (scancel)": the canceller from accounting, or why it is not known. */
function cancelled(job: SlurmJob, accounting: Accounting | undefined): string {
  const reason = job.reason && job.reason !== 'None' ? job.reason : undefined;
  const by = accounting?.kind === 'known' ? accounting.cancelledBy : undefined;
  return cancelledWords(by, accounting?.kind === 'disabled', reason);
}

/** What accounting says of a job the controller forgot, or that it cannot say. */
function goneWords(accounting: Accounting | undefined): string {
  if (accounting?.kind === 'known')
    return sacctSaysEnded(accounting.state, accounting.cancelledBy, accounting.exitCode);
  if (accounting?.kind === 'unknown') return sacctCannotSay(accounting.said);
  return noAccountingCannotSay();
}

function label(job: SlurmJob): string {
  return `job ${job.id} (${job.name})`;
}

function common(job: SlurmJob): Omit<ServiceStatus, 'activeState' | 'subState' | 'mainPid' | 'result'> {
  const endsAt =
    job.startTime !== undefined && job.timeLimitSeconds !== undefined
      ? job.startTime + job.timeLimitSeconds * 1000
      : undefined;
  return {
    ...MANAGER,
    loadState: 'loaded',
    id: label(job),
    jobId: job.id,
    nRestarts: 0,
    invocationId: `slurm job ${job.id} run ${job.restarts}`,
    ...(job.startTime !== undefined ? { execMainStartedAt: job.startTime } : {}),
    ...(job.endTime !== undefined && isEnded(job) ? { execMainExitedAt: job.endTime } : {}),
    ...(endsAt !== undefined ? { endsAt } : {}),
    mainPidElsewhere: true,
  };
}

function isEnded(job: SlurmJob): boolean {
  return !['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'OTHER'].includes(job.state);
}

/** The job id as a number for mainPid (ids are decimal). */
function runId(job: SlurmJob): number {
  return Number(job.id);
}

/**
 * `trouble`: what the run's output file said of its nodes. On a job over several nodes, a node's
 * tasks that ended while the job runs on fail the server (rank 0 may still answer, the group
 * cannot), named as that node's failure; a NODE_FAIL names the node srun lost.
 */
export function jobServiceStatus(
  reading: Extract<JobReading, { kind: 'job' }>,
  trouble: RunTrouble = {},
): ServiceStatus {
  const job = reading.job;
  const hosts = reading.hosts ?? [];
  const base = common(job);
  const exit = {
    ...(job.exitSignal ? { execMainStatus: job.exitSignal, execMainCode: 'killed' } : {}),
    ...(!job.exitSignal && job.exitCode !== undefined ? { execMainStatus: job.exitCode, execMainCode: 'exited' } : {}),
  };
  switch (job.state) {
    case 'PENDING':
    case 'REQUEUED':
      return {
        ...base,
        activeState: 'activating',
        subState: 'queued',
        mainPid: 0,
        result: 'success',
        queued: {
          ...(job.reason ? { reason: job.reason } : {}),
          ...(reading.estimatedStart !== undefined ? { estimatedStartAt: reading.estimatedStart } : {}),
        },
      };
    case 'CONFIGURING':
      return { ...base, activeState: 'activating', subState: 'configuring', mainPid: 0, result: 'success' };
    case 'RUNNING':
    case 'SUSPENDED':
      if (trouble.taskEnded && hosts.length > 1)
        return {
          ...base,
          activeState: 'failed',
          subState: 'node-failed',
          mainPid: 0,
          result: 'exit-code',
          endedBecause: taskEndedWords(trouble.taskEnded, hosts),
        };
      return {
        ...base,
        activeState: 'active',
        subState: job.state === 'RUNNING' ? 'running' : 'suspended',
        mainPid: runId(job),
        execMainPid: runId(job),
        result: 'success',
      };
    case 'COMPLETING':
      // A job ended by a node's failure stays COMPLETING until that node is cleaned up (minutes,
      // while rank 0 may still answer HTTP): its end is already the node's failure.
      if (nodeFailed(job, trouble))
        return {
          ...base,
          ...exit,
          activeState: 'failed',
          subState: 'node_fail',
          mainPid: 0,
          result: 'node_fail',
          endedBecause: nodeFailWords(trouble, hosts),
        };
      // At its time limit the scheduler kills the job's processes and keeps it COMPLETING for
      // KillWait with Reason=TimeLimit before TIMEOUT: its end is already the time limit.
      if (job.reason === 'TimeLimit')
        return {
          ...base,
          ...exit,
          activeState: 'failed',
          subState: 'timeout',
          mainPid: 0,
          result: 'timeout',
          endedBecause: endedBySlurm('TIMEOUT'),
        };
      return {
        ...base,
        ...exit,
        activeState: 'deactivating',
        subState: 'completing',
        mainPid: runId(job),
        result: 'success',
      };
    case 'COMPLETED':
      return { ...base, ...exit, activeState: 'inactive', subState: 'dead', mainPid: 0, result: 'success' };
    case 'CANCELLED':
      return {
        ...base,
        ...exit,
        activeState: 'inactive',
        subState: 'dead',
        mainPid: 0,
        result: 'success',
        stopRequested: true,
        endedBecause: cancelled(job, reading.accounting),
      };
    case 'FAILED':
      return { ...base, ...exit, activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code' };
    case 'OUT_OF_MEMORY':
      return {
        ...base,
        ...exit,
        activeState: 'failed',
        subState: 'failed',
        mainPid: 0,
        result: 'oom-kill',
        endedBecause: endedBySlurm('OUT_OF_MEMORY'),
      };
    default: {
      const because =
        job.state === 'NODE_FAIL'
          ? nodeFailWords(trouble, hosts)
          : (endedBySlurm(job.state) ?? endedInState(job.stateText));
      return {
        ...base,
        ...exit,
        activeState: 'failed',
        subState: job.state.toLowerCase(),
        mainPid: 0,
        result: job.state.toLowerCase(),
        endedBecause: because,
      };
    }
  }
}

/** No job to show: none of that name, or the one followed is gone from the controller. */
export function noJobStatus(jobName: string, reading: Extract<JobReading, { kind: 'none' | 'gone' }>): ServiceStatus {
  const text =
    reading.kind === 'gone' ? jobForgotten(reading.id, jobName, goneWords(reading.accounting)) : noJobNamed(jobName);
  return {
    ...MANAGER,
    loadState: 'not-found',
    activeState: 'inactive',
    subState: 'dead',
    mainPid: 0,
    nRestarts: 0,
    result: 'success',
    id: reading.kind === 'gone' ? `job ${reading.id} (${jobName})` : `job ${jobName}`,
    notFoundText: text,
  };
}

/** The run ended by a node's failure: the scheduler's NODE_FAIL, or its reason while the job completes. */
export function nodeFailed(job: SlurmJob, trouble: RunTrouble): boolean {
  return (
    job.state === 'NODE_FAIL' || (job.state === 'COMPLETING' && (job.reason === 'NodeDown' || !!trouble.nodeFailure))
  );
}
