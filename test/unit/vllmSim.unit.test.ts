// The simulator's vLLM mode, its pure parts: vLLM's command-line checks and its kimi_k2 post-processing
// (vllm/reasoning/kimi_k2_reasoning_parser.py, vllm/tool_parsers/kimi_k2_tool_parser.py).
import { strict as assert } from 'node:assert';

/* eslint-disable @typescript-eslint/no-var-requires */
const SIM = '../gpu-host/sglang-sim/';
const { parseVllmArgs } = require(SIM + 'vllm-args.js');
const vo = require(SIM + 'vllm-openai.js');

const SECTION =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';

describe('simulator, vLLM mode: command line', () => {
  it('reads `serve MODEL` and the flags, served name defaulting to the model', () => {
    const r = parseVllmArgs(['serve', '/m', '--port', '8001', '-tp', '8', '--tool-call-parser', 'kimi_k2', '--enable-auto-tool-choice']);
    assert.equal(r.ok, true);
    assert.equal(r.args.model, '/m');
    assert.equal(r.args.served_model_name, '/m');
    assert.equal(r.args.port, 8001);
    assert.equal(r.args.tensor_parallel_size, 8);
    assert.equal(r.args.enable_auto_tool_choice, true);
    assert.equal(parseVllmArgs(['-m', 'vllm.entrypoints.openai.api_server', '--model=/x']).args.model, '/x');
  });

  it('refuses what vLLM refuses before the engine starts', () => {
    const auto = parseVllmArgs(['serve', '/m', '--enable-auto-tool-choice']);
    assert.equal(auto.ok, false);
    assert.match(auto.error, /TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser$/);
    assert.match(parseVllmArgs(['serve', '/m', '--tool-call-parser', 'kimi_k9']).error, /KeyError: 'invalid tool call parser: kimi_k9/);
    assert.match(parseVllmArgs(['serve', '/m', '--reasoning-parser', 'deepseek-r1']).error, /invalid reasoning parser: deepseek-r1/);
    const bad = parseVllmArgs(['serve', '/m', '--port', 'x']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.error, /vllm serve: error: argument --port: invalid int value: 'x'/);
  });
});

describe('simulator, vLLM mode: kimi_k2 parsers as vLLM applies them', () => {
  it('reasoning: up to </think>; content null when nothing follows; identity when thinking is off', () => {
    assert.deepEqual(vo.kimiK2Reasoning('think</think>answer', true), ['think', 'answer']);
    assert.deepEqual(vo.kimiK2Reasoning('<think>think</think>', true), ['think', null]);
    assert.deepEqual(vo.kimiK2Reasoning('still thinking', true), ['still thinking', null]);
    assert.deepEqual(vo.kimiK2Reasoning(`think${SECTION}`, true), ['think', SECTION]);
    assert.deepEqual(vo.kimiK2Reasoning('answer', false), [null, 'answer']);
  });

  it('tool calls: the model\'s id kept, content before the section or null', () => {
    const t = vo.kimiK2ToolCalls(SECTION);
    assert.equal(t.called, true);
    assert.equal(t.content, null);
    assert.deepEqual(t.calls, [{ id: 'functions.get_weather:0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
  });

  it('a chat answer: `reasoning`, both fields, or `reasoning_content` by version; tool_calls [] when none', () => {
    const r = vo.postProcess(`think</think>${SECTION}`, { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2', autoTools: true, thinking: true, finishReason: 'stop' });
    assert.equal(r.finishReason, 'tool_calls');
    const meta = { model: 'm', promptTokens: 1, completionTokens: 2 };
    const msg = (field: string) => vo.chatCompletion(r, { ...meta, reasoningField: field }).choices[0].message;
    assert.equal(msg('reasoning').reasoning, 'think');
    assert.equal(msg('reasoning').reasoning_content, undefined);
    assert.equal(msg('both').reasoning_content, 'think');
    assert.equal(msg('reasoning_content').reasoning, undefined);
    const plain = vo.postProcess('hello', { reasoningParser: null, toolCallParser: null, autoTools: false, thinking: true, finishReason: 'stop' });
    assert.deepEqual(vo.chatCompletion(plain, { ...meta, reasoningField: 'reasoning' }).choices[0].message.tool_calls, []);
  });
});
