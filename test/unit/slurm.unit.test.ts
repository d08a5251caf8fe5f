import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import { shellLine } from '../../src/transport/shell';
import { jobServiceStatus, noJobStatus } from '../../src/target/slurm/jobStatus';
import { serverArgvOfScript } from '../../src/target/slurm/scriptArgv';
import { followCommand, resubmitCommand, stateCommand } from '../../src/target/slurm/slurmCommands';
import {
  expandOutputPath,
  parseAccounting,
  parseJobReading,
  parseScontrolJob,
  slurmDurationSeconds,
  slurmTime,
} from '../../src/target/slurm/slurmJob';
import { exitDescription, notFound, unitFailure } from '../../src/monitor/state/unitFailure';
import { isNewRun, processKey } from '../../src/monitor/state/unitChange';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { endLine } from '../../src/present/queueWords';
import { timeLeftBeforeEnd, timeLimitWarning } from '../../src/monitor/state/timeLimit';
import { serverReport, waitReport } from '../../src/present/report';
import { statusText, statusTooltip } from '../../src/fronts/vscode/status/statusBarText';

/** `scontrol show job -o 1` as Slurm 22.05.8 printed it for a running batch job. */
const RUNNING =
  'JobId=1 JobName=kimi-t UserId=kimi(1001) GroupId=kimi(1001) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:02 TimeLimit=00:10:00 TimeMin=N/A SubmitTime=2026-12-06T13:28:50 EligibleTime=2026-12-06T13:28:50 AccrueTime=2026-12-06T13:28:50 StartTime=2026-12-06T13:28:50 EndTime=2026-12-06T13:38:50 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-06T13:28:50 Scheduler=Main Partition=gpu AllocNode:Sid=localhost:12819 ReqNodeList=(null) ExcNodeList=(null) NodeList=n1 BatchHost=n1 NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/tmp/h35s/out/job.sh WorkDir=/tmp/h35s StdErr=/tmp/h35s/out/kimi-t-1.out StdIn=/dev/null StdOut=/tmp/h35s/out/kimi-t-1.out Power= ';

function withFields(line: string, fields: Record<string, string>): string {
  let out = line;
  for (const [k, v] of Object.entries(fields)) out = out.replace(new RegExp(`(^| )${k}=\\S*`), `$1${k}=${v}`);
  return out;
}

function reading(line: string, extra = ''): ReturnType<typeof parseJobReading> {
  return parseJobReading(`tz=+0000\nid=1\n${line}\n${extra}`);
}

