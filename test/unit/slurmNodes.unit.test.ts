import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { jobServiceStatus } from '../../src/target/slurm/jobStatus';
import { NodeTroubleLog, srunEvent } from '../../src/target/slurm/nodeTrouble';
import { stateCommand } from '../../src/target/slurm/slurmCommands';
import { parseJobReading } from '../../src/target/slurm/slurmJob';
import { exitDescription, lostAfterReady } from '../../src/monitor/state/unitFailure';

/** `scontrol show job -o 4` of a two-node job as Slurm 22.05.8 printed it. */
const TWO_NODES =
  'JobId=4 JobName=two UserId=kimi(1001) GroupId=kimi(1001) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:02 TimeLimit=365-00:00:00 TimeMin=N/A SubmitTime=2026-12-06T19:37:26 EligibleTime=2026-12-06T19:37:26 AccrueTime=2026-12-06T19:37:26 StartTime=2026-12-06T19:37:27 EndTime=2027-12-06T19:37:27 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-06T19:37:27 Scheduler=Backfill Partition=gpu AllocNode:Sid=localhost:22226 ReqNodeList=(null) ExcNodeList=(null) NodeList=n[1-2] BatchHost=n1 NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,node=2,billing=2 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/tmp/exp/job.sh WorkDir=/tmp/exp StdErr=/tmp/exp/two-4.out StdIn=/dev/null StdOut=/tmp/exp/two-4.out Power= ';

/** The state script run with stand-ins for squeue and scontrol (`scontrol show hostnames` expands n[1-2]). */
function runState(scontrolJob: string): string {
  const script = stateCommand('two', undefined).argv[2] ?? '';
  const standIns =
    'squeue() { case "$*" in *--start*) ;; *) echo 4;; esac; }; ' +
    'scontrol() { case "$1 $2" in "show hostnames") [ "$3" = "n[1-2]" ] && printf "n1\\nn2\\n";; *) echo "$SCONTROL";; esac; }; ';
  const r = spawnSync('sh', ['-c', `${standIns}${script}`, 'sh', 'two', ''], {
    encoding: 'utf8',
    env: { ...process.env, SCONTROL: scontrolJob },
  });
  return r.stdout + r.stderr;
}

function job(out: string): Extract<ReturnType<typeof parseJobReading>, { kind: 'job' }> {
  const r = parseJobReading(out);
  assert.equal(r.kind, 'job', out);
  return r as Extract<ReturnType<typeof parseJobReading>, { kind: 'job' }>;
}

/** The srun output `lines` of job `job` after `restarts` restarts, noted in `log` (a new one unless given). */
function noted(job: string, restarts: number, lines: readonly string[], log = new NodeTroubleLog()): NodeTroubleLog {
  for (const line of lines) log.note(job, restarts, line);
  return log;
}

