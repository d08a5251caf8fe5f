'use strict';
// vLLM's chat post-processing and response bodies (pure). Sources, docs/vllm-server.md §5–§6:
// vllm/reasoning/kimi_k2_reasoning_parser.py (extract_reasoning), vllm/tool_parsers/kimi_k2_tool_parser.py
// (extract_tool_calls), vllm/entrypoints/openai/chat_completion/serving.py and protocol.py.
const crypto = require('crypto');
const { tokenize } = require('./model');
const { K2 } = require('./parsers');
const { usageChunk } = require('./openai');

const CALL_RE =
  /<\|tool_call_begin\|>\s*([^<]+:\d+)\s*<\|tool_call_argument_begin\|>\s*((?:(?!<\|tool_call_begin\|>)[\s\S])*?)\s*<\|tool_call_end\|>/g;

/** KimiK2ReasoningParser.extract_reasoning: [reasoning, content]; identity when thinking is off. */
function kimiK2Reasoning(text, thinking) {
  if (!thinking) return [null, text];
  const start = text.startsWith('<think>') ? '<think>'.length : 0;
  const end = text.indexOf('</think>');
  if (end !== -1) return [text.slice(start, end), text.slice(end + '</think>'.length) || null];
  const section = text.indexOf(K2.sectionBegin);
  if (section !== -1) return [text.slice(start, section), text.slice(section) || null];
  return [text.slice(start), null];
}

/** KimiK2ToolParser.extract_tool_calls: the id is the model's own `functions.NAME:N`. */
function kimiK2ToolCalls(text) {
  if (!text || !text.includes(K2.sectionBegin)) return { called: false, calls: [], content: text };
  const calls = [];
  CALL_RE.lastIndex = 0;
  let m;
  while ((m = CALL_RE.exec(text)) !== null) {
    const id = m[1].trim();
    calls.push({ id, type: 'function', function: { name: id.split(':')[0].split('.').pop(), arguments: m[2] } });
  }
  const content = text.slice(0, text.indexOf(K2.sectionBegin));
  return { called: true, calls, content: content || null };
}

/**
 * serving.py chat_completion_full_generator, non-streaming: reasoning first, then the tool parser
 * when the request has tools, tool_choice auto and --enable-auto-tool-choice.
 * @returns {{reasoning:string|null, content:string|null, toolCalls:object[], finishReason:string}}
 */
function postProcess(raw, o) {
  let reasoning = null;
  let content = raw;
  if (o.reasoningParser === 'kimi_k2') [reasoning, content] = kimiK2Reasoning(raw, o.thinking);
  let toolCalls = [];
  let finishReason = o.finishReason;
  if (o.autoTools && o.toolCallParser === 'kimi_k2') {
    const t = kimiK2ToolCalls(content);
    if (t.called) {
      toolCalls = t.calls;
      content = t.content;
      if (finishReason === 'stop' && toolCalls.length) finishReason = 'tool_calls';
    }
  } else if (o.forcedTools) {
    // tool_choice "required" or named: structured output, the calls built by the server (ids
    // functions.NAME:IDX for Kimi since PR #46344); a named choice ends with "stop", as OpenAI's does.
    const t = kimiK2ToolCalls(content);
    if (t.called && t.calls.length) {
      toolCalls = t.calls.map((c, i) => ({ ...c, id: `functions.${c.function.name}:${i}` }));
      content = null;
      if (finishReason === 'stop' && o.forcedTools === 'required') finishReason = 'tool_calls';
    }
  }
  return { reasoning, content, toolCalls, finishReason };
}

/** `reasoning` (vLLM since PR #33402), both (0.11.1 to 0.15), or `reasoning_content` (up to 0.11.0). */
function reasoningFields(value, style) {
  if (style === 'reasoning_content') return { reasoning_content: value };
  if (style === 'both') return { reasoning: value, reasoning_content: value };
  return { reasoning: value };
}

const newId = () => crypto.randomBytes(16).toString('hex');
const now = () => Math.floor(Date.now() / 1000);

function usage(promptTokens, completionTokens) {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: null,
  };
}

function chatCompletion(r, meta) {
  return {
    id: `chatcmpl-${newId()}`,
    object: 'chat.completion',
    created: now(),
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: r.content,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: r.toolCalls,
          ...reasoningFields(r.reasoning, meta.reasoningField),
        },
        logprobs: null,
        finish_reason: r.finishReason,
        stop_reason: null,
        token_ids: null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: usage(meta.promptTokens, meta.completionTokens),
    prompt_logprobs: null,
    prompt_token_ids: null,
    kv_transfer_params: null,
  };
}

/** Streamed chunks: null keys left out (exclude_unset), as vLLM sends them. */
function chatStreamChunks(r, meta) {
  const id = `chatcmpl-${newId()}`;
  const created = now();
  const chunk = (delta, finish = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: meta.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, ...(finish ? { stop_reason: null } : {}) }],
  });
  const out = [chunk({ role: 'assistant', content: '' })];
  if (r.reasoning) for (const t of tokenize(r.reasoning)) out.push(chunk(reasoningFields(t, meta.reasoningField)));
  if (r.content) for (const t of tokenize(r.content)) out.push(chunk({ content: t }));
  r.toolCalls.forEach((tc, index) => {
    out.push(
      chunk({
        tool_calls: [{ id: tc.id, type: 'function', index, function: { name: tc.function.name, arguments: '' } }],
      }),
    );
    for (let i = 0; i < tc.function.arguments.length; i += 8) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: tc.function.arguments.slice(i, i + 8) } }] }));
    }
  });
  out.push(chunk({ content: '' }, r.finishReason));
  if (meta.includeUsage)
    out.push(
      usageChunk(id, 'chat.completion.chunk', created, meta.model, usage(meta.promptTokens, meta.completionTokens)),
    );
  return out;
}

function completion(text, finishReason, meta) {
  return {
    id: `cmpl-${newId()}`,
    object: 'text_completion',
    created: now(),
    model: meta.model,
    choices: [
      {
        index: 0,
        text,
        logprobs: null,
        finish_reason: finishReason,
        stop_reason: null,
        token_ids: null,
        prompt_logprobs: null,
        prompt_token_ids: null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: usage(meta.promptTokens, meta.completionTokens),
    kv_transfer_params: null,
  };
}

/** vLLM's ErrorResponse (current shape: the fields under "error"). */
function errorBody(message, code = 400) {
  const type = code === 404 ? 'NotFoundError' : code >= 500 ? 'InternalServerError' : 'BadRequestError';
  return { error: { message, type, param: null, code } };
}

function modelsList(name, root, created, maxLen) {
  return {
    object: 'list',
    data: [
      {
        id: name,
        object: 'model',
        created,
        owned_by: 'vllm',
        root,
        parent: null,
        max_model_len: maxLen,
        permission: [
          {
            id: `modelperm-${newId()}`,
            object: 'model_permission',
            created,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: '*',
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  };
}

module.exports = {
  kimiK2Reasoning,
  kimiK2ToolCalls,
  postProcess,
  chatCompletion,
  chatStreamChunks,
  completion,
  errorBody,
  modelsList,
};
