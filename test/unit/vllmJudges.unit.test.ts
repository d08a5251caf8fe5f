import { strict as assert } from 'node:assert';
import { judgeReasoning, judgeRunningFlags, judgeThinkingOff, judgeToolCall } from '../../src/verify/judges';
import { judgeStream } from '../../src/verify/streamJudge';
import { verifyParsers, WEATHER_TOOL, type VerifierDeps } from '../../src/verify/verifier';
import { ev } from '../util/evidence';

// vLLM's answers as its serving code builds them (docs/vllm-server.md §5–§6): `reasoning` (since
// PR #33402; 0.11.1–0.15 also `reasoning_content`), content null when empty, tool_calls [] when none.
function vllmChat(message: Record<string, unknown>, finish = 'stop'): unknown {
  return {
    id: 'chatcmpl-1d2f',
    object: 'chat.completion',
    created: 1769183473,
    model: '/root/models/Kimi-K2.6',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [],
          ...message,
        },
        logprobs: null,
        finish_reason: finish,
        stop_reason: null,
        token_ids: null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: { prompt_tokens: 20, total_tokens: 60, completion_tokens: 40, prompt_tokens_details: null },
    prompt_logprobs: null,
    kv_transfer_params: null,
  };
}

function sse(chunks: Record<string, unknown>[]): string {
  const base = { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'm' };
  return (
    chunks
      .map(
        (delta, i) =>
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: i === chunks.length - 1 ? ((delta.finish as string) ?? 'stop') : null }] })}\n\n`,
      )
      .join('') + 'data: [DONE]\n\n'
  );
}

describe('judges on vLLM answers', () => {
  it('reasoning in `reasoning` (current vLLM) passes; in both fields (0.11.1–0.15) passes; in `reasoning_content` (older) passes', () => {
    assert.equal(judgeReasoning(vllmChat({ content: '391', reasoning: '17 * 23 = 391.' })).status, 'pass');
    assert.equal(
      judgeReasoning(vllmChat({ content: '391', reasoning: '17 * 23 = 391.', reasoning_content: '17 * 23 = 391.' }))
        .status,
      'pass',
    );
    assert.equal(judgeReasoning(vllmChat({ content: '391', reasoning_content: '17 * 23 = 391.' })).status, 'pass');
  });

  it('no reasoning parser: the think markers stay in content and the check fails, naming them', () => {
    const j = judgeReasoning(vllmChat({ content: '17 * 23 = 391.</think>391', reasoning: null }));
    assert.equal(j.status, 'fail');
    assert.match(ev(j), /<\/think>/);
  });

  it('thinking off: reasoning null passes, content null is no problem', () => {
    assert.equal(judgeThinkingOff(vllmChat({ content: '391', reasoning: null })).status, 'pass');
    assert.equal(judgeThinkingOff(vllmChat({ content: '391', reasoning: '…' })).status, 'fail');
  });

  it('a kimi_k2 tool call as vLLM returns it (content null, id functions.NAME:N) passes', () => {
    const resp = vllmChat(
      {
        content: null,
        reasoning: 'The user wants the weather; call get_weather.',
        tool_calls: [
          {
            id: 'functions.get_weather:0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city": "Paris"}' },
          },
        ],
      },
      'tool_calls',
    );
    const j = judgeToolCall(resp, WEATHER_TOOL);
    assert.equal(j.status, 'pass', ev(j));
    assert.match(ev(j), /get_weather\(\{"city": "Paris"\}\) id=functions\.get_weather:0/);
  });

  it('without the tool-call parser: raw section tokens in content, tool_calls [] -> fail naming the leak', () => {
    const raw =
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>';
    const j = judgeToolCall(vllmChat({ content: raw, reasoning: 'call it' }), WEATHER_TOOL);
    assert.equal(j.status, 'fail');
    assert.match(ev(j), /raw tool-call tokens in content/);
  });

  it("vLLM's refusal without --enable-auto-tool-choice is a failure with its message", async () => {
    const body = JSON.stringify({
      error: {
        message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    });
    const deps: VerifierDeps = {
      timeoutMs: 5000,
      getJson: async () => ({
        status: 200,
        body: { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm' }] },
      }),
      postJson: async (_p, req) =>
        (req as { tools?: unknown }).tools
          ? { status: 400, body }
          : {
              status: 200,
              body: JSON.stringify(
                vllmChat({
                  content: '391',
                  reasoning: (req as { chat_template_kwargs?: unknown }).chat_template_kwargs ? null : 'think',
                }),
              ),
            },
      runningArgv: async () => [
        '/usr/bin/python3',
        '/usr/bin/vllm',
        'serve',
        '/m',
        '--tool-call-parser',
        'kimi_k2',
        '--reasoning-parser',
        'kimi_k2',
      ],
    };
    const result = await verifyParsers(deps, { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2', engine: 'vllm' });
    const byName = new Map(result.checks.map((c) => [c.name, c]));
    assert.equal(byName.get('server flags')?.status, 'fail');
    assert.match(byName.get('server flags')?.evidence ?? '', /--enable-auto-tool-choice is needed/);
    assert.equal(byName.get('reasoning')?.status, 'pass');
    assert.equal(byName.get('tool calling')?.status, 'fail');
    assert.match(byName.get('tool calling')?.evidence ?? '', /HTTP 400: .*requires --enable-auto-tool-choice/);
    assert.equal(result.allPassed, false);
  });

  it('streams: `reasoning` deltas and a streamed tool call assemble and pass', () => {
    const reasoningStream = sse([
      { role: 'assistant', content: '' },
      { reasoning: '17 * 23' },
      { reasoning: ' = 391.' },
      { content: '391' },
      {},
    ]);
    assert.equal(judgeStream(reasoningStream, judgeReasoning).status, 'pass');
    const toolStream = sse([
      { role: 'assistant', content: '' },
      { reasoning: 'call it' },
      {
        tool_calls: [
          {
            id: 'functions.get_weather:0',
            type: 'function',
            index: 0,
            function: { name: 'get_weather', arguments: '' },
          },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { finish: 'tool_calls' },
    ]);
    const j = judgeStream(toolStream, (r) => judgeToolCall(r, WEATHER_TOOL));
    assert.equal(j.status, 'pass', ev(j));
  });

  it('a stream carrying both `reasoning` and `reasoning_content` counts the text once', () => {
    const stream = sse([
      { role: 'assistant', content: '' },
      { reasoning: 'abc', reasoning_content: 'abc' },
      { content: 'x' },
      {},
    ]);
    assert.match(ev(judgeStream(stream, judgeReasoning)), /reasoning_content \(3 chars\)/);
  });

  it('the running flags: all three present passes; the process renamed its title -> skipped', () => {
    const expected = { reasoningParser: 'kimi_k2', toolCallParser: 'kimi_k2', engine: 'vllm' as const };
    const argv = [
      'vllm',
      'serve',
      '/m',
      '--tool-call-parser',
      'kimi_k2',
      '--reasoning-parser=kimi_k2',
      '--enable-auto-tool-choice',
    ];
    assert.equal(judgeRunningFlags(argv, expected).status, 'pass');
    assert.equal(judgeRunningFlags(['VLLM::APIServer'], expected).status, 'skipped');
    assert.equal(judgeRunningFlags(undefined, expected).status, 'skipped');
    assert.equal(judgeRunningFlags(['vllm', 'serve', '/m', '--port', '1'], expected).status, 'fail');
  });
});
