import { strict as assert } from 'node:assert';
import { splitWitnessOutput, wantsWitnesses, witnessProbeCommand, witnessSignals } from '../../src/monitor/witnessProbe';
import { initialState, reduce } from '../../src/monitor/loadState';
import type { UnitStatus } from '../../src/server/events';

const unit: UnitStatus = { loadState: 'loaded', activeState: 'active', subState: 'running', mainPid: 77, nRestarts: 0, result: 'success', dropInPaths: [], needDaemonReload: false, controlGroup: '/system.slice/sglang.service' };

describe('witness probe (show + /proc io + nvidia-smi in one exec)', () => {
  it('folds the three commands into one and keeps systemctl exit code', () => {
    const c = witnessProbeCommand('systemctl show x', 77, '/system.slice/sglang.service');
    assert.match(c, /^systemctl show x; rc=\$\?; echo @@kimi-io@@; \(/);
    assert.match(c, /root=77/);
    assert.match(c, /nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits 2>&1; exit \$rc$/);
  });
  it('splits the output back', () => {
    const out = splitWitnessOutput('ActiveState=active\nMainPID=77\n@@kimi-io@@\nprocesses 3\nunreadable 0\nread_bytes 100\nrchar 5000\n@@kimi-gpu@@\n0, 1000, 81920\n1, 1002, 81920\n');
    assert.equal(out.show, 'ActiveState=active\nMainPID=77\n');
    assert.equal(out.io?.rchar, 5000);
    assert.equal(out.gpu?.gpus.length, 2);
    const signals = witnessSignals(out, 10, 1e6);
    assert.deepEqual(signals[0], { kind: 'io', at: 10, readBytes: 5000, coldBytes: 100, totalBytes: 1e6 });
    assert.equal(signals[1]!.kind, 'gpu');
    if (signals[1]!.kind === 'gpu') assert.equal(signals[1]!.usedMiB, 2002);
    assert.deepEqual(splitWitnessOutput('A=b\n'), { show: 'A=b\n', io: undefined, gpu: undefined });
  });
  it('no io signal when no process could be read; no gpu signal when nvidia-smi failed', () => {
    const out = splitWitnessOutput('@@kimi-io@@\nprocesses 0\nunreadable 2\nread_bytes 0\nrchar 0\n@@kimi-gpu@@\nNVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver\n');
    assert.deepEqual(witnessSignals(out, 1, undefined), []);
  });
  it('reads the witnesses only while loading (before warming up)', () => {
    let s = reduce(initialState(0), { kind: 'attached', at: 1, unit });
    assert.deepEqual(wantsWitnesses(s), { mainPid: 77, controlGroup: '/system.slice/sglang.service' });
    s = reduce(s, { kind: 'journal', at: 2, event: { type: 'httpUp' }, text: 'up' });
    assert.equal(wantsWitnesses(s), undefined);
    assert.equal(wantsWitnesses(initialState(0)), undefined);
  });
});
