import { strict as assert } from 'node:assert';
import { advise, type AdviceInput } from '../../src/engine/advice/rules';
import { logFacts, type LogEntry, type LogFacts } from '../../src/engine/advice/logFacts';
import { atLeast, versionFromInfo, versionFromLogLine, versionFromOutput } from '../../src/engine/advice/version';
import { applyToArgv, residentShareOf } from '../../src/fleet/checks/loadAdvice';
import { parseEnvironment } from '../../src/target/systemd/systemd';
import { logFactsOf } from '../util/adviceFacts';

const SGLANG = ['/opt/sglang/bin/python', '-m', 'sglang.launch_server', '--model-path', '/models/K2', '--tp', '8'];
const VLLM = ['/opt/vllm/bin/vllm', 'serve', '/models/V3', '-tp', '8'];
const S = 1000;

const facts = logFactsOf;

function input(over: Partial<AdviceInput> = {}): AdviceInput {
  return {
    engine: 'sglang',
    argv: SGLANG,
    log: facts(),
    host: {},
    version: { text: '0.5.4', source: '/server_info' },
    ...over,
  };
}

function ids(i: AdviceInput): string[] {
  return advise(i).advice.map((a) => a.id);
}

function one(i: AdviceInput, id: string) {
  const found = advise(i).advice.find((a) => a.id === id);
  assert.ok(found, `${id} not advised: ${JSON.stringify(advise(i))}`);
  return found;
}

describe('advice: SGLang multi-threaded weight loading', () => {
  it('weights the largest phase, single-threaded loader, flag absent: advised with the figure and its sources', () => {
    const a = one(input(), 'sglang-multithread-load');
    assert.match(a.figure, /217 s -> 65 s/);
    assert.match(a.figure, /60 s -> 32 s/);
    assert.deepEqual(a.sources, [
      'https://github.com/sgl-project/sglang/pull/7277',
      'https://github.com/sgl-project/sglang/pull/7943',
    ]);
    assert.match(a.evidence.join('\n'), /loading weights took 3m 37s of 4m 35s \(the largest phase\)/);
    assert.match(a.evidence.join('\n'), /Loading safetensors checkpoint shards/);
    assert.deepEqual(a.change, {
      flag: '--model-loader-extra-config',
      value: '{"enable_multithread_load": true, "num_threads": 8}',
    });
    assert.equal(a.notApplicable, undefined);
  });
  it('absent evidence: weights a small phase, or the log shows the multi-threaded loader already', () => {
    const small = facts({ phaseMs: { 'loading weights': 10 * S, 'capturing CUDA graphs': 200 * S }, totalMs: 210 * S });
    assert.ok(!ids(input({ log: small })).includes('sglang-multithread-load'));
    assert.ok(!ids(input({ log: facts({ shardLoader: 'multi-thread' }) })).includes('sglang-multithread-load'));
    assert.ok(!ids(input({ engine: 'vllm', argv: VLLM })).includes('sglang-multithread-load'));
  });
  it('flag already set: not advised', () => {
    const argv = [...SGLANG, '--model-loader-extra-config', '{"enable_multithread_load": false}'];
    assert.ok(!ids(input({ argv })).includes('sglang-multithread-load'));
    assert.ok(!ids(input({ argv: [...SGLANG, '--model-loader-extra-config={}'] })).includes('sglang-multithread-load'));
  });
  it('too old an SGLang: held back with the reason; unknown version: shown, not offered to apply', () => {
    const old = advise(input({ version: { text: '0.4.6.post2', source: 'the log' } }));
    assert.ok(!old.advice.some((a) => a.id === 'sglang-multithread-load'));
    assert.match(
      old.heldBack.find((h) => h.id === 'sglang-multithread-load')?.reason ?? '',
      /0\.4\.6\.post2.*predates 0\.4\.9/,
    );
    const unknown = one(input({ version: undefined }), 'sglang-multithread-load');
    assert.match(unknown.notApplicable ?? '', /SGLang version on the host is unknown/);
  });
});

