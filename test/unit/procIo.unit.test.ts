import { strict as assert } from 'node:assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { modelSizeCommand, parseModelSize, parseProcIo, procIoCommand } from '../../src/server/procIo';
import { waitFor } from '../util/waitFor';

function sh(cmd: string): string {
  return execFileSync('/bin/sh', ['-c', cmd], { encoding: 'utf8' });
}

describe('procIo: parsing', () => {
  it('parses the printed figures', () => {
    assert.deepEqual(parseProcIo('processes 9\nunreadable 1\nread_bytes 1048576\nrchar 2097152\ncgroup_rbytes 4194304\n'), {
      processes: 9,
      unreadable: 1,
      readBytes: 1048576,
      rchar: 2097152,
      cgroupReadBytes: 4194304,
    });
    assert.deepEqual(parseProcIo('processes 0\nunreadable 0\nread_bytes 0\nrchar 0\n'), { processes: 0, unreadable: 0, readBytes: 0, rchar: 0 });
    assert.equal(parseProcIo('sh: 1: syntax error'), undefined);
  });
  it('model size', () => {
    assert.deepEqual(parseModelSize('8589934592\n8589934592\n123\nfind: x: No such file\n'), { bytes: 17179869307, files: 3 });
    assert.deepEqual(parseModelSize(''), { bytes: 0, files: 0 });
  });
  it('rejects unsafe inputs, quotes paths', () => {
    assert.throws(() => procIoCommand(-1));
    assert.throws(() => procIoCommand(1.5));
    assert.throws(() => procIoCommand(1, 'relative/cg'));
    assert.throws(() => modelSizeCommand('models/x'));
    assert.throws(() => modelSizeCommand('/a\nb'));
    assert.match(modelSizeCommand("/root/models/K'2; touch /tmp/x"), /find -L '\/root\/models\/K'\\''2; touch \/tmp\/x' -maxdepth 1/);
    assert.match(procIoCommand(1, '/system.slice/a b.service'), /cg='\/system\.slice\/a b\.service'/);
  });
});

describe('procIo: the commands on this machine (/bin/sh)', function () {
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
    const reader = script('reader', `while read -r l; do :; done < '${file}'\necho $$ > '${pidFile('reader')}'\nexec sleep 30\n`);
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
    const out = sh(procIoCommand(tree.pid ?? 0, '/no/such/cgroup'));
    const io = parseProcIo(out);
    assert.ok(io, out);
    assert.equal(io.processes, 4, out); // outer sh, middle sh, reader (now sleep), sleeper (now sleep)
    assert.equal(io.unreadable, 0, out);
    assert.ok(io.rchar >= 1024 * 1024, out); // the reader has read the whole 1 MiB
    assert.equal(io.cgroupReadBytes, undefined);
  });

  it('prints zeros for a PID that does not exist', () => {
    assert.deepEqual(parseProcIo(sh(procIoCommand(0))), { processes: 0, unreadable: 0, readBytes: 0, rchar: 0 });
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
      assert.deepEqual(parseModelSize(sh(modelSizeCommand(d))), { bytes: 3500, files: 2 });
    } finally {
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
