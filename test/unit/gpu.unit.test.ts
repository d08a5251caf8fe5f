import { strict as assert } from 'node:assert';
import { GPU_QUERY_COMMAND, parseNvidiaSmiCsv, totalGpuMemory } from '../../src/host/gpu';

describe('gpu: nvidia-smi CSV', () => {
  it('the command is the CSV query form', () => {
    assert.equal(
      GPU_QUERY_COMMAND,
      'nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits',
    );
  });

  it('noheader,nounits (8 GPUs)', () => {
    const text = Array.from({ length: 8 }, (_, i) => `${i}, ${1000 * (i + 1)}, 81559`).join('\n') + '\n';
    const r = parseNvidiaSmiCsv(text);
    assert.equal(r.reason, undefined);
    assert.equal(r.gpus.length, 8);
    assert.deepEqual(r.gpus[2], { index: 2, usedMiB: 3000, totalMiB: 81559 });
    assert.deepEqual(totalGpuMemory(r.gpus), { usedMiB: 36000, totalMiB: 8 * 81559 });
  });

  it('with header and units, CRLF', () => {
    const text = 'index, memory.used [MiB], memory.total [MiB]\r\n0, 75012 MiB, 81559 MiB\r\n1, 4 MiB, 81559 MiB\r\n';
    assert.deepEqual(parseNvidiaSmiCsv(text).gpus, [
      { index: 0, usedMiB: 75012, totalMiB: 81559 },
      { index: 1, usedMiB: 4, totalMiB: 81559 },
    ]);
  });

  it('[N/A] and garbage lines are skipped', () => {
    const r = parseNvidiaSmiCsv('0, [N/A], 81559\nhello world\n1, 12, 81559\n2,3\n,,\n');
    assert.deepEqual(r.gpus, [{ index: 1, usedMiB: 12, totalMiB: 81559 }]);
  });

  it('failures give no readings and a reason', () => {
    const failed = parseNvidiaSmiCsv(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
    );
    assert.deepEqual(failed.gpus, []);
    assert.match(failed.reason ?? '', /NVIDIA-SMI has failed/);
    assert.match(parseNvidiaSmiCsv('No devices were found\n').reason ?? '', /No devices/);
    assert.match(parseNvidiaSmiCsv('sh: 1: nvidia-smi: not found\n').reason ?? '', /not found/);
    assert.equal(parseNvidiaSmiCsv('').reason, 'nvidia-smi printed nothing');
  });
});