describe('advice: vLLM prefetch', () => {
  const vllm = (over: Partial<AdviceInput> = {}) =>
    input({ engine: 'vllm', argv: VLLM, version: { text: '0.19.1', source: '/version' }, ...over });
  it('vLLM said auto-prefetch is off on this filesystem: advised, applicable even without a version', () => {
    const a = one(vllm({ log: facts({ autoPrefetchDisabledOn: 'EXT4' }), version: undefined }), 'vllm-prefetch');
    assert.match(a.figure, /1500 s -> 435 s/);
    assert.ok(a.sources.includes('https://github.com/vllm-project/vllm/pull/36012'));
    assert.match(a.evidence.join('\n'), /auto-prefetch is off on this filesystem \(EXT4\)/);
    assert.equal(a.notApplicable, undefined);
    assert.deepEqual(a.change, { flag: '--safetensors-load-strategy', value: 'prefetch' });
  });
  it('cold read from a local filesystem, weights fit in memory: advised', () => {
    const host = { residentShareAtStart: 0.04, fsType: 'xfs', memAvailableBytes: 1.5e12, modelBytes: 0.7e12 };
    const a = one(vllm({ host }), 'vllm-prefetch');
    assert.match(a.evidence.join('\n'), /4 % in the page cache at the start\) from xfs/);
  });
  it('absent evidence: warm read, NFS (vLLM prefetches by itself), weights larger than memory', () => {
    assert.ok(!ids(vllm({ host: { residentShareAtStart: 0.96, fsType: 'xfs' } })).includes('vllm-prefetch'));
    assert.ok(!ids(vllm({ host: { residentShareAtStart: 0.0, fsType: 'nfs' } })).includes('vllm-prefetch'));
    const big = { residentShareAtStart: 0, fsType: 'ext2/ext3', memAvailableBytes: 0.5e12, modelBytes: 0.7e12 };
    assert.ok(!ids(vllm({ host: big, log: facts({ autoPrefetchDisabledOn: 'EXT4' }) })).includes('vllm-prefetch'));
  });
  it('flag already set, or multi-threaded loading (vLLM refuses both together): not advised', () => {
    const log = facts({ autoPrefetchDisabledOn: 'EXT4' });
    assert.ok(!ids(vllm({ log, argv: [...VLLM, '--safetensors-load-strategy=lazy'] })).includes('vllm-prefetch'));
    const mt = [...VLLM, '--model-loader-extra-config', '{"enable_multithread_load": true}'];
    assert.ok(!ids(vllm({ log, argv: mt })).includes('vllm-prefetch'));
  });
  it('too old a vLLM: held back; unknown version without the log line: not offered to apply', () => {
    const host = { residentShareAtStart: 0, fsType: 'xfs' };
    const old = advise(vllm({ host, version: { text: '0.11.0+faa43dbf', source: 'the log' } }));
    assert.ok(!old.advice.some((a) => a.id === 'vllm-prefetch'));
    assert.ok(old.heldBack.some((h) => h.id === 'vllm-prefetch'));
    assert.match(one(vllm({ host, version: undefined }), 'vllm-prefetch').notApplicable ?? '', /vLLM version/);
  });
});

describe('advice: DeepGEMM pre-compile', () => {
  const jit = facts({
    phaseMs: { 'loading weights': 60 * S, 'capturing CUDA graphs': 675 * S },
    totalMs: 745 * S,
    activityMs: { deepgemm: 660 * S },
  });
  it('a DeepGEMM JIT phase in this load: advised with the 10-20 min figure, the command, and no apply', () => {
    const a = one(input({ log: jit }), 'deepgemm-precompile');
    assert.match(a.figure, /typically 10-20 mins/);
    assert.ok(a.sources.includes('https://github.com/sgl-project/sglang/issues/15891'));
    assert.ok(a.sources.includes('https://github.com/sgl-project/sglang/issues/29170'));
    assert.match(a.evidence.join('\n'), /compiled DeepGEMM kernels for 11m 00s/);
    assert.match(a.action, /python3 -m sglang\.compile_deep_gemm --model \/models\/K2 --tp 8/);
    assert.equal(a.change, undefined);
    assert.match(a.notApplicable ?? '', /not a command-line flag/);
  });
  it('a cache dir already set: the evidence says it compiled anyway', () => {
    const a = one(
      input({ log: jit, host: { environment: { SGLANG_DG_CACHE_DIR: '/data/dg' } } }),
      'deepgemm-precompile',
    );
    assert.match(
      a.evidence.join('\n'),
      /SGLANG_DG_CACHE_DIR is set \(\/data\/dg\) and the kernels were compiled anyway/,
    );
  });
  it('no DeepGEMM phase in the log: not advised; and the graph rule does not count the compile as capture', () => {
    assert.ok(!ids(input()).includes('deepgemm-precompile'));
    assert.ok(!ids(input({ log: jit })).includes('cuda-graph-max-bs'));
  });
});

