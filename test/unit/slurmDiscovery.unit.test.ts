import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { JOB_DISCOVERY_COMMAND, parseJobDiscovery } from '../../src/target/slurm/jobDiscovery';
import { entryFor, type Discovery } from '../../src/fleet/servers/discovery';
import { loginUid } from '../../src/fleet/servers/serverEntry';

const job = (id: string, name: string, command: string, state = 'RUNNING') =>
  `JobId=${id} JobName=${name} UserId=kimi(1001) GroupId=kimi(1001) JobState=${state} Reason=None Requeue=1 Restarts=0 ExitCode=0:0 RunTime=00:00:05 TimeLimit=00:10:00 NodeList=n[1-2] BatchHost=n1 NumNodes=2 Command=${command} WorkDir=/home/kimi/serve StdErr=/home/kimi/serve/${name}-${id}.out StdIn=/dev/null StdOut=/home/kimi/serve/${name}-${id}.out Power= `;

/** What the listing printed for three jobs of the login user: a server, a job of something else, a `--wrap` server. */
const LISTING = [
  '1001',
  'job=7',
  job('7', 'kimi-k26', '/home/kimi/serve/kimi.sbatch'),
  '| #!/bin/bash',
  '| #SBATCH --nodes=2',
  '| ',
  '| srun python -m sglang.launch_server --model-path /models/Kimi-K2.6 --tp 16 \\',
  '|   --host 0.0.0.0 --port 30001',
  '',
  'job=8',
  job('8', 'train', '/home/kimi/train.sbatch'),
  '| #!/bin/sh',
  '| srun python train.py --epochs 3',
  '',
  'job=9',
  job('9', 'wrapped', 'python -m sglang.launch_server --port 30002'),
  '| #!/bin/sh',
  '| # This script was created by sbatch --wrap.',
  '| python -m sglang.launch_server --port 30002',
  '',
].join('\n');

describe("slurm target: Add server lists the login user's jobs that run SGLang or vLLM", () => {
  it('only the job whose batch script runs the server is offered, with its script, the url on its node and no sudo', () => {
    const found = parseJobDiscovery(LISTING);
    assert.deepEqual(
      found.map((u) => u.unit),
      ['kimi-k26'],
    );
    const unit = found[0]!;
    assert.deepEqual(unit.entry, { slurm: { job: 'kimi-k26', script: '/home/kimi/serve/kimi.sbatch' } });
    assert.equal(unit.url, 'http://{node}:30001');
    assert.equal(unit.modelPath, '/models/Kimi-K2.6');
    assert.match(unit.description, /^Slurm job 7, RUNNING on n\[1-2\]$/);
    const discovery: Discovery = { host: { host: 'login1' }, units: found, uid: loginUid(LISTING) };
    assert.deepEqual(entryFor(discovery, unit, []), {
      name: 'login1-kimi-k26',
      host: 'login1',
      slurm: { job: 'kimi-k26', script: '/home/kimi/serve/kimi.sbatch' },
      url: 'http://{node}:30001',
    });
  });

  it('the newest job of a name is offered once; a name or path that cannot be an entry is left out', () => {
    const two = [
      'job=7',
      job('7', 'kimi-k26', '/home/kimi/old.sbatch'),
      '| vllm serve /m --port 8100',
      'job=12',
      job('12', 'kimi-k26', '/home/kimi/new.sbatch', 'PENDING'),
      '| vllm serve /m --port 8100',
      'job=13',
      job('13', 'bad/name', '/home/kimi/x.sbatch'),
      '| vllm serve /m',
    ].join('\n');
    const found = parseJobDiscovery(two);
    assert.equal(found.length, 1);
    assert.deepEqual(found[0]!.entry, { slurm: { job: 'kimi-k26', script: '/home/kimi/new.sbatch' } });
    assert.equal(found[0]!.url, 'http://{node}:8100');
  });

  it('the listing is a constant script: nothing without squeue, its uid first (sh -n clean)', () => {
    const script = JOB_DISCOVERY_COMMAND.argv[2] ?? '';
    assert.equal(spawnSync('sh', ['-n', '-c', script]).status, 0);
    const r = spawnSync('sh', ['-c', script], {
      encoding: 'utf8',
      env: { PATH: '/nonexistent:/bin:/usr/bin'.replace(/:\/usr\/bin$/, '') },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\d+\n?$/);
  });
});
