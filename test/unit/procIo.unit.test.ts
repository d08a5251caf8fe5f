import { strict as assert } from 'node:assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { modelSizeCommand } from '../../src/host/procIo';
import { SamplerReader, samplerCommand } from '../../src/monitor/watch/sampler';
import { waitFor } from '../util/waitFor';

/** The sampler's first record (it loops forever: `head -n 1` ends it). No nvidia-smi here: paced by sleep. */
function firstRound(command: string): string {
  return execFileSync('/bin/sh', ['-c', `( ${command} ) | head -n 1`], { encoding: 'utf8', timeout: 15_000 }).trim();
}

describe('procIo: parsing', () => {
  it('rejects unsafe inputs, quotes paths', () => {
    assert.throws(() => samplerCommand({ mainPid: -1, intervalMs: 1000 }));
    assert.throws(() => samplerCommand({ mainPid: 1.5, intervalMs: 1000 }));
    assert.throws(() => samplerCommand({ mainPid: 1, intervalMs: 1000, controlGroup: 'relative/cg' }));
    assert.throws(() => samplerCommand({ mainPid: 1, intervalMs: 1000, listenPort: 0 }));
    assert.throws(() => samplerCommand({ mainPid: 1, intervalMs: 1000, listenPort: 70000 }));
    assert.throws(() => modelSizeCommand('models/x'));
    assert.throws(() => modelSizeCommand('/a\nb'));
    assert.match(
      modelSizeCommand("/root/models/K'2; touch /tmp/x"),
      /find -L '\/root\/models\/K'\\''2; touch \/tmp\/x' -maxdepth 1/,
    );
    assert.match(
      samplerCommand({ mainPid: 1, intervalMs: 1000, controlGroup: '/system.slice/a b.service' }),
      /cg='\/system\.slice\/a b\.service'/,
    );
  });
});

describe('sampler and model size: the commands on this machine (/bin/sh)', function () {
  this.timeout(20000);
  let tree: ChildProcess | undefined;
  let dir: string | undefined;
  after(() => {
    if (tree?.pid) {
      try {
        process.kill(-tree.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sums the whole process tree of a PID, grandchildren included', async () => {
    // Only a grandchild reads the file (as SGLang's rank subprocesses read the weights). Every
    // process of the tree writes its PID to a file once it runs (the reader: once it has read
    // the whole file), and the test measures only when all four have: no guess at how long
    // process start-up takes on a busy machine. No process of the tree ever exits before the
    // measurement (each ends in `wait` or `exec sleep`), so the tree is exactly these four.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procio-'));
    const file = path.join(dir, 'data.txt');
    fs.writeFileSync(file, ('y'.repeat(1023) + '\n').repeat(1024));
    const script = (name: string, body: string): string => {
      const p = path.join(dir!, `${name}.sh`);
      fs.writeFileSync(p, body);
      return p;
    };
    const pidFile = (name: string): string => path.join(dir!, `${name}.pid`);
    const reader = script(
      'reader',
      `while read -r l; do :; done < '${file}'\necho $$ > '${pidFile('reader')}'\nexec sleep 30\n`,
    );
    const middle = script('middle', `sh '${reader}' &\necho $$ > '${pidFile('middle')}'\nwait\n`);
    const sleeper = script('sleeper', `echo $$ > '${pidFile('sleeper')}'\nexec sleep 30\n`);
    const outer = script('outer', `sh '${middle}' &\nsh '${sleeper}' &\necho $$ > '${pidFile('outer')}'\nwait\n`);
    tree = spawn('/bin/sh', [outer], { detached: true, stdio: 'ignore' });
    const names = ['outer', 'middle', 'reader', 'sleeper'];
    // `echo $$ > f` creates the file, then writes "PID\n": a PID counts once the line is whole.
    const pids = await waitFor(
      () => {
        const found = names.map((n) => {
          try {
            return /^(\d+)\n$/.exec(fs.readFileSync(pidFile(n), 'utf8'))?.[1];
          } catch {
            return undefined;
          }
        });
        return found.every((p) => p !== undefined) ? found.map(Number) : undefined;
      },
      { timeoutMs: 15_000, message: `the PID files of ${names.join(', ')} (the reader's once it has read the file)` },
    );
    assert.equal(pids[0], tree.pid);
    const out = firstRound(
      samplerCommand({ mainPid: tree.pid ?? 0, intervalMs: 200, controlGroup: '/no/such/cgroup' }),
    );
    assert.match(out, /^S 1 4 0 \d+ \d+ - C\d+:\d+:-$/, out); // alive; outer sh, middle sh, reader (now sleep), sleeper (now sleep); their CPU ticks
    const rchar = Number(out.split(' ')[5]);
    assert.ok(rchar >= 1024 * 1024, out); // the reader has read the whole 1 MiB
    const round = new SamplerReader(() => 4 * 1024 * 1024).read(out, 5);
    assert.equal(round.alive, true);
    assert.equal(round.signals[0]?.kind, 'io');
  });

  it('a PID that does not exist is not alive, and no process is read', () => {
    assert.equal(firstRound(samplerCommand({ mainPid: 2 ** 22 + 7, intervalMs: 200 })), 'S 0 0 1 0 0 -');
  });

  it('says whether a socket listens on the asked port, from /proc/net/tcp', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const command = samplerCommand({ mainPid: 2 ** 22 + 7, intervalMs: 200, listenPort: port });
      const [owner, open] = execFileSync('/bin/sh', ['-c', `( ${command} ) | head -n 2`], {
        encoding: 'utf8',
        timeout: 15_000,
      })
        .trim()
        .split('\n');
      // Before the round, who holds the socket: this process, not the (missing) tree.
      assert.match(owner!, new RegExp(`^O \\d+ p ${process.pid} `));
      assert.equal(open, 'S 0 0 1 0 0 - L1');
      assert.equal(new SamplerReader(() => undefined).read(open!, 1).listening, true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    assert.equal(
      firstRound(samplerCommand({ mainPid: 2 ** 22 + 7, intervalMs: 200, listenPort: port })),
      'S 0 0 1 0 0 - L0',
    );
  });

  it('model size over *.safetensors only, following symlinks', () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'model dir '));
    try {
      fs.writeFileSync(path.join(d, 'model-00001-of-00002.safetensors'), Buffer.alloc(1000));
      fs.writeFileSync(path.join(d, 'blob'), Buffer.alloc(2500));
      fs.symlinkSync(path.join(d, 'blob'), path.join(d, 'model-00002-of-00002.safetensors'));
      fs.writeFileSync(path.join(d, 'config.json'), '{}');
      fs.mkdirSync(path.join(d, 'sub'));
      fs.writeFileSync(path.join(d, 'sub', 'x.safetensors'), Buffer.alloc(7));
      // The sampler's first line, before its first round; read as the watcher reads it.
      const first = firstRound(samplerCommand({ mainPid: 2 ** 22 + 7, intervalMs: 200, modelPath: d }));
      assert.equal(first, 'M 2 3500');
      assert.deepEqual(new SamplerReader(() => undefined).read(first, 0), {
        signals: [],
        modelSize: { files: 2, bytes: 3500 },
      });
      assert.equal(
        firstRound(samplerCommand({ mainPid: 2 ** 22 + 7, intervalMs: 200, modelPath: path.join(d, 'missing') })),
        'M 0 0',
      );
    } finally {
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
