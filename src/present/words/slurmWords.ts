/** What the Slurm target says when the scheduler's answer about a job cannot be read. */
import * as l10n from '@vscode/l10n';

export function squeueFailed(): string {
  return l10n.t('squeue failed');
}

/** `output`: the start of what the state script printed. */
export function unexpectedOutput(output: string): string {
  return l10n.t('unexpected output: {0}', output);
}

export function scontrolSaidNothing(job: string): string {
  return l10n.t('scontrol show job {0} said nothing', job);
}

export function sacctPrintedNothing(): string {
  return l10n.t('sacct printed nothing for the job');
}

/** The end states that are the scheduler's doing, not the server's crash (after "the service"); undefined for any other. */
export function endedBySlurm(state: string): string | undefined {
  switch (state) {
    case 'TIMEOUT':
      return l10n.t('was ended by Slurm at the job time limit (TIMEOUT)');
    case 'PREEMPTED':
      return l10n.t('was preempted by Slurm for another job (PREEMPTED)');
    case 'BOOT_FAIL':
      return l10n.t('never started: a node of the job failed to boot (BOOT_FAIL)');
    case 'DEADLINE':
      return l10n.t('was ended by Slurm at its deadline (DEADLINE)');
    case 'OUT_OF_MEMORY':
      return l10n.t('was killed for using more memory than the job asked for (OUT_OF_MEMORY)');
    default:
      return undefined;
  }
}

/** Any other end state, in the scheduler's words (`stateText`). */
export function endedInState(stateText: string): string {
  return l10n.t('ended in state {0}', stateText);
}

/**
 * "was cancelled by root (scancel)": `by` the canceller from accounting; `noAccounting` when the
 * cluster keeps none; `reason` the scheduler's reason, when it gave one.
 */
export function cancelledWords(by: string | undefined, noAccounting: boolean, reason: string | undefined): string {
  if (by !== undefined)
    return reason
      ? l10n.t('was cancelled by {0} (scancel; {1})', by, reason)
      : l10n.t('was cancelled by {0} (scancel)', by);
  if (noAccounting)
    return reason
      ? l10n.t('was cancelled (scancel; {0}; by whom only accounting knows, and this cluster keeps none)', reason)
      : l10n.t('was cancelled (scancel; by whom only accounting knows, and this cluster keeps none)');
  return reason ? l10n.t('was cancelled (scancel; {0})', reason) : l10n.t('was cancelled (scancel)');
}

/** What accounting says of a job the controller forgot. */
export function sacctSaysEnded(state: string, by: string | undefined, exitCode: string | undefined): string {
  const ended = by ? l10n.t('sacct says it ended {0} by {1}', state, by) : l10n.t('sacct says it ended {0}', state);
  return exitCode ? l10n.t('{0} (exit code {1})', ended, exitCode) : ended;
}

/** `said`: what sacct printed instead of an answer. */
export function sacctCannotSay(said: string): string {
  return l10n.t('sacct cannot say how: {0}', said);
}

export function noAccountingCannotSay(): string {
  return l10n.t('without accounting, sacct cannot say how');
}

/** A followed job gone from the controller; `gone`: what accounting says of it. */
export function jobForgotten(id: string, name: string, gone: string): string {
  return l10n.t(
    'job {0} ({1}) is no longer known to the Slurm controller (it ended more than MinJobAge ago; {2})',
    id,
    name,
    gone,
  );
}

export function noJobNamed(name: string): string {
  return l10n.t('no Slurm job named {0} of the login user is known to the controller (squeue --me -t all)', name);
}

/** "node 1 (n2)": the node's place in the job's node list (node 0 runs rank 0), or the node's name alone. */
export function nodeLabel(node: string, index: number | undefined): string {
  return index !== undefined ? l10n.t('node {0} ({1})', index, node) : l10n.t('node {0}', node);
}

/** How a node's process ended: its exit status, or srun's words (`how`). */
export function processEnded(status: string | undefined, how: string): string {
  return status !== undefined ? l10n.t('exited with status {0}', status) : l10n.t('ended: {0}', how);
}

/** A run that lost a node's tasks while the job still runs (after "the service"). */
export function lostNodeTasks(label: string, ended: string, node: string, tasks: string, several: boolean): string {
  return several
    ? l10n.t(
        'lost {0} of the job: its process {1} (srun: {2}: tasks {3}), while the job still runs: the other nodes cannot serve without it',
        label,
        ended,
        node,
        tasks,
      )
    : l10n.t(
        'lost {0} of the job: its process {1} (srun: {2}: task {3}), while the job still runs: the other nodes cannot serve without it',
        label,
        ended,
        node,
        tasks,
      );
}

/** A NODE_FAIL end, naming the node (`label`, `node`) when the output file did. */
export function nodeFailed(label: string | undefined, node: string | undefined): string {
  return label !== undefined && node !== undefined
    ? l10n.t('ended because {0} of the job failed (NODE_FAIL; srun: Node failure on {1})', label, node)
    : l10n.t('ended because a node of the job failed (NODE_FAIL)');
}

export function squeueFailedWith(message: string): string {
  return l10n.t('squeue failed: {0}', message);
}

export function noJob(): string {
  return l10n.t('no job');
}

export function noOutputFile(id: string): string {
  return l10n.t('job {0} has no output file (StdOut) the controller knows', id);
}

export function tailExited(code: number | null): string {
  return l10n.t('tail exited {0}', String(code));
}

/** Where the host sampler runs for a running job. */
export function insideJob(id: string, node: string): string {
  return l10n.t('inside job {0} on {1} (srun --overlap)', id, node);
}

/** Why no host sampler runs for a job that waits: its state and the scheduler's reason, when it gave one. */
export function jobNotStarted(id: string, stateText: string, reason: string | undefined): string {
  return reason
    ? l10n.t('job {0} has not started yet ({1}, {2}): it runs on no node', id, stateText, reason)
    : l10n.t('job {0} has not started yet ({1}): it runs on no node', id, stateText);
}

export function jobSuspended(id: string): string {
  return l10n.t('job {0} is suspended', id);
}

/** What the Slurm kind finds on a login node, and where a server's command line is read. */
export function slurmDiscoveryWhat(): string {
  return l10n.t('Slurm job of the login user');
}

export function slurmDiscoveryWhere(): string {
  return l10n.t('its batch script');
}