describe('advice: CUDA graph batch sizes', () => {
  const graphs = (over: Partial<LogFacts> = {}) =>
    facts({
      phaseMs: { 'loading weights': 30 * S, 'capturing CUDA graphs': 150 * S, 'warming up': 2 * S },
      totalMs: 190 * S,
      graphBatchSizes: [1, 2, 4, 8, 16, 32, 64, 128, 160, 256, 512],
      ...over,
    });
  it('graph capture the largest phase, max-bs unset, 11 sizes up to 512: advised', () => {
    const a = one(input({ log: graphs() }), 'cuda-graph-max-bs');
    assert.match(a.evidence.join('\n'), /capturing CUDA graphs took 2m 30s of 3m 10s \(the largest phase\)/);
    assert.match(a.evidence.join('\n'), /11 batch sizes were captured, up to 512/);
    assert.match(a.evidence.join('\n'), /--cuda-graph-max-bs is not set/);
    assert.ok(a.sources.includes('https://github.com/sgl-project/sglang/pull/10590'));
    assert.deepEqual(a.change, { flag: '--cuda-graph-max-bs', value: '128' });
  });
  it('absent evidence: capture short, or the captured sizes already small', () => {
    assert.ok(!ids(input()).includes('cuda-graph-max-bs'));
    assert.ok(!ids(input({ log: graphs({ graphBatchSizes: [1, 2, 4, 8, 16, 32] }) })).includes('cuda-graph-max-bs'));
  });
  it('flag already bounded (or graphs disabled, or an explicit list): not advised', () => {
    for (const extra of [['--cuda-graph-max-bs', '64'], ['--disable-cuda-graph'], ['--cuda-graph-bs', '1', '2']]) {
      assert.ok(
        !ids(input({ log: graphs(), argv: [...SGLANG, ...extra] })).includes('cuda-graph-max-bs'),
        extra.join(' '),
      );
    }
  });
  it('a DeepGEMM compile inside a long capture: the capture without it is the evidence', () => {
    const log = graphs({
      phaseMs: { 'loading weights': 30 * S, 'capturing CUDA graphs': 750 * S },
      totalMs: 790 * S,
      activityMs: { deepgemm: 600 * S },
    });
    const a = one(input({ log }), 'cuda-graph-max-bs');
    assert.match(a.evidence.join('\n'), /capturing CUDA graphs took 2m 30s of 3m 10s \(the largest phase\)/);
    assert.match(a.evidence.join('\n'), /without the 10m 00s of DeepGEMM compiling inside it/);
    assert.ok(ids(input({ log })).includes('deepgemm-precompile'));
  });
  it('a large max-bs set: advised; too old an SGLang: held back; unknown: not applicable', () => {
    assert.ok(
      ids(input({ log: graphs(), argv: [...SGLANG, '--cuda-graph-max-bs', '512'] })).includes('cuda-graph-max-bs'),
    );
    const old = advise(input({ log: graphs(), version: { text: '0.3.6', source: 'the log' } }));
    assert.ok(old.heldBack.some((h) => h.id === 'cuda-graph-max-bs'));
    assert.ok(one(input({ log: graphs(), version: undefined }), 'cuda-graph-max-bs').notApplicable);
  });
});