describe('slurm target: parsing what the scheduler prints', () => {
  it('scontrol show job -o: state, requeue, times, nodes, output file', () => {
    const job = parseScontrolJob(RUNNING, 0);
    assert.ok(job);
    assert.equal(job.id, '1');
    assert.equal(job.name, 'kimi-t');
    assert.equal(job.state, 'RUNNING');
    assert.equal(job.requeue, true);
    assert.equal(job.reason, undefined);
    assert.equal(job.runTimeSeconds, 2);
    assert.equal(job.timeLimitSeconds, 600);
    assert.equal(job.startTime, Date.UTC(2026, 11, 6, 13, 28, 50));
    assert.equal(job.nodeList, 'n1');
    assert.equal(job.batchHost, 'n1');
    assert.equal(job.stdOut, '/tmp/h35s/out/kimi-t-1.out');
    assert.equal(job.workDir, '/tmp/h35s');
    assert.equal(job.user, 'kimi');
  });

  it('a path with a space stays whole; durations and times in Slurm forms; the login node zone applies', () => {
    const job = parseScontrolJob(withFields(RUNNING, { WorkDir: '/home/k/my serve' }), 60);
    assert.equal(job?.workDir, '/home/k/my serve');
    assert.equal(slurmDurationSeconds('1-02:03:04'), 93784);
    assert.equal(slurmDurationSeconds('05:00'), 300);
    assert.equal(slurmDurationSeconds('UNLIMITED'), undefined);
    assert.equal(slurmTime('2026-12-06T14:05:00', 60), Date.UTC(2026, 11, 6, 13, 5, 0));
    assert.equal(slurmTime('Unknown', 0), undefined);
  });

  it('the reading: none, gone from the controller, squeue failing, and the estimate of a pending job', () => {
    assert.deepEqual(parseJobReading('tz=+0000\nnone\n'), { kind: 'none' });
    assert.deepEqual(parseJobReading('tz=+0000\nid=7\nslurm_load_jobs error: Invalid job id specified\n'), {
      kind: 'gone',
      id: '7',
    });
    const error = parseJobReading('tz=+0000\nerror=squeue: error: Unable to contact slurm controller \n');
    assert.equal(error.kind, 'error');
    const pending = reading(
      withFields(RUNNING, { JobState: 'PENDING', Reason: 'Resources' }),
      'start=2026-12-06T14:05:00',
    );
    assert.equal(pending.kind, 'job');
    if (pending.kind === 'job') assert.equal(pending.estimatedStart, Date.UTC(2026, 11, 6, 14, 5, 0));
    const na = reading(withFields(RUNNING, { JobState: 'PENDING', Reason: 'Resources' }), 'start=N/A');
    assert.ok(na.kind === 'job' && na.estimatedStart === undefined);
  });

  it("sacct's words: the uid in State that cancelled the job, the exit code; no accounting said as Slurm 22.05 says it", () => {
    const cancelled = withFields(RUNNING, { JobState: 'CANCELLED', ExitCode: '0:15' });
    const byRoot = reading(cancelled, 'sacct=CANCELLED by 0|0:15\nby=root');
    assert.ok(byRoot.kind === 'job');
    assert.deepEqual(byRoot.accounting, { kind: 'known', state: 'CANCELLED', exitCode: '0:15', cancelledBy: 'root' });
    assert.deepEqual(parseAccounting('CANCELLED by 1002|0:15', ''), {
      kind: 'known',
      state: 'CANCELLED',
      exitCode: '0:15',
      cancelledBy: '1002',
    });
    assert.deepEqual(parseAccounting('Slurm accounting storage is disabled', undefined), { kind: 'disabled' });
    assert.equal(parseAccounting('sacct: error: Problem talking to the database', undefined)?.kind, 'unknown');
    assert.equal(parseAccounting(undefined, undefined), undefined);
    const gone = parseJobReading(
      'tz=+0000\nid=7\nslurm_load_jobs error: Invalid job id specified\nsacct=FAILED|1:0\nstart=\n',
    );
    assert.deepEqual(gone, { kind: 'gone', id: '7', accounting: { kind: 'known', state: 'FAILED', exitCode: '1:0' } });
  });

  it('the state script asks sacct only for a cancelled or forgotten job, and names the uid', () => {
    const script = stateCommand('kimi-t', undefined).argv[2] ?? '';
    const run = (scontrol: string, sacct: string): string =>
      spawnSync(
        'sh',
        [
          '-c',
          `squeue() { case "$*" in *--start*) ;; *) echo 1;; esac; }; scontrol() { echo "$SCONTROL"; }; sacct() { echo "$SACCT"; echo "a second line"; }; ${script}`,
          'sh',
          'kimi-t',
          '',
        ],
        { encoding: 'utf8', env: { ...process.env, SCONTROL: scontrol, SACCT: sacct } },
      ).stdout;
    const cancelled = withFields(RUNNING, { JobState: 'CANCELLED', ExitCode: '0:15' });
    const byRoot = parseJobReading(run(cancelled, 'CANCELLED by 0|0:15'));
    assert.ok(byRoot.kind === 'job' && byRoot.accounting?.kind === 'known');
    assert.equal(byRoot.accounting.cancelledBy, 'root');
    const none = parseJobReading(run(cancelled, 'Slurm accounting storage is disabled'));
    assert.ok(none.kind === 'job');
    assert.deepEqual(none.accounting, { kind: 'disabled' });
    const running = parseJobReading(run(RUNNING, 'CANCELLED by 0|0:15'));
    assert.ok(running.kind === 'job' && running.accounting === undefined, 'sacct not asked for a running job');
  });

  it('%x %j %u %N of an output path expand as Slurm expands them', () => {
    const job = parseScontrolJob(RUNNING, 0);
    assert.ok(job);
    assert.equal(expandOutputPath('/o/%x-%j.%u.%N.%%', job), '/o/kimi-t-1.kimi.n1.%');
  });

  it('the server command line of a batch script: continued lines, srun before it, comments skipped', () => {
    const script = [
      '#!/bin/bash',
      '#SBATCH --job-name=kimi-k26',
      '# python -m sglang.launch_server --not-this',
      'srun --ntasks-per-node=1 /opt/sglang/bin/python -m sglang.launch_server \\',
      '  --model-path "/models/Kimi K2.6" --tp 8 \\',
      "  --port 30001 --served-model-name 'kimi'",
    ].join('\n');
    assert.deepEqual(serverArgvOfScript(script), [
      '/opt/sglang/bin/python',
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/models/Kimi K2.6',
      '--tp',
      '8',
      '--port',
      '30001',
      '--served-model-name',
      'kimi',
    ]);
    assert.deepEqual(serverArgvOfScript('#!/bin/sh\nsleep 10\n'), []);
  });
});

