import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SamplerReader, samplerCommand } from '../../src/monitor/watch/sampler';

describe('sampler: reading its lines', () => {
  it('an io signal and the liveness at each round, GPU memory from the lines the round carries', () => {
    const reader = new SamplerReader(() => 1e9);
    const first = reader.read('S 1 9 0 1000 4000 -', 1);
    assert.equal(first.alive, true);
    assert.deepEqual(first.signals, [{ kind: 'io', at: 1, readBytes: 4000, coldBytes: 1000, totalBytes: 1e9 }]);
    const second = reader.read('S 1 9 0 2000 8000 - U100,200 T81920,81920', 2);
    assert.equal(second.signals.length, 2);
    const gpu = second.signals[1]!;
    assert.deepEqual(gpu.kind === 'gpu' && [gpu.usedMiB, gpu.totalMiB], [300, 163840]);
    // Later rounds carry the used memory only: the totals are those of the first.
    const third = reader.read('S 1 9 0 3000 9000 - L0 U150,250', 3);
    assert.equal(third.listening, false);
    const gpu3 = third.signals[1]!;
    assert.deepEqual(gpu3.kind === 'gpu' && gpu3.perGpu, [
      { index: 0, usedMiB: 150, totalMiB: 81920 },
      { index: 1, usedMiB: 250, totalMiB: 81920 },
    ]);
    assert.equal(reader.read('S 0 0 1 0 0 -', 4).alive, false);
    assert.deepEqual(reader.read('garbage', 4), { signals: [] });
    assert.equal(reader.read('S 1 9 0 1 1 - U[N/A],[N/A]', 5).signals.length, 1, 'no reading, no GPU signal');
  });

  it('uses the cgroup figure when it is larger (cold reads of a tree it cannot see)', () => {
    const round = new SamplerReader(() => undefined).read('S 1 2 0 10 20 5000', 1);
    assert.deepEqual(round.signals, [{ kind: 'io', at: 1, readBytes: 5000, coldBytes: 5000 }]);
  });
});

describe('sampler: paced by nvidia-smi -lms on a host that has it', function () {
  this.timeout(20_000);
  it('one line per round carrying the GPU lines, nvidia-smi started once', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sampler-'));
    try {
      // A fake nvidia-smi that records each start and prints two GPUs every -lms milliseconds.
      const fake = path.join(dir, 'nvidia-smi');
      fs.writeFileSync(
        fake,
        `#!/bin/sh\necho started >> '${dir}/starts'\nwhile :; do printf '0, 100, 81920, 37\\n1, 200, 81920, [Not Supported]\\n'; sleep 0.05; done\n`,
      );
      fs.chmodSync(fake, 0o755);
      const command = samplerCommand({ mainPid: process.pid, intervalMs: 50 });
      const out = execFileSync('/bin/sh', ['-c', `( ${command} ) | head -n 3`], {
        encoding: 'utf8',
        timeout: 15_000,
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
      });
      const lines = out.trim().split('\n');
      assert.equal(lines.length, 3, out);
      // The totals once, in the first record; then the used memory only.
      // GPU utilisation per GPU (`-` where nvidia-smi has none), then the tree's CPU ticks.
      assert.match(lines[0]!, /^S 1 \d+ \d+ \d+ \d+ - U100,200 T81920,81920 P37,- C\d+:\d+:-$/);
      for (const line of lines.slice(1)) assert.match(line, /^S 1 \d+ \d+ \d+ \d+ - U100,200 P37,- C\d+:\d+:-$/);
      const round = new SamplerReader(() => undefined).read(lines[0]!, 5);
      const gpu = round.signals.find((s) => s.kind === 'gpu');
      assert.equal(gpu?.kind === 'gpu' ? gpu.utilPercent : undefined, 37, 'the busiest GPU');
      assert.ok(
        round.signals.some((s) => s.kind === 'cpu' && s.cpuSeconds > 0),
        'the CPU time of this test process',
      );
      assert.equal(
        fs.readFileSync(path.join(dir, 'starts'), 'utf8'),
        'started\n',
        'nvidia-smi started once, not once per round',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
