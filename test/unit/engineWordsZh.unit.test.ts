/**
 * What the engine judges reads in the user's language: an advice (its title, evidence, action,
 * published figure around its measured numbers), why an HTTP answer is no completion, and what a
 * multi-node failure means, rendered with the zh-cn bundle; English without one.
 */
import { strict as assert } from 'node:assert';
import { advise } from '../../src/engine/advice/rules';
import { judgeCompletion } from '../../src/engine/httpAnswers';
import { distributedProblem } from '../../src/engine/distributed';
import { adviceHeader, adviceLines } from '../../src/present/adviceText';
import { useBundle } from '../../src/util/l10n';
import { logFactsOf } from '../util/adviceFacts';
import { ZH } from '../util/zhSamples';

const S = 1000;
const LOG = logFactsOf({
  phaseMs: { starting: 20 * S, 'loading weights': 217 * S, 'capturing CUDA graphs': 30 * S },
  totalMs: 267 * S,
});

function multiThread() {
  const result = advise({
    engine: 'sglang',
    argv: ['python', '-m', 'sglang.launch_server', '--model-path', '/models/K2'],
    log: LOG,
    host: {},
    version: undefined,
  });
  const advice = result.advice.find((a) => a.id === 'sglang-multithread-load');
  assert.ok(advice, JSON.stringify(result));
  return { result, advice };
}

/** Han characters, the way Chinese reads. */
const HAN = /[\u4e00-\u9fff]/;

describe('engine words in the display language', () => {
  afterEach(() => useBundle(undefined));

  it('an advice under the zh-cn bundle: title, evidence, action, figure and why not in Chinese; numbers, flags and quotations kept', () => {
    useBundle(ZH);
    const { result, advice } = multiThread();
    assert.equal(advice.title, '用 8 个线程加载权重');
    assert.equal(advice.evidence[0], '加载权重用时 3m 37s，共 4m 27s（最长的阶段）');
    assert.equal(advice.evidence[1], '日志显示使用的是单线程加载器（"Loading safetensors checkpoint shards"）');
    assert.match(advice.action, /^添加 --model-loader-extra-config '\{"enable_multithread_load": true/);
    assert.equal(advice.figure, 'DeepSeek-R1 从 NVMe 加载：217 s -> 65 s；从页缓存加载：60 s -> 32 s');
    assert.match(advice.notApplicable ?? '', /^主机上的 SGLang 版本未知（需要 0\.4\.9 或更高）/);
    const lines = [adviceHeader('gpu1', result, LOG.totalMs), ...adviceLines(advice, 1)];
    assert.match(lines[0]!, /^gpu1：上次加载用时 4m 27s；最长的阶段：加载权重 3m 37s：\d 条建议$/);
    for (const line of lines) assert.match(line, HAN, line);
  });

  it('the same advice without a bundle reads in English', () => {
    const { advice } = multiThread();
    assert.equal(advice.title, 'Load the weights with 8 threads');
    assert.equal(advice.evidence[0], 'loading weights took 3m 37s of 4m 27s (the largest phase)');
    assert.equal(advice.figure, 'DeepSeek-R1 from NVMe: 217 s -> 65 s; from the page cache: 60 s -> 32 s');
  });

  it("an HTTP answer's reason and a multi-node meaning under the zh-cn bundle read in Chinese", () => {
    useBundle(ZH);
    assert.deepEqual(judgeCompletion(401, 'application/json', '{}', false, true), {
      ok: false,
      reason: 'HTTP 401：模型服务拒绝了该 API 密钥',
    });
    assert.deepEqual(judgeCompletion(200, 'application/json', '{"choices": [', false), {
      ok: false,
      reason: '正文不是有效的 JSON（被截断或损坏）',
    });
    const problem = distributedProblem(
      '[E socket.cpp] Timed out after 901 seconds waiting for clients. 1/2 clients joined.',
    );
    assert.equal(
      problem?.meaning,
      '901 秒内只有 1/2 个 rank 到达汇合点（--dist-init-addr）：有节点没有启动，或无法连到 rank 0 节点',
    );
  });
});