describe('advice: warm page cache', () => {
  const host = { residentShareAtStart: 0.04, memAvailableBytes: 1.5e12, modelBytes: 0.6e12 };
  it('cold reads and enough free memory: advised with the measured 0.33x, not a flag', () => {
    const a = one(input({ host }), 'warm-page-cache');
    assert.match(a.figure, /0\.33x of the cold downtime/);
    assert.match(a.evidence.join('\n'), /4 % of the weights were in the page cache/);
    assert.equal(a.change, undefined);
  });
  it('absent evidence: a warm start, too little memory, or no history', () => {
    assert.ok(!ids(input({ host: { ...host, residentShareAtStart: 0.9 } })).includes('warm-page-cache'));
    assert.ok(!ids(input({ host: { ...host, memAvailableBytes: 0.5e12 } })).includes('warm-page-cache'));
    assert.ok(!ids(input({ host: { memAvailableBytes: 1.5e12, modelBytes: 0.6e12 } })).includes('warm-page-cache'));
  });
});

describe('advice: the page-cache share of this load, from the history', () => {
  const since = Date.UTC(2026, 0, 1, 12);
  const record = (startedAt: number, resident: number) => ({
    startedAt,
    outcome: 'ready' as const,
    phaseMs: {},
    residentBytesAtStart: resident,
    totalBytes: 100,
  });
  it("this load's record (begun shortly before the process started), not an earlier load's", () => {
    assert.equal(residentShareOf([record(since - 8 * S, 4), record(since - 3600 * S, 96)], since), 0.04);
    assert.equal(residentShareOf([record(since - 3600 * S, 96)], since), undefined);
    assert.equal(residentShareOf([], since), undefined);
    assert.equal(residentShareOf([record(since - 8 * S, 4)], undefined), undefined);
  });
});

describe('advice: a fast load gets none', () => {
  it('every phase under 20 s: nothing advised', () => {
    const log = facts({
      phaseMs: { starting: 2 * S, 'loading weights': 9 * S, 'capturing CUDA graphs': 3 * S },
      totalMs: 14 * S,
    });
    assert.deepEqual(advise(input({ log, host: { residentShareAtStart: 0 } })).advice, []);
  });
});