describe('slurm target: job states in the target state model', () => {
  const status = (fields: Record<string, string>, extra = '') => {
    const r = reading(withFields(RUNNING, fields), extra);
    assert.equal(r.kind, 'job');
    return jobServiceStatus(r as Extract<typeof r, { kind: 'job' }>);
  };

  it('PENDING: activating without a process, queued with its reason and the estimate', () => {
    const unit = status({ JobState: 'PENDING', Reason: 'Priority', StartTime: 'Unknown' }, 'start=2026-12-06T14:05:00');
    assert.equal(unit.activeState, 'activating');
    assert.equal(unit.mainPid, 0);
    assert.deepEqual(unit.queued, { reason: 'Priority', estimatedStartAt: Date.UTC(2026, 11, 6, 14, 5) });
  });

  it('RUNNING: active, the job id for the run, its end at the time limit, nothing to sample on the login node', () => {
    const unit = status({});
    assert.equal(unit.activeState, 'active');
    assert.equal(unit.mainPid, 1);
    assert.equal(unit.mainPidElsewhere, true);
    assert.equal(unit.endsAt, Date.UTC(2026, 11, 6, 13, 38, 50));
    assert.equal(unit.queued, undefined);
  });

  it('a requeued run is a new run: its key changes with Restarts, and it is not one while it waits', () => {
    const first = status({});
    const waiting = status({ JobState: 'PENDING', Reason: 'BeginTime', Restarts: '1' });
    const again = status({ Restarts: '1' });
    assert.equal(isNewRun(processKey(first), waiting), false);
    assert.equal(isNewRun(processKey(first), again), true);
  });

  it('the end states: FAILED with its exit code, CANCELLED as a stop, TIMEOUT and the others in the scheduler words', () => {
    const failed = status({ JobState: 'FAILED', Reason: 'NonZeroExitCode', ExitCode: '1:0' });
    assert.equal(failed.activeState, 'failed');
    assert.equal(exitDescription(failed), 'exited with status 1');
    const cancelled = status({ JobState: 'CANCELLED', ExitCode: '0:15' });
    assert.equal(cancelled.stopRequested, true);
    assert.match(exitDescription(cancelled), /cancelled/);
    const line = withFields(RUNNING, { JobState: 'CANCELLED', ExitCode: '0:15' });
    const byWhom = (extra: string) => {
      const r = reading(line, extra);
      return r.kind === 'job' ? jobServiceStatus(r).endedBecause : r.kind;
    };
    assert.equal(byWhom('sacct=CANCELLED by 0|0:15\nby=root'), 'was cancelled by root (scancel)');
    assert.equal(
      byWhom('sacct=Slurm accounting storage is disabled'),
      'was cancelled (scancel; by whom only accounting knows, and this cluster keeps none)',
    );
    assert.equal(byWhom(''), 'was cancelled (scancel)');
    const timeout = status({ JobState: 'TIMEOUT', Reason: 'TimeLimit', ExitCode: '0:9' });
    assert.match(exitDescription(timeout), /time limit \(TIMEOUT\)/);
    for (const [state, words] of [
      ['OUT_OF_MEMORY', /OUT_OF_MEMORY/],
      ['NODE_FAIL', /node of the job failed/],
      ['PREEMPTED', /preempted/],
    ] as const) {
      const unit = status({ JobState: state });
      assert.equal(unit.activeState, 'failed', state);
      assert.match(exitDescription(unit), words);
    }
    const completing = status({ JobState: 'COMPLETING' });
    assert.equal(completing.activeState, 'deactivating');
    // Killed at its time limit, COMPLETING for KillWait before TIMEOUT: already the time limit's end.
    const timingOut = status({ JobState: 'COMPLETING', Reason: 'TimeLimit' });
    assert.equal(timingOut.activeState, 'failed');
    assert.match(exitDescription(timingOut), /time limit \(TIMEOUT\)/);
  });

  it('a job gone from the controller is said plainly, as is no job of that name', () => {
    const gone = noJobStatus('kimi-k26', { kind: 'gone', id: '42' });
    assert.equal(gone.loadState, 'not-found');
    assert.match(notFound(gone, true), /job 42 \(kimi-k26\) is no longer known to the Slurm controller/);
    assert.match(notFound(gone, true), /without accounting, sacct cannot say how/);
    const told = noJobStatus('kimi-k26', {
      kind: 'gone',
      id: '42',
      accounting: { kind: 'known', state: 'CANCELLED', exitCode: '0:15', cancelledBy: 'root' },
    });
    assert.match(notFound(told, true), /sacct says it ended CANCELLED by root \(exit code 0:15\)/);
    const none = noJobStatus('kimi-k26', { kind: 'none' });
    assert.match(notFound(none, false), /no Slurm job named kimi-k26/);
    assert.ok(unitFailure({ baselineRestarts: undefined, mainPid: undefined } as never, none));
  });
});

