import { strict as assert } from 'node:assert';
import { GPU_QUERY_COMMAND, totalGpuMemory } from '../../src/host/gpu';

describe('gpu: nvidia-smi CSV', () => {
  it('the command is the CSV query form', () => {
    assert.equal(
      GPU_QUERY_COMMAND,
      'nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits',
    );
  });

  it('the memory of every GPU, summed', () => {
    const gpus = Array.from({ length: 8 }, (_, i) => ({ index: i, usedMiB: 1000 * (i + 1), totalMiB: 81559 }));
    assert.deepEqual(totalGpuMemory(gpus), { usedMiB: 36000, totalMiB: 8 * 81559 });
    assert.deepEqual(totalGpuMemory([]), { usedMiB: 0, totalMiB: 0 });
  });
});
