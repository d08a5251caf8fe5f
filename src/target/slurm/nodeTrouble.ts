/**
 * What a job's output file says of its nodes: srun's and slurmstepd's own lines, which are the
 * only place a login user learns that one rank's process died while the others run on (srun
 * keeps a step running when one task ends, unless `--kill-on-bad-exit`), or which node a
 * NODE_FAIL was (`scontrol show job` says only `Reason=NodeDown`, and a node that returns to
 * service no longer says it was down). Lines as Slurm 22.05.8 printed them:
 *
 *   srun: error: n2: task 1: Killed
 *   srun: error: n2: tasks 2-3: Exited with exit code 1
 *   srun: error: Node failure on n2
 *   slurmstepd-n1: error: *** JOB 4 ON n1 CANCELLED AT 2026-12-06T19:38:57 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***
 *
 * Pure.
 */
import * as words from '../../present/words/slurmWords';

export type SrunEvent =
  /** srun lost a node of the step. */
  | { readonly kind: 'node-failure'; readonly node: string; readonly line: string }
  /** Tasks of the step ended on a node, and how (`Killed`, `Exited with exit code 1`, `Segmentation fault`). */
  | {
      readonly kind: 'task-ended';
      readonly node: string;
      readonly tasks: string;
      readonly how: string;
      readonly line: string;
    }
  /** slurmstepd's end of the run (a cancel, a requeue, a node failure): the task ends after it are its doing. */
  | { readonly kind: 'run-ended'; readonly line: string };

const NODE = '([A-Za-z0-9][A-Za-z0-9._-]{0,63})';
const NODE_FAILURE = new RegExp(`^srun: error: Node failure on ${NODE}\\s*$`);
const TASK_ENDED = new RegExp(`^srun: error: ${NODE}: tasks? ([0-9][0-9,-]{0,63}): (.{1,120}?)\\s*$`);
const RUN_ENDED = /^slurmstepd(?:-\S+)?: error: \*\*\* JOB \d+ ON \S+ CANCELLED AT /;
const SLURM_OWN = /^(?:srun|slurmstepd(?:-\S+)?): /;

export function srunEvent(line: string): SrunEvent | undefined {
  const text = line.replace(/\r$/, '');
  const failure = NODE_FAILURE.exec(text);
  if (failure) return { kind: 'node-failure', node: failure[1]!, line: text };
  const ended = TASK_ENDED.exec(text);
  if (ended) return { kind: 'task-ended', node: ended[1]!, tasks: ended[2]!, how: ended[3]!, line: text };
  if (RUN_ENDED.test(text)) return { kind: 'run-ended', line: text };
  return undefined;
}

/** What one run of a job said of its nodes. */
export interface RunTrouble {
  /** The first node srun lost. */
  readonly nodeFailure?: Extract<SrunEvent, { kind: 'node-failure' }>;
  /** The first tasks that ended on their own while the run went on. */
  readonly taskEnded?: Extract<SrunEvent, { kind: 'task-ended' }>;
}

/**
 * The node trouble of the job run followed last (job id and restart count: a requeue is a new
 * run). After slurmstepd's end-of-run line, the tasks it terminates are not trouble of their own;
 * the next line that is not Slurm's own ends that (an output file kept across a requeue with
 * `--open-mode=append` goes on with the next run's lines).
 */
export class NodeTroubleLog {
  private run: { id: string; restarts: number; trouble: RunTrouble; ending: boolean } | undefined;

  /** One line of job `id`'s output, read while its run `restarts` is the latest seen; whether it was srun's word of a node. */
  note(id: string, restarts: number, line: string): boolean {
    if (this.run?.id !== id || this.run.restarts !== restarts) this.run = { id, restarts, trouble: {}, ending: false };
    const run = this.run;
    const event = srunEvent(line);
    if (!event) {
      if (!SLURM_OWN.test(line)) run.ending = false;
      return false;
    }
    if (event.kind === 'run-ended') {
      run.ending = true;
      run.trouble = { ...(run.trouble.nodeFailure ? { nodeFailure: run.trouble.nodeFailure } : {}) };
    } else if (event.kind === 'node-failure')
      run.trouble = {
        nodeFailure: run.trouble.nodeFailure ?? event,
        ...(run.trouble.taskEnded ? { taskEnded: run.trouble.taskEnded } : {}),
      };
    else if (!run.ending && !run.trouble.taskEnded) run.trouble = { ...run.trouble, taskEnded: event };
    return event.kind !== 'run-ended';
  }

  /** What run `restarts` of job `id` said; nothing for another run. */
  of(id: string, restarts: number): RunTrouble {
    return this.run?.id === id && this.run.restarts === restarts ? this.run.trouble : {};
  }
}

/** "node 1 (n2)": the node's place in the job's node list (node 0 runs rank 0), as multi-node servers name nodes. */
export function nodeLabel(node: string, hosts: readonly string[]): string {
  const index = hosts.indexOf(node);
  return words.nodeLabel(node, index >= 0 ? index : undefined);
}

/** The words for a run that lost a node's tasks while the job still runs (after "the service"). */
export function taskEndedWords(event: Extract<SrunEvent, { kind: 'task-ended' }>, hosts: readonly string[]): string {
  const process = /^Exited with exit code (\d+)$/.exec(event.how);
  const several = event.tasks.includes('-') || event.tasks.includes(',');
  const ended = words.processEnded(process?.[1], event.how);
  return words.lostNodeTasks(nodeLabel(event.node, hosts), ended, event.node, event.tasks, several);
}

/** The words for a NODE_FAIL end, naming the node when the output file did. */
export function nodeFailWords(trouble: RunTrouble, hosts: readonly string[]): string {
  const node = trouble.nodeFailure?.node;
  return node ? words.nodeFailed(nodeLabel(node, hosts), node) : words.nodeFailed(undefined, undefined);
}
