'use strict';
// Post-processing of raw model output as SGLang does it (parser/reasoning_parser.py,
// function_call/kimik2_detector.py), non-streaming semantics.

const REASONING_MARKERS = {
  kimi_k2: { start: '<think>', end: '</think>', force: true }, // DeepSeekR1Detector
  'deepseek-r1': { start: '<think>', end: '</think>', force: true },
  step3: { start: '<think>', end: '</think>', force: true },
  kimi: { start: '◁think▷', end: '◁/think▷', force: false }, // KimiDetector
  qwen3: { start: '<think>', end: '</think>', force: false },
  'qwen3-thinking': { start: '<think>', end: '</think>', force: true },
  'deepseek-v3': { start: '<think>', end: '</think>', force: false },
  glm45: { start: '<think>', end: '</think>', force: false },
  minimax: { start: '<think>', end: '</think>', force: false },
};

/**
 * BaseReasoningFormatDetector.detect_and_parse.
 * @param {string} text raw output
 * @param {string|null} parser --reasoning-parser value
 * @param {boolean} thinking whether the request leaves thinking on (chat_template_kwargs.thinking !== false)
 * @returns {{reasoning: string|null, content: string}}
 */
function parseReasoning(text, parser, thinking = true) {
  const m = parser && REASONING_MARKERS[parser];
  if (!m) return { reasoning: null, content: text };
  const forced = m.force && thinking; // thinking off in the request turns forced reasoning off
  const inReasoning = forced || text.includes(m.start);
  if (!inReasoning) return { reasoning: null, content: text };
  const processed = text.replace(m.start, '').trim();
  if (!processed.includes(m.end)) {
    // assume reasoning was truncated before the end token
    return { reasoning: processed || null, content: '' };
  }
  const i = processed.indexOf(m.end);
  const reasoning = processed.slice(0, i);
  const content = processed.slice(i + m.end.length).trim();
  return { reasoning: reasoning || null, content };
}

const K2 = {
  sectionBegin: '<|tool_calls_section_begin|>',
  sectionEnd: '<|tool_calls_section_end|>',
  callBegin: '<|tool_call_begin|>',
  argBegin: '<|tool_call_argument_begin|>',
  callEnd: '<|tool_call_end|>',
};
const K2_CALL_RE =
  /<\|tool_call_begin\|>\s*([\w.\-]+:\d+)\s*<\|tool_call_argument_begin\|>\s*(\{.*?\})\s*<\|tool_call_end\|>/gs;

/**
 * KimiK2Detector.detect_and_parse.
 * @returns {{content: string, calls: {name:string, arguments:string, index:number, rawId:string}[]}}
 */
function parseKimiK2ToolCalls(text) {
  const at = text.indexOf(K2.sectionBegin);
  if (at < 0) return { content: text, calls: [] };
  const calls = [];
  let m;
  K2_CALL_RE.lastIndex = 0;
  while ((m = K2_CALL_RE.exec(text.slice(at))) !== null) {
    const rawId = m[1];
    const name = rawId.split('.').slice(1).join('.').split(':')[0] || rawId.split(':')[0];
    calls.push({ name, arguments: m[2], index: calls.length, rawId });
  }
  return { content: text.slice(0, at).trim(), calls };
}

/**
 * Full chat post-processing as serving_chat does it: reasoning first, then tool calls on the rest.
 * @param {string} raw
 * @param {{reasoningParser?:string|null, toolCallParser?:string|null, hasTools:boolean, thinking:boolean,
 *          separateReasoning?:boolean, historyToolCalls?:number, finishReason:string}} o
 */
function postProcessChat(raw, o) {
  let reasoning = null;
  let content = raw;
  if (o.reasoningParser && o.separateReasoning !== false) {
    const r = parseReasoning(raw, o.reasoningParser, o.thinking);
    reasoning = r.reasoning;
    content = r.content;
  }
  let toolCalls = null;
  let finishReason = o.finishReason;
  if (o.toolCallParser === 'kimi_k2' && o.hasTools && content.includes(K2.sectionBegin)) {
    const t = parseKimiK2ToolCalls(content);
    content = t.content;
    if (t.calls.length) {
      const base = o.historyToolCalls || 0;
      toolCalls = t.calls.map((c) => ({
        id: `functions.${c.name}:${base + c.index}`,
        index: c.index,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
      if (finishReason === 'stop') finishReason = 'tool_calls';
    }
  }
  return { reasoning, content, toolCalls, finishReason };
}

module.exports = { REASONING_MARKERS, K2, parseReasoning, parseKimiK2ToolCalls, postProcessChat };
