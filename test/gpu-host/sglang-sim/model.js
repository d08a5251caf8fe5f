'use strict';
// The deterministic "model": what Kimi K2.6 would generate (raw text, before any parser), and a crude tokenizer.
const { K2 } = require('./parsers');
const { currentChainStart, reasoningText } = require('./requestLog');

/** split text into "tokens": special tokens whole, otherwise a word with its leading space */
function tokenize(text) {
  return text.match(/<\|[^|]*\|>|<\/?think>|◁\/?think▷|\s*[^\s<◁]+|\s+|[<◁]/g) || [];
}

function truncateTokens(text, max) {
  const toks = tokenize(text);
  if (max == null || toks.length <= max) return { text, tokens: toks.length, truncated: false };
  return { text: toks.slice(0, max).join(''), tokens: max, truncated: true };
}

function contentText(c) {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => (p && typeof p.text === 'string' ? p.text : '')).join(' ');
  return '';
}

const SAMPLE_STRINGS = {
  city: 'Paris',
  location: 'Paris, France',
  country: 'France',
  query: 'weather in Paris',
  q: 'weather in Paris',
  name: 'Alice',
  unit: 'celsius',
  units: 'metric',
  date: '2025-01-01',
  timezone: 'Europe/Paris',
  language: 'en',
  url: 'https://example.com',
  path: '/tmp/example.txt',
  email: 'alice@example.com',
  text: 'hello',
};

/** a value satisfying a JSON schema, using required properties only */
function sampleForSchema(schema, key) {
  if (!schema || typeof schema !== 'object') return key && SAMPLE_STRINGS[key] ? SAMPLE_STRINGS[key] : 'example';
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') || type[0];
  if (!type && (schema.anyOf || schema.oneOf)) return sampleForSchema((schema.anyOf || schema.oneOf)[0], key);
  if (!type && schema.properties) type = 'object';
  switch (type) {
    case 'integer':
      return schema.minimum != null ? Math.ceil(schema.minimum) : 1;
    case 'number':
      return schema.minimum != null ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const n = schema.minItems || 0;
      return Array.from({ length: n }, () => sampleForSchema(schema.items, key));
    }
    case 'object': {
      const out = {};
      for (const k of schema.required || []) out[k] = sampleForSchema((schema.properties || {})[k], k);
      return out;
    }
    default: {
      const k = (key || '').toLowerCase();
      if (SAMPLE_STRINGS[k]) return SAMPLE_STRINGS[k];
      if (/city|town|location|place/.test(k)) return 'Paris';
      return 'example';
    }
  }
}

/** count tool calls already in the conversation (for kimi_k2 ids functions.NAME:N) */
function historyToolCalls(messages) {
  let n = 0;
  for (const m of messages || [])
    if (m && m.role === 'assistant' && Array.isArray(m.tool_calls)) n += m.tool_calls.length;
  return n;
}

/**
 * Raw output for a chat request.
 * @param {object} req the request body
 * @param {object} fault sim.json fault ({toolCallInReasoning, missingThinkEnd})
 * @returns {string}
 */
