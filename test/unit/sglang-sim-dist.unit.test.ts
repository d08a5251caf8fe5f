// The SGLang simulator's multi-node side (test/gpu-host/sglang-sim/dist.js): its arguments, and short runs
// of two real processes meeting over TCP on loopback, or failing with torch's texts when they do not.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../util/freePort';

const SIM_DIR = path.join(__dirname, '..', 'gpu-host', 'sglang-sim');
const { parseArgs } = require(path.join(SIM_DIR, 'args.js'));
const { parseAddr } = require(path.join(SIM_DIR, 'dist.js'));

/** Runs one simulated rank until it exits (or `untilLine` shows, then SIGTERM); its stderr. */
function runRank(root: string, args: string[], untilLine?: RegExp): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(SIM_DIR, 'main.js'), '-m', 'sglang.launch_server', ...args], {
      env: { ...process.env, KIMI_SIM_ROOT: root },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (untilLine?.test(stderr)) child.kill('SIGTERM');
    });
    child.stdout.resume();
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stderr });
    });
  });
}

describe('sglang-sim: multi-node', function () {
  this.timeout(40_000);
  let dir: string;
  let model: string;
  /** The flags of a rank of a 2-node, TP 4 group whose rank 0 listens at `distPort`. */
  const twoNodes = (distPort: number, distTimeoutS: number, httpPort: number): string[] => [
    '--model-path',
    model,
    '--tp',
    '4',
    '--nnodes',
    '2',
    '--dist-init-addr',
    `127.0.0.1:${distPort}`,
    '--dist-timeout',
    String(distTimeoutS),
    '--port',
    String(httpPort),
  ];
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-sim-dist-'));
    model = path.join(dir, 'model');
    fs.mkdirSync(model);
    for (let i = 1; i <= 2; i++)
      fs.writeFileSync(path.join(model, `model-0000${i}-of-00002.safetensors`), Buffer.alloc(64 * 1024));
    for (const r of ['r0', 'r1']) {
      fs.mkdirSync(path.join(dir, r));
      fs.writeFileSync(path.join(dir, r, 'sim.json'), JSON.stringify({ directIO: false, warmupSeconds: 0.1 }));
    }
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses --nnodes/--node-rank/--dist-init-addr/--dist-timeout and refuses what SGLang would not start with', () => {
    const ok = parseArgs([
      '--model-path',
      '/m',
      '--tp',
      '16',
      '--nnodes',
      '2',
      '--node-rank',
      '1',
      '--dist-init-addr',
      '10.0.0.1:5000',
      '--dist-timeout',
      '60',
    ]);
    assert.equal(ok.ok, true);
    assert.deepEqual(
      [ok.args.nnodes, ok.args.node_rank, ok.args.dist_init_addr, ok.args.dist_timeout],
      [2, 1, '10.0.0.1:5000', 60],
    );
    assert.match(
      parseArgs(['--model-path', '/m', '--tp', '16', '--nnodes', '2']).error,
      /--dist-init-addr: required when --nnodes > 1/,
    );
    assert.match(
      parseArgs(['--model-path', '/m', '--tp', '16', '--nnodes', '2', '--node-rank', '2', '--dist-init-addr', 'a:1'])
        .error,
      /--node-rank: must be in \[0, 2\)/,
    );
    assert.match(
      parseArgs(['--model-path', '/m', '--tp', '3', '--nnodes', '2', '--dist-init-addr', 'a:1']).error,
      /not divisible/,
    );
    assert.deepEqual(parseAddr('[fe80::1]:29500'), { host: 'fe80::1', port: 29500 });
    assert.equal(parseAddr('host-without-port'), null);
  });

  it('two ranks meet over TCP: node rank 1 loads its half of the ranks and ends with "Capture cuda graph end.", no bars, no HTTP', async () => {
    const dist = await freePort();
    const http = await freePort();
    const common = twoNodes(dist, 10, http);
    const [rank0, rank1] = await Promise.all([
      runRank(path.join(dir, 'r0'), [...common, '--node-rank', '0'], /fired up and ready to roll/),
      runRank(
        path.join(dir, 'r1'),
        [...common, '--node-rank', '1'],
        /Capture cuda graph end\..*\n.*Capture cuda graph end\./,
      ),
    ]);
    assert.match(rank0.stderr, /\[[\d :-]+ TP0\] Load weight begin/);
    assert.match(rank0.stderr, /Multi-thread loading shards/);
    assert.match(rank1.stderr, /\[[\d :-]+ TP2\] Load weight begin[\s\S]*\[[\d :-]+ TP3\] Capture cuda graph end\./);
    assert.doesNotMatch(rank1.stderr, /TP[01]\]|loading shards|Uvicorn|fired up/);
  });

  it("node rank 0 alone times out with torch's DistStoreError; a node that cannot reach rank 0 with DistNetworkError", async () => {
    const args = (rank: number, distPort: number, httpPort: number) => [
      ...twoNodes(distPort, 1, httpPort),
      '--node-rank',
      String(rank),
    ];
    const [alone, lost] = await Promise.all([
      runRank(path.join(dir, 'r0'), args(0, await freePort(), await freePort())),
      // Nothing listens at its rank 0's address.
      runRank(path.join(dir, 'r1'), args(1, await freePort(), await freePort())),
    ]);
    assert.equal(alone.code, 1);
    assert.match(
      alone.stderr,
      /torch\.distributed\.DistStoreError: Timed out after \d+ seconds waiting for clients\. 2\/4 clients joined\./,
    );
    assert.equal(lost.code, 1);
    assert.match(
      lost.stderr,
      /socket\.cpp:1028\] \[c10d\] The client socket has timed out after 1000ms while trying to connect to \(127\.0\.0\.1, \d+\)\./,
    );
    assert.match(lost.stderr, /torch\.distributed\.DistNetworkError: The client socket has timed out after 1000ms/);
    assert.match(lost.stderr, /Received sigquit from a child process/);
  });
});
