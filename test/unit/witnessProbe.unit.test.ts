import { strict as assert } from 'node:assert';
import { wantsWitnesses, witnessSignals } from '../../src/monitor/watch/witnessProbe';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { ServiceStatus } from '../../src/target/target';

const unit: ServiceStatus = {
  loadState: 'loaded',
  activeState: 'active',
  subState: 'running',
  mainPid: 77,
  nRestarts: 0,
  result: 'success',
  dropInPaths: [],
  needDaemonReload: false,
  controlGroup: '/system.slice/sglang.service',
};

describe('witnesses (bytes read, GPU memory) as load signals', () => {
  it('turns io and GPU readings into signals', () => {
    const signals = witnessSignals(
      {
        io: { processes: 3, unreadable: 0, readBytes: 100, rchar: 5000 },
        gpu: {
          gpus: [
            { index: 0, usedMiB: 1000, totalMiB: 81920 },
            { index: 1, usedMiB: 1002, totalMiB: 81920 },
          ],
        },
      },
      10,
      1e6,
    );
    assert.deepEqual(signals[0], { kind: 'io', at: 10, readBytes: 5000, coldBytes: 100, totalBytes: 1e6 });
    assert.equal(signals[1]!.kind, 'gpu');
    if (signals[1]!.kind === 'gpu') assert.equal(signals[1]!.usedMiB, 2002);
  });
  it('no io signal when no process could be read; no gpu signal when nvidia-smi failed', () => {
    const gpu = { gpus: [], reason: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" };
    assert.deepEqual(
      witnessSignals({ io: { processes: 0, unreadable: 2, readBytes: 0, rchar: 0 }, gpu }, 1, undefined),
      [],
    );
  });
  it('reads the witnesses only while loading (before warming up)', () => {
    let s = reduce(initialState(0), { kind: 'tiedToRun', at: 1, unit });
    assert.deepEqual(wantsWitnesses(s), { mainPid: 77, controlGroup: '/system.slice/sglang.service' });
    s = reduce(s, { kind: 'journal', at: 2, event: { type: 'httpUp' }, text: 'up' });
    assert.equal(wantsWitnesses(s), undefined);
    assert.equal(wantsWitnesses(initialState(0)), undefined);
  });
});