describe('advice: the log read back', () => {
  const t0 = Date.UTC(2026, 0, 1);
  const at = (s: number, message: string): LogEntry => ({ at: t0 + s * S, message });
  it('phases, the single-threaded shard bar, the DeepGEMM compile inside the capture, the batch sizes', () => {
    const log = logFacts('sglang', [
      at(0, '[2026-01-01 00:00:00 TP0] Init torch distributed begin.'),
      at(5, '[2026-01-01 00:00:05 TP0] Load weight begin. avail mem=75.00 GB'),
      at(6, 'Loading safetensors checkpoint shards:   0% Completed | 0/64 [00:00<?, ?it/s]'),
      at(200, '[2026-01-01 00:03:20 TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=10 GB'),
      at(201, '[2026-01-01 00:03:21 TP0] KV Cache is allocated. #tokens: 524288, KV size: 4.2 GB'),
      at(210, '[2026-01-01 00:03:30 TP0] Capture cuda graph begin. This can take up to several minutes.'),
      at(210, '[2026-01-01 00:03:30 TP0] Capture cuda graph bs [1, 2, 4, 8, 16, 256]'),
      at(
        212,
        '[2026-01-01 00:03:32 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins)',
      ),
      at(812, '[2026-01-01 00:13:32 TP0] Capture cuda graph end. Time elapsed: 602 s'),
      at(815, 'INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)'),
      at(820, '[2026-01-01 00:13:40] The server is fired up and ready to roll!'),
    ]);
    assert.equal(log.ready, true);
    assert.equal(log.totalMs, 820 * S);
    assert.equal(log.phaseMs['loading weights'], 196 * S);
    assert.equal(log.phaseMs['capturing CUDA graphs'], 605 * S);
    assert.equal(log.activityMs.deepgemm, 603 * S);
    assert.equal(log.shardLoader, 'single-thread');
    assert.deepEqual(log.graphBatchSizes, [1, 2, 4, 8, 16, 256]);
    const result = advise(input({ log }));
    assert.equal(result.largest?.phase, 'capturing CUDA graphs');
    assert.deepEqual(
      result.advice.map((a) => a.id),
      ['sglang-multithread-load', 'deepgemm-precompile'],
    );
  });
  it("an earlier run's lines before systemd's Started are not this load's", () => {
    const log = logFacts('sglang', [
      at(0, 'Multi-thread loading shards: 100% Completed | 4/4 [00:01<00:00]'),
      at(1, '[2026-01-01 00:00:01] The server is fired up and ready to roll!'),
      at(5, 'Stopping sglang.service - SGLang...'),
      at(6, 'Started sglang.service - SGLang.'),
      at(7, '[2026-01-01 00:00:07 TP0] Load weight begin. avail mem=75.00 GB'),
      at(8, 'Loading safetensors checkpoint shards:   0% Completed | 0/64 [00:00<?, ?it/s]'),
      at(60, '[2026-01-01 00:01:00 TP0] KV Cache is allocated. #tokens: 524288, KV size: 4.2 GB'),
      at(62, '[2026-01-01 00:01:02] The server is fired up and ready to roll!'),
    ]);
    assert.equal(log.shardLoader, 'single-thread');
    assert.equal(log.totalMs, 56 * S);
    assert.equal(log.phaseMs['loading weights'], 53 * S);
    assert.equal(log.ready, true);
  });
  it("vLLM's version line and its auto-prefetch hint", () => {
    const log = logFacts('vllm', [
      at(0, '(APIServer pid=1) INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.19.1'),
      at(
        1,
        'INFO 01-01 00:00:01 [weight_utils.py:1] Auto-prefetch is disabled because the filesystem (EXT4) is not a recognized network FS (NFS/Lustre). If you want to force prefetching, start vLLM with --safetensors-load-strategy=prefetch.',
      ),
    ]);
    assert.equal(log.version, '0.19.1');
    assert.equal(log.autoPrefetchDisabledOn, 'EXT4');
  });
});

describe('advice: versions', () => {
  it('compares releases; a development build counts as older than its release', () => {
    assert.equal(atLeast('0.5.4', '0.4.9'), true);
    assert.equal(atLeast('0.4.9', '0.4.9'), true);
    assert.equal(atLeast('0.4.8.post1', '0.4.9'), false);
    assert.equal(atLeast('0.18.0rc1', '0.18.0'), false);
    assert.equal(atLeast('0.18.0+cu128', '0.18.0'), true);
    assert.equal(atLeast('main', '0.18.0'), undefined);
  });
  it('reads the version from a log line, a python answer, an HTTP answer', () => {
    assert.equal(versionFromLogLine('vllm', 'vLLM API server version 0.13.0+faa43dbf'), '0.13.0+faa43dbf');
    assert.equal(versionFromLogLine('sglang', 'sglang version: 0.5.4.post1'), '0.5.4.post1');
    assert.equal(versionFromLogLine('sglang', 'Load weight begin. avail mem=75.00 GB'), undefined);
    assert.equal(versionFromOutput('warning: x\n0.5.4\n'), '0.5.4');
    assert.equal(versionFromOutput('Traceback ... ModuleNotFoundError'), undefined);
    assert.equal(versionFromInfo({ version: '0.5.4' }), '0.5.4');
    assert.equal(versionFromInfo({ version: 5 }), undefined);
  });
});

describe('advice: the change on the command line', () => {
  it('sets the flag (replacing an old value) and reads the unit environment', () => {
    const a = one(input(), 'sglang-multithread-load');
    const argv = applyToArgv(SGLANG, a);
    assert.deepEqual(argv.slice(-2), [
      '--model-loader-extra-config',
      '{"enable_multithread_load": true, "num_threads": 8}',
    ]);
    assert.deepEqual(parseEnvironment('PYTHONUNBUFFERED=1 SGLANG_DG_CACHE_DIR="/data/dg cache" X='), {
      PYTHONUNBUFFERED: '1',
      SGLANG_DG_CACHE_DIR: '/data/dg cache',
      X: '',
    });
  });
});
