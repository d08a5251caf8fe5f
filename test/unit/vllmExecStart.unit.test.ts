import * as assert from 'node:assert/strict';
import { engineOf, findServerCommand, getFlag, modelPathOf, validateParserName } from '../../src/engine/execStart';
import { parseSystemctlCat, renderDropIn } from '../../src/target/systemd/execStartSyntax';
import { planParserChange } from '../../src/engine/parserPlan';

const KIMI = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };

describe('execStart: vLLM command lines', () => {
  it('finds `vllm serve`, `python -m vllm.entrypoints.openai.api_server` and the console script run by python', () => {
    assert.deepEqual(findServerCommand(['/opt/vllm/bin/vllm', 'serve', '/models/K2', '--port', '8000']), {
      start: 0,
      argsStart: 2,
      form: 'vllm serve',
      engine: 'vllm',
    });
    assert.deepEqual(
      findServerCommand(['/usr/bin/python3', '-m', 'vllm.entrypoints.openai.api_server', '--model', '/m']),
      {
        start: 0,
        argsStart: 3,
        form: 'vllm api_server',
        engine: 'vllm',
      },
    );
    assert.equal(
      findServerCommand([
        '/usr/bin/env',
        'CUDA_VISIBLE_DEVICES=0',
        '/usr/bin/python3',
        '/usr/local/bin/vllm',
        'serve',
        '/m',
      ])?.form,
      'vllm serve',
    );
    assert.equal(findServerCommand(['python3', '-m', 'vllm.entrypoints.cli.main', 'serve', '/m'])?.argsStart, 4);
    assert.equal(engineOf(['/opt/sglang/bin/python', '-m', 'sglang.launch_server', '--model-path', '/m']), 'sglang');
    assert.equal(engineOf(['/usr/bin/vllm', 'bench', 'serve']), undefined);
  });

  it("the model: vllm serve's positional, or --model", () => {
    assert.equal(
      modelPathOf(['vllm', 'serve', '/root/models/Kimi-K2.6', '--tensor-parallel-size', '8']),
      '/root/models/Kimi-K2.6',
    );
    assert.equal(modelPathOf(['vllm', 'serve', '--model', '/m2', '--port', '1']), '/m2');
    assert.equal(modelPathOf(['python3', '-m', 'vllm.entrypoints.openai.api_server', '--model=/m3']), '/m3');
    assert.equal(modelPathOf(['vllm', 'serve', '--port', '1']), undefined);
  });

  it('enabling parsers on a vLLM unit adds both parsers and --enable-auto-tool-choice', () => {
    const argv = [
      '/opt/vllm/bin/vllm',
      'serve',
      '/root/models/Kimi-K2.6',
      '--tensor-parallel-size',
      '8',
      '--port',
      '8000',
    ];
    const plan = planParserChange(argv, KIMI);
    assert.equal(plan.kind, 'change');
    if (plan.kind !== 'change') return;
    assert.deepEqual(plan.newArgv, [
      ...argv,
      '--tool-call-parser',
      'kimi_k2',
      '--reasoning-parser',
      'kimi_k2',
      '--enable-auto-tool-choice',
    ]);
    assert.match(plan.diff, /^\+ --enable-auto-tool-choice$/m);
    assert.match(plan.diff, /^ {2}\/opt\/vllm\/bin\/vllm serve$/m);
    // the drop-in parses back to the same command
    const dropIn = renderDropIn(plan.newArgv, 'test');
    assert.deepEqual(parseSystemctlCat(dropIn).commands[0]?.argv, plan.newArgv);
  });

  it('parsers set but --enable-auto-tool-choice missing: only that is added; all three present: already set', () => {
    const partial = ['vllm', 'serve', '/m', '--tool-call-parser', 'kimi_k2', '--reasoning-parser=kimi_k2'];
    const plan = planParserChange(partial, KIMI);
    assert.equal(plan.kind, 'change');
    if (plan.kind === 'change') assert.deepEqual(plan.newArgv, [...partial, '--enable-auto-tool-choice']);
    assert.equal(planParserChange([...partial, '--enable-auto-tool-choice'], KIMI).kind, 'already-set');
    assert.equal(getFlag([...partial, '--enable-auto-tool-choice'], '--reasoning-parser'), 'kimi_k2');
  });

  it('SGLang units do not get --enable-auto-tool-choice (SGLang has no such flag)', () => {
    const plan = planParserChange(['/opt/sglang/bin/python', '-m', 'sglang.launch_server', '--model-path', '/m'], KIMI);
    assert.equal(plan.kind, 'change');
    if (plan.kind === 'change') assert.ok(!plan.newArgv.includes('--enable-auto-tool-choice'));
  });

  it('parser names are checked against the list of the server in the unit', () => {
    assert.equal(validateParserName('reasoning', 'kimi_k2', 'vllm'), null);
    assert.equal(validateParserName('tool-call', 'kimi_k2', 'vllm'), null);
    assert.equal(validateParserName('reasoning', 'deepseek_r1', 'vllm'), null);
    assert.match(validateParserName('reasoning', 'deepseek_r1') ?? '', /not a known reasoning parser of SGLang/);
    assert.match(validateParserName('reasoning', 'deepseek-r1', 'vllm') ?? '', /not a known reasoning parser of vLLM/);
    assert.match(validateParserName('tool-call', 'kimi;rm', 'vllm') ?? '', /not a parser name/);
  });
});
