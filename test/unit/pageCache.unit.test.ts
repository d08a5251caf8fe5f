import { strict as assert } from 'node:assert';
import {
  dropCacheWarning,
  parseMemAvailable,
  parseResidency,
  parseWarmLine,
  planWarm,
  residencyCommand,
  warmCacheCommand,
  warmCancelCommand,
} from '../../src/host/pageCache';
import { predictLoad } from '../../src/monitor/history/loadPrediction';
import type { LoadRecord } from '../../src/monitor/history/history';
import { predictionText } from '../../src/present/words/pageCacheWords';

describe('page cache', () => {
  it('builds a residency command with fincore, a mincore fallback and "none"', () => {
    const c = residencyCommand('/models/Kimi K2');
    assert.match(c, /fincore --bytes --noheadings --raw --output RES,SIZE,FILE/);
    assert.match(c, /python3 -c/);
    assert.match(c, /method none/);
    assert.match(c, /'\/models\/Kimi K2'/);
    assert.throws(() => residencyCommand('relative/path'));
  });
  it('parses fincore output, page-rounded and with escaped names', () => {
    const r = parseResidency('method fincore\n303104 300000 /m/a.safetensors\n0 5000 /m/b\\x20c.safetensors\n');
    assert.equal(r.method, 'fincore');
    assert.equal(r.residentBytes, 300000);
    assert.equal(r.totalBytes, 305000);
    assert.equal(r.files[1]!.file, '/m/b c.safetensors');
  });
  it('reports unknown residency when neither tool exists, and counts unreadable files', () => {
    assert.equal(parseResidency('method none\n').residentBytes, undefined);
    const r = parseResidency("method mincore\n-1 100 /m/a\nerror 'Permission denied' /m/b\n50 100 /m/c\n");
    assert.equal(r.errors, 2);
    assert.equal(r.residentBytes, 50);
  });
  it('predicts a load from cold/warm bytes, defaults without history', () => {
    const total = 240e9;
    const cold = predictLoad([], 0, total);
    // 240 GB at 240 MB/s = 1000 s, + 10 s starting + 25 % after the weights
    assert.ok(Math.abs(cold - (10_000 + 1_000_000 + 250_000)) < 1);
    const warm = predictLoad([], total, total);
    assert.ok(warm < cold / 10);
    const history: LoadRecord[] = [
      {
        startedAt: 0,
        outcome: 'ready',
        totalMs: 1_400_000,
        phaseMs: {},
        coldBps: 100e6,
        warmBps: 1e9,
        afterWeightsMs: 30_000,
        startingMs: 5000,
      },
    ];
    const h = predictLoad(history, 120e9, total);
    assert.ok(Math.abs(h - (5000 + 1_200_000 + 120_000 + 30_000)) < 1);
    assert.equal(predictionText(540_000, 41e9, 100e9), '~9 min: 41% of the weights are cached');
    assert.equal(predictionText(30_000, undefined, undefined), '~30 s (page cache unknown)');
  });
  it('warns about --weight-loader-drop-cache-after-load', () => {
    assert.match(
      dropCacheWarning(['python', '-m', 'sglang.launch_server', '--weight-loader-drop-cache-after-load'])!,
      /every restart reads the weights cold/,
    );
    assert.equal(dropCacheWarning(['python', '--model-path', '/m']), undefined);
  });
  it('warms only when MemAvailable covers the uncached bytes + 10 %', () => {
    const res = parseResidency('method fincore\n40 100 /m/a\n0 100 /m/b\n');
    assert.equal(parseMemAvailable('MemTotal: 100 kB\nMemAvailable:   2048 kB\n'), 2048 * 1024);
    assert.deepEqual(planWarm(res, 200), { ok: true, needBytes: 160 });
    const no = planWarm(res, 170);
    assert.equal(no.ok, false);
    assert.equal(planWarm(parseResidency('method fincore\n100 100 /m/a\n'), 1e9).ok, false);
    assert.equal(planWarm(parseResidency('method none\n'), 1e9).ok, false);
  });
  it('warm command runs in its own session, prints its pid, is cancellable', () => {
    const c = warmCacheCommand('/m', 4);
    assert.match(c, /^setsid sh -c /);
    assert.match(c, /xargs -0 -r -P 4 -n 1/);
    assert.match(c, /vmtouch -tq/);
    assert.equal(warmCancelCommand(123), 'kill -TERM -- -123 2>/dev/null || kill -TERM 123');
    assert.throws(() => warmCancelCommand(1));
    assert.deepEqual(parseWarmLine('pid 42'), { pid: 42 });
    assert.deepEqual(parseWarmLine('warm done'), { done: true });
    assert.deepEqual(parseWarmLine('warm failed 123'), { failed: 123 });
    assert.equal(parseWarmLine('noise'), undefined);
  });
});
