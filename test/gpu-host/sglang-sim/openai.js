'use strict';
// Response bodies shaped like SGLang's OpenAI-compatible routes (pure functions).
const crypto = require('crypto');
const { tokenize } = require('./model');

const EOS_ID = 163586; // Kimi K2 <|im_end|>

function newId() {
  return crypto.randomBytes(16).toString('hex');
}
function now() {
  return Math.floor(Date.now() / 1000);
}

function errorBody(message, status = 400, type) {
  const t = type || (status === 404 ? 'NotFoundError' : status >= 500 ? 'InternalServerError' : 'BadRequestError');
  return { object: 'error', message, type: t, param: null, code: status };
}

function usage(promptTokens, completionTokens, reasoningTokens = 0) {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: null,
    reasoning_tokens: reasoningTokens,
  };
}

function matchedStop(finishReason) {
  return finishReason === 'stop' ? EOS_ID : null;
}

/** @param {{reasoning,content,toolCalls,finishReason}} r post-processed output */
function chatCompletion(r, meta) {
  return {
    id: meta.id || newId(),
    object: 'chat.completion',
    created: meta.created || now(),
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: r.content == null ? '' : r.content,
          reasoning_content: r.reasoning || null,
          tool_calls: r.toolCalls && r.toolCalls.length ? r.toolCalls : null,
        },
        logprobs: null,
        finish_reason: r.finishReason,
        matched_stop: matchedStop(r.finishReason),
      },
    ],
    usage: usage(meta.promptTokens, meta.completionTokens, meta.reasoningTokens || 0),
    metadata: { weight_version: 'default' },
  };
}

function splitPieces(s, n) {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

/**
 * The SSE chunk objects for a streamed chat completion (without the final `[DONE]`).
 * nullKeys: send absent delta fields as null (older SGLang) instead of omitting them.
 */
function chatStreamChunks(r, meta, o = {}) {
  const id = meta.id || newId();
  const created = meta.created || now();
  const base = (delta, finish = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: meta.model,
    choices: [
      { index: 0, delta, logprobs: null, finish_reason: finish, matched_stop: finish ? matchedStop(finish) : null },
    ],
    usage: null,
  });
  const d = (fields) =>
    o.nullKeys ? { role: null, content: null, reasoning_content: null, tool_calls: null, ...fields } : fields;
  const chunks = [base(d({ role: 'assistant', content: '' }))];
  if (r.reasoning) for (const t of tokenize(r.reasoning)) chunks.push(base(d({ reasoning_content: t })));
  if (r.content) for (const t of tokenize(r.content)) chunks.push(base(d({ content: t })));
  for (const tc of r.toolCalls || []) {
    chunks.push(
      base(
        d({
          tool_calls: [
            { id: tc.id, index: tc.index, type: 'function', function: { name: tc.function.name, arguments: '' } },
          ],
        }),
      ),
    );
    for (const piece of splitPieces(tc.function.arguments, 8)) {
      const call = o.nullKeys
        ? { id: null, index: tc.index, type: 'function', function: { name: null, arguments: piece } }
        : { index: tc.index, type: 'function', function: { arguments: piece } };
      chunks.push(base(d({ tool_calls: [call] })));
    }
  }
  chunks.push(base(d({}), r.finishReason));
  if (meta.includeUsage)
    chunks.push(
      usageChunk(
        id,
        'chat.completion.chunk',
        created,
        meta.model,
        usage(meta.promptTokens, meta.completionTokens, meta.reasoningTokens || 0),
      ),
    );
  return chunks;
}

function completion(text, finishReason, meta) {
  return {
    id: meta.id || newId(),
    object: 'text_completion',
    created: meta.created || now(),
    model: meta.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, matched_stop: matchedStop(finishReason) }],
    usage: usage(meta.promptTokens, meta.completionTokens),
    metadata: { weight_version: 'default' },
  };
}

function completionStreamChunks(text, finishReason, meta) {
  const id = meta.id || newId();
  const created = meta.created || now();
  const toks = tokenize(text);
  const chunks = toks.map((t, i) => ({
    id,
    object: 'text_completion',
    created,
    model: meta.model,
    choices: [
      {
        index: 0,
        text: t,
        logprobs: null,
        finish_reason: i === toks.length - 1 ? finishReason : null,
        matched_stop: i === toks.length - 1 ? matchedStop(finishReason) : null,
      },
    ],
    usage: null,
  }));
  if (!chunks.length)
    chunks.push({
      id,
      object: 'text_completion',
      created,
      model: meta.model,
      choices: [
        { index: 0, text: '', logprobs: null, finish_reason: finishReason, matched_stop: matchedStop(finishReason) },
      ],
      usage: null,
    });
  if (meta.includeUsage)
    chunks.push(
      usageChunk(id, 'text_completion', created, meta.model, usage(meta.promptTokens, meta.completionTokens)),
    );
  return chunks;
}

/** The last chunk of a stream asked with stream_options.include_usage: no choice, the counts. */
function usageChunk(id, object, created, model, counts) {
  return { id, object, created, model, choices: [], usage: counts };
}

function generateResponse(text, finishReason, meta) {
  const ids = tokenize(text).map((t, i) => 1000 + ((t.length * 7919 + i * 104729) % 150000));
  return {
    text,
    output_ids: ids,
    meta_info: {
      id: meta.id || newId(),
      finish_reason:
        finishReason === 'length'
          ? { type: 'length', length: meta.completionTokens }
          : { type: 'stop', matched: EOS_ID },
      prompt_tokens: meta.promptTokens,
      weight_version: 'default',
      completion_tokens: meta.completionTokens,
      cached_tokens: 0,
      e2e_latency: meta.latency || 0,
    },
  };
}

function modelsList(name, created, maxLen = 262144) {
  return {
    object: 'list',
    data: [{ id: name, object: 'model', created, owned_by: 'sglang', root: name, parent: null, max_model_len: maxLen }],
  };
}

module.exports = {
  EOS_ID,
  newId,
  errorBody,
  chatCompletion,
  chatStreamChunks,
  completion,
  completionStreamChunks,
  generateResponse,
  modelsList,
  usage,
  usageChunk,
};