describe('slurm target: commands and settings', () => {
  it('every value reaches the script as an argument; bad names and ids are refused before sending', () => {
    const line = shellLine(stateCommand('kimi-k26', '12'));
    assert.match(line, /' sh kimi-k26 12$/);
    assert.throws(() => stateCommand('kimi;rm', undefined), /Invalid Slurm job name/);
    assert.throws(() => stateCommand('kimi', '1;2'), /Invalid Slurm job id/);
    assert.throws(() => followCommand('relative/out', '1'), /Invalid job output file/);
    assert.throws(() => resubmitCommand('/x\ny', undefined, undefined, 'k'), /Invalid batch script path/);
  });

  it('the resubmit script expands ~/ to the home and runs sbatch from the working directory (sh -n clean)', () => {
    const cmd = resubmitCommand('~/serve/kimi.sbatch', "/home/k/it's here", '5', 'kimi-k26');
    const script = cmd.argv[2] ?? '';
    assert.equal(spawnSync('sh', ['-n', '-c', script]).status, 0);
    const traced = spawnSync(
      'sh',
      ['-c', `scancel() { :; }; squeue() { :; }; sbatch() { echo "sbatch $*"; }; ${script}`, ...cmd.argv.slice(3)],
      { encoding: 'utf8', env: { ...process.env, HOME: '/home/k' } },
    );
    // cd into a folder that does not exist fails: sbatch is not reached
    assert.notEqual(traced.status, 0);
    const here = resubmitCommand('~/serve/kimi.sbatch', '/', undefined, 'kimi-k26');
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-sbatch-'));
    fs.writeFileSync(path.join(bin, 'sbatch'), '#!/bin/sh\necho "sbatch $* in $(pwd)"\n', { mode: 0o755 });
    const ran = spawnSync('sh', ['-c', here.argv[2] ?? '', ...here.argv.slice(3)], {
      encoding: 'utf8',
      env: { ...process.env, HOME: '/home/k', PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
    fs.rmSync(bin, { recursive: true, force: true });
    assert.equal(ran.stdout.trim(), 'sbatch --parsable -J kimi-k26 -- /home/k/serve/kimi.sbatch in /');
  });

  it('settings: a slurm entry is its own target; bad job names and script paths are refused', () => {
    const ok = parseSettings({
      servers: [{ name: 'k', host: 'login1', slurm: { job: 'kimi-k26', script: '~/serve/kimi.sbatch' } }],
    });
    assert.ok(ok.ok, JSON.stringify(ok));
    assert.deepEqual(ok.settings.servers[0]?.slurm, {
      job: 'kimi-k26',
      script: '~/serve/kimi.sbatch',
      label: 'Slurm job kimi-k26',
    });
    const bad = parseSettings({
      servers: [
        { name: 'a', host: 'login1', slurm: { job: 'x y', script: '~/s' } },
        { name: 'b', host: 'login1', slurm: { job: 'x', script: 'relative.sbatch' } },
        { name: 'c', host: 'login1', unit: 'u', slurm: { job: 'x', script: '/s' } },
      ],
    });
    assert.ok(!bad.ok);
    assert.match(bad.errors.join('\n'), /slurm\.job "x y"/);
    assert.match(bad.errors.join('\n'), /slurm\.script "relative\.sbatch"/);
    assert.match(bad.errors.join('\n'), /give only one of/);
  });
});

describe('the words for a queued run and a set end', () => {
  const now = Date.UTC(2026, 11, 6, 13, 0, 0);
  const local = (at: number) => {
    const d = new Date(at);
    return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  };
  const queuedState = (fields: Record<string, string>, extra = ''): LoadState => {
    const r = reading(withFields(RUNNING, fields), extra);
    assert.equal(r.kind, 'job');
    return {
      ...initialState(now),
      verdict: 'restarting',
      unit: jobServiceStatus(r as Extract<typeof r, { kind: 'job' }>),
    };
  };

  it('PENDING: the status bar says queued, the estimate and the reason; the tooltip says what the scheduler expects', () => {
    const start = Date.UTC(2026, 11, 6, 14, 5, 0);
    const state = queuedState({ JobState: 'PENDING', Reason: 'Resources' }, 'start=2026-12-06T14:05:00');
    const view = { server: undefined, state, watching: true };
    assert.match(statusText(view, now), new RegExp(`Kimi: queued · starts ~${local(start)} \\(Resources\\)$`));
    assert.match(
      statusTooltip(view, now),
      /Queue: waiting for Resources; the scheduler expects to start it at .* \(in 1h 5m/,
    );
    const noEstimate = queuedState({ JobState: 'PENDING', Reason: 'Priority' });
    assert.match(
      statusText({ server: undefined, state: noEstimate, watching: true }, now),
      /Kimi: queued \(Priority\)$/,
    );
  });

  it('the CLI, MCP and agent tools say queued with the reason and the estimate, and a bounded wait says to wait again', () => {
    const settings = parseSettings({
      servers: [{ name: 'cluster', host: 'login1', slurm: { job: 'kimi-t', script: '~/kimi.sbatch' } }],
    });
    assert.ok(settings.ok);
    const server = settings.settings.servers[0]!;
    const state = queuedState({ JobState: 'PENDING', Reason: 'Resources' }, 'start=2026-12-06T14:05:00');
    const snapshot = { server, state, watching: true, loading: true, refusal: undefined, verification: undefined };
    const report = serverReport(snapshot, now);
    assert.equal(report.state, 'queued');
    assert.match(
      report.summary,
      new RegExp(`^cluster: queued · starts ~${local(Date.UTC(2026, 11, 6, 14, 5))} \\(Resources\\) · for `),
    );
    assert.match(report.queue ?? '', /^waiting for Resources; the scheduler expects to start it at .* \(in 1h 5m\)$/);
    assert.equal(report.endsAt, undefined);
    const waited = waitReport({ kind: 'timeout', snapshot } as never, 30_000, 'kimi_wait', now);
    assert.match(
      waited.next,
      /^Still queued after waiting 30s: waiting for Resources.*call kimi_wait again to keep waiting/,
    );
    const ready = {
      ...queuedState({ StartTime: '2026-12-06T12:50:00', TimeLimit: '00:20:00' }),
      verdict: 'ready' as const,
    };
    const serving = serverReport({ ...snapshot, state: ready, loading: false }, now);
    assert.equal(serving.state, 'ready');
    assert.equal(serving.queue, undefined);
    assert.equal(serving.endsAt, new Date(Date.UTC(2026, 11, 6, 13, 10)).toISOString());
    assert.match(serving.summary, /ends in 10m 0s \(time limit\)/);
  });

  it('RUNNING: not queued; the tooltip names the end the time limit sets', () => {
    const running = queuedState({ StartTime: '2026-12-06T12:50:00', TimeLimit: '02:00:00' });
    const view = { server: undefined, state: { ...running, verdict: 'loading' as const }, watching: true };
    assert.doesNotMatch(statusText(view, now), /queued/);
    assert.match(statusTooltip(view, now), /Time limit: the job ends at .*, in 1h 50m: the server stops then/);
    assert.equal(endLine({ ...running, unit: { ...running.unit!, endsAt: now - 1 } }, now), undefined);
  });

  it('the last 15 minutes before the time limit: the status bar says when it ends, the warning names the clock time', () => {
    // StartTime 12:50 and a limit of 25 min: the job ends at 13:15, 15 min after `now`.
    const ready = {
      ...queuedState({ StartTime: '2026-12-06T12:50:00', TimeLimit: '00:25:00' }),
      verdict: 'ready' as const,
    };
    const endsAt = Date.UTC(2026, 11, 6, 13, 15, 0);
    assert.equal(ready.unit?.endsAt, endsAt);
    const view = { server: undefined, state: ready, watching: true };
    assert.doesNotMatch(statusText(view, now - 1000), /ends in/, 'not before the last 15 minutes');
    assert.equal(timeLimitWarning('Slurm job kimi-t', ready, now - 1000), undefined);
    assert.match(statusText(view, now), /Kimi: ready · ends in 15m 0s$/);
    assert.match(statusText(view, endsAt - 61_000), /Kimi: ready · ends in 1m 1s$/);
    assert.equal(
      timeLimitWarning('Slurm job kimi-t', ready, now + 60_000),
      `Slurm job kimi-t reaches its time limit at ${local(endsAt)}, in 14m 0s: Slurm ends it then, and the server stops.`,
    );
    assert.equal(timeLeftBeforeEnd(ready, endsAt), undefined, 'passed');
    const ended = { ...ready, unit: { ...ready.unit!, mainPid: 0 } };
    assert.equal(timeLeftBeforeEnd(ended, now), undefined, 'no run');
    assert.doesNotMatch(statusText({ ...view, state: ended }, now), /ends in/);
  });
});