describe('slurm target: a job over several nodes', () => {
  it("the state script expands the job's node list (scontrol show hostnames): rank 0's node first", () => {
    const out = runState(TWO_NODES);
    assert.deepEqual(job(out).hosts, ['n1', 'n2']);
    // A pending job has no node list; a list of other characters is never passed on.
    const pending = runState(TWO_NODES.replace('NodeList=n[1-2]', 'NodeList=(null)').replace('RUNNING', 'PENDING'));
    assert.doesNotMatch(pending, /^hosts=/m);
    assert.equal(job(pending).hosts, undefined);
    const odd = runState(TWO_NODES.replace('NodeList=n[1-2]', 'NodeList=n1;reboot'));
    assert.doesNotMatch(odd, /^hosts=/m);
    // A name that is not a plain host name is dropped when read.
    assert.deepEqual(job(`tz=+0000\nid=4\n${TWO_NODES}\nhosts=n1 $(x) n2 \n`).hosts, ['n1', 'n2']);
  });

  it("srun's and slurmstepd's lines as Slurm 22.05.8 printed them", () => {
    assert.deepEqual(srunEvent('srun: error: n2: task 1: Killed'), {
      kind: 'task-ended',
      node: 'n2',
      tasks: '1',
      how: 'Killed',
      line: 'srun: error: n2: task 1: Killed',
    });
    assert.equal(srunEvent('srun: error: gpu-b.x: tasks 8-15: Exited with exit code 1')?.kind, 'task-ended');
    assert.deepEqual(srunEvent('srun: error: Node failure on n2'), {
      kind: 'node-failure',
      node: 'n2',
      line: 'srun: error: Node failure on n2',
    });
    assert.equal(
      srunEvent(
        'slurmstepd-n1: error: *** JOB 4 ON n1 CANCELLED AT 2026-12-06T19:38:57 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***',
      )?.kind,
      'run-ended',
    );
    for (const other of ['srun: Job step aborted: Waiting up to 7 seconds for job step to finish.', 'rank 1 on n2', ''])
      assert.equal(srunEvent(other), undefined, other);
  });

  it('a task that died while the job runs fails the server, naming its node; the run after a requeue starts clean', () => {
    const log = noted('4', 0, ['rank 0 on n1', 'srun: error: n2: task 1: Killed']);
    const reading = job(`tz=+0000\nid=4\n${TWO_NODES}\nhosts=n1 n2\n`);
    const unit = jobServiceStatus(reading, log.of('4', 0));
    assert.equal(unit.activeState, 'failed');
    assert.equal(unit.mainPid, 0);
    assert.equal(
      lostAfterReady(unit),
      'the service lost node 1 (n2) of the job: its process ended: Killed (srun: n2: task 1), while the job still runs: the other nodes cannot serve without it after it was ready',
    );
    assert.deepEqual(log.of('4', 1), {}, 'the next run of the job has its own');
    // One node: the job's own end tells (no multi-node words).
    const single = job(`tz=+0000\nid=4\n${TWO_NODES}\nhosts=n1\n`);
    assert.equal(jobServiceStatus(single, log.of('4', 0)).activeState, 'active');
    // Without the trouble the job runs as before.
    assert.equal(jobServiceStatus(reading).activeState, 'active');
  });

  it("the tasks slurmstepd ends (a cancel, a requeue) are not a node's failure, until the next run's own lines", () => {
    const log = noted('4', 1, [
      'rank 0 on n1',
      'slurmstepd-n1: error: *** JOB 4 ON n1 CANCELLED AT 2026-12-06T19:38:06 DUE TO JOB REQUEUE ***',
      'srun: forcing job termination',
      'srun: error: n1: task 0: Terminated',
    ]);
    assert.deepEqual(log.of('4', 1), {});
    noted('4', 1, ['rank 0 on n1', 'srun: error: n2: task 1: Exited with exit code 3'], log);
    assert.equal(log.of('4', 1).taskEnded?.how, 'Exited with exit code 3');
  });

  it('NODE_FAIL names the node srun lost; without its line, a node of the job', () => {
    const log = noted('4', 0, [
      'srun: error: Node failure on n2',
      'slurmstepd-n1: error: *** JOB 4 ON n1 CANCELLED AT 2026-12-06T19:38:57 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***',
      'srun: error: n2: task 1: Terminated',
    ]);
    const ended = TWO_NODES.replace('JobState=RUNNING Reason=None', 'JobState=NODE_FAIL Reason=NodeDown');
    const reading = job(`tz=+0000\nid=4\n${ended}\nhosts=n1 n2\n`);
    const unit = jobServiceStatus(reading, log.of('4', 0));
    assert.equal(unit.activeState, 'failed');
    assert.equal(
      exitDescription(unit),
      'ended because node 1 (n2) of the job failed (NODE_FAIL; srun: Node failure on n2)',
    );
    assert.equal(exitDescription(jobServiceStatus(reading)), 'ended because a node of the job failed (NODE_FAIL)');
  });
});