function chatRawOutput(req, fault = {}) {
  const messages = Array.isArray(req.messages) ? req.messages : [];
  const last = messages[messages.length - 1] || {};
  const lastUser = [...messages].reverse().find((m) => m && m.role === 'user');
  const question = contentText(lastUser && lastUser.content)
    .trim()
    .replace(/\s+/g, ' ')
    .slice(0, 80);
  const kwargs = req.chat_template_kwargs || {};
  const thinking = kwargs.thinking !== false;
  const tools = Array.isArray(req.tools) ? req.tools.filter((t) => t && t.function && t.function.name) : [];
  let choice = req.tool_choice == null ? 'auto' : req.tool_choice;
  let tool = null;
  if (tools.length && choice !== 'none' && last.role !== 'tool') {
    if (choice && typeof choice === 'object' && choice.function)
      tool = tools.find((t) => t.function.name === choice.function.name) || null;
    else tool = tools[0];
  }
  let reasoning;
  let answer;
  if (tool) {
    reasoning = `The user asks: "${question}". I should call the ${tool.function.name} tool to answer this.`;
    const idx = historyToolCalls(messages);
    const calls = toolArguments(tool, question).map(
      (args, i) =>
        `${K2.callBegin}functions.${tool.function.name}:${idx + i}${K2.argBegin}${JSON.stringify(args)}${K2.callEnd}`,
    );
    answer = `${K2.sectionBegin}${calls.join('')}${K2.sectionEnd}`;
  } else if (last.role === 'tool' && !k2IdsInHistory(messages)) {
    // Kimi K2.6 was trained on functions.NAME:IDX ids in its history: with others it ends the turn at once (Kimi-K2#128).
    reasoning = 'The tool returned a result.';
    answer = '';
  } else if (last.role === 'tool' && thinking && fault.needsReasoningBack && chainLacksReasoning(messages)) {
    // A thinking model that does not get its own reasoning back for the tool chain in progress
    // loses the thread (interleaved thinking, llxprt-code#679): here it ignores the tool's result.
    reasoning = 'There is a tool result, but not why I called the tool. I will answer without it.';
    answer = 'I could not find that information.';
  } else if (last.role === 'tool') {
    const result = contentText(last.content).replace(/\s+/g, ' ').slice(0, 120);
    reasoning = 'The tool returned a result. I will summarise it for the user.';
    answer = `According to the tool: ${result}`;
  } else {
    reasoning = `The user says: "${question}". Let me think about how to reply briefly and helpfully.`;
    answer = /capital.*france|france.*capital/i.test(question)
      ? 'The capital of France is Paris.'
      : 'Hello! I am Kimi, a simulated assistant. How can I help you today?';
  }
  if (!thinking) return answer;
  if (fault.longReasoningTokens > 0) reasoning = padReasoning(reasoning, fault.longReasoningTokens);
  if (tool && fault.toolCallInReasoning) return `${reasoning}${answer}</think>`;
  if (tool && fault.missingThinkEnd) return `${reasoning}${answer}`;
  return `${reasoning}</think>${answer}`;
}

const CITIES = ['Paris', 'Tokyo', 'London', 'Berlin', 'New York', 'Madrid', 'Rome'];

/** One argument object per call: a call per city named in the question when the tool takes a city. */
function toolArguments(tool, question) {
  const schema = tool.function.parameters || { type: 'object' };
  const base = sampleForSchema(schema);
  const cityKey = Object.keys((schema && schema.properties) || {}).find((k) => /city|location/i.test(k));
  const named = CITIES.filter((c) => new RegExp(`\\b${c}\\b`, 'i').test(question));
  if (!cityKey || named.length < 2) return [base];
  return named.map((c) => ({ ...base, [cityKey]: c }));
}

/** An assistant message of the tool chain in progress (what Kimi's template renders with reasoning) lacks it. */
function chainLacksReasoning(messages) {
  const start = currentChainStart(messages);
  return messages
    .slice(start)
    .some(
      (m) => m && m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length && !reasoningText(m),
    );
}

function k2IdsInHistory(messages) {
  const ids = [];
  for (const m of messages)
    if (m && m.role === 'assistant' && Array.isArray(m.tool_calls)) for (const t of m.tool_calls) ids.push(t && t.id);
  return ids.every((id) => typeof id === 'string' && /^functions\.[\w.-]+:\d+$/.test(id));
}

/** reasoning grown to at least `tokens` tokens (the model that thinks at length) */
function padReasoning(reasoning, tokens) {
  const more = ' Let me double-check that.';
  const have = tokenize(reasoning).length;
  const per = tokenize(more).length;
  return reasoning + more.repeat(Math.max(0, Math.ceil((tokens - have) / per)));
}

/** raw continuation for a plain-text prompt (/generate, /v1/completions) */
function completionRawOutput(prompt) {
  const p = String(prompt || '');
  if (/capital city of France is\s*$/i.test(p) || /capital of france/i.test(p)) {
    return ' Paris. It is the largest city in France and is known for the Eiffel Tower and the Louvre museum.';
  }
  return ' I am a simulated language model served by SGLang. This text is generated deterministically for testing purposes.';
}

function promptTokens(req) {
  if (Array.isArray(req.messages))
    return 8 + req.messages.reduce((n, m) => n + tokenize(contentText(m && m.content)).length + 4, 0);
  const p = req.prompt != null ? req.prompt : req.text;
  return Math.max(1, tokenize(Array.isArray(p) ? p.join(' ') : String(p || '')).length);
}

module.exports = {
  tokenize,
  truncateTokens,
  sampleForSchema,
  historyToolCalls,
  chatRawOutput,
  completionRawOutput,
  promptTokens,
  contentText,
};
