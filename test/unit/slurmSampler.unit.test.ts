import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { serverNodeOf } from '../../src/target/slurm/slurmTarget';
import { JOB_ROOTS_SH } from '../../src/target/slurm/slurmCommands';
import { parseScontrolJob, type SlurmJob } from '../../src/target/slurm/slurmJob';
import { samplerCommand, SamplerReader } from '../../src/monitor/watch/sampler';
import { lackingWords } from '../../src/present/words/watchWords';

/** A running job as `scontrol show job -o` printed it (Slurm 22.05.8), with some fields changed. */
function job(fields: Record<string, string> = {}): SlurmJob {
  const all = {
    JobId: '42',
    JobName: 'kimi-k26',
    UserId: 'kimi(1001)',
    JobState: 'RUNNING',
    Reason: 'None',
    Requeue: '1',
    Restarts: '0',
    NodeList: 'n1',
    BatchHost: 'n1',
    ...fields,
  };
  const parsed = parseScontrolJob(
    Object.entries(all)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
    0,
  );
  assert.ok(parsed);
  return parsed;
}

/** What sh does with a line: `srun` a function that prints each argument it got. */
function argvOf(line: string): string[] {
  const r = spawnSync('sh', ['-c', `srun() { for a; do printf '%s\\0' "$a"; done; }; ${line}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\0').slice(0, -1);
}

describe('slurm target: the host sampler inside the job', () => {
  it('a running job: a step beside the server on its batch host, each value checked and quoted', () => {
    const place = serverNodeOf(job());
    assert.equal(place?.kind, 'inside');
    if (place?.kind !== 'inside') return;
    assert.equal(place.where, 'inside job 42 on n1 (srun --overlap)');
    assert.equal(place.key, '42 run 0 on n1');
    const script = `echo "it's $HOME"; printf '%s\\n' a`;
    assert.deepEqual(argvOf(place.wrap(script)), [
      '--jobid=42',
      '--overlap',
      '--nodelist=n1',
      '--nodes=1',
      '--ntasks=1',
      '--quiet',
      'sh',
      '-c',
      script,
    ]);
    // The next run of a requeued job is another place: the sampler starts again there.
    const next = serverNodeOf(job({ Restarts: '1' }));
    assert.equal(next?.kind === 'inside' && next.key, '42 run 1 on n1');
    const odd = serverNodeOf(job({ BatchHost: 'n1;reboot' }));
    assert.ok(odd?.kind === 'inside');
    assert.throws(() => odd.wrap('true'), /Invalid Slurm node name/);
  });

  it('a job in the queue has no node: why, in words; an ended job has nothing to sample', () => {
    const pending = serverNodeOf(
      job({ JobState: 'PENDING', Reason: 'Resources', BatchHost: '(null)', NodeList: '(null)' }),
    );
    assert.deepEqual(pending, {
      kind: 'lacking',
      why: 'job 42 has not started yet (PENDING, Resources): it runs on no node',
    });
    assert.equal(serverNodeOf(job({ JobState: 'CONFIGURING' }))?.kind, 'lacking');
    assert.equal(serverNodeOf(job({ JobState: 'COMPLETED' })), undefined);
    assert.equal(serverNodeOf(job({ JobState: 'FAILED' })), undefined);
  });

  it("the server's processes on the node: each other step's task, not the sampler's own step nor extern", () => {
    const listpids = [
      'PID      JOBID    STEPID   LOCALID GLOBALID',
      '32507    42       batch    0       0',
      '32596    42       batch    -       -',
      '344      42       1        0       0',
      '356      42       1        -       -',
      '400      42       0        0       0',
      '90       42       extern   0       0',
    ].join('\\n');
    const run = (out: string) =>
      spawnSync(
        'sh',
        [
          '-c',
          `scontrol() { [ "$1 $2 $3" = "listpids 42 n1" ] && printf '${out}\\n'; }; ${JOB_ROOTS_SH}\necho "roots=$roots"`,
        ],
        {
          encoding: 'utf8',
          env: { PATH: process.env.PATH, SLURM_JOB_ID: '42', SLURM_STEP_ID: '1', SLURMD_NODENAME: 'n1' },
        },
      );
    const found = run(listpids);
    assert.equal(found.status, 0, found.stderr);
    assert.equal(found.stdout.trim(), 'roots=32507 400');
    const none = run('PID      JOBID    STEPID   LOCALID GLOBALID');
    assert.equal(none.status, 3);
    assert.match(none.stderr, /no process of job 42 on n1 \(scontrol listpids\)/);
  });

  it('the sampler takes its roots from the target: no PID of the login node, a first line naming them', () => {
    const command = samplerCommand({ mainPid: 0, intervalMs: 500, rootsSh: 'roots="12 34"' });
    assert.doesNotMatch(command, /root=0/);
    assert.match(command, /echo "R \$roots"/);
    assert.throws(() => samplerCommand({ mainPid: 0, intervalMs: 500 }), /Invalid PID/);
    const reader = new SamplerReader(() => undefined);
    assert.deepEqual(reader.read('R 12 34', 0).roots, [12, 34]);
    assert.equal(reader.read('R 12; rm', 0).roots, undefined);
    // Two roots: the tree of both, alive while either lives (sh, on this machine's /proc; one round, no GPU tool).
    const oneRound = command
      .replace('roots="12 34"', `roots="${process.pid} 999999999"`)
      .replace(/while :; do tick ''; sleep [\d.]+; done$/, "tick ''");
    assert.notEqual(oneRound, command);
    const r = spawnSync('sh', ['-c', oneRound], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `R ${process.pid} 999999999`);
    assert.match(lines[1] ?? '', /^S 1 [1-9]\d* /);
  });

  it('without the sampler the watch names the witnesses it lacks and that the SSH host stands in for none', () => {
    assert.equal(
      lackingWords('job kimi-k26', 'job 42 has not started yet (PENDING, Resources): it runs on no node'),
      "No host sampler for job kimi-k26: job 42 has not started yet (PENDING, Resources): it runs on no node. The watch lacks its witnesses (GPU memory, bytes read by the server's processes, the listener on its port); the load is followed from the log and HTTP, and nothing is read from the SSH host in their place.",
    );
  });
});
