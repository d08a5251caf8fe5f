'use strict';
// The chat request log the tests read: each /v1/chat/completions body as one JSON line in
// $KIMI_SIM_ROOT/chat-requests.jsonl, with a summary of the assistant messages that carry
// tool_calls (their ids and how much reasoning came back with them). Written when a state dir
// is set; capped so a long benchmark cannot fill the disk.
const fs = require('fs');
const path = require('path');

const FILE = 'chat-requests.jsonl';
const MAX_BYTES = 64 * 1024 * 1024;

function reasoningText(m) {
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') return m.reasoning_content;
  return typeof m.reasoning === 'string' ? m.reasoning : '';
}

/**
 * The messages Kimi K2's chat template renders with their reasoning: those after the last
 * assistant message without tool_calls (the tool chain in progress); earlier ones get an empty
 * <think></think>.
 */
function currentChainStart(messages) {
  let last = -1;
  messages.forEach((m, i) => {
    if (m && m.role === 'assistant' && !(Array.isArray(m.tool_calls) && m.tool_calls.length > 0)) last = i;
  });
  return last + 1;
}

/** [{index, ids, reasoningChars, reasoningContentChars, reasoningFieldChars, inCurrentChain}] */
function toolCallMessages(messages) {
  const list = Array.isArray(messages) ? messages : [];
  const start = currentChainStart(list);
  const out = [];
  list.forEach((m, index) => {
    if (!m || m.role !== 'assistant' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) return;
    out.push({
      index,
      ids: m.tool_calls.map((t) => t && t.id),
      reasoningChars: reasoningText(m).length,
      reasoningContentChars: typeof m.reasoning_content === 'string' ? m.reasoning_content.length : 0,
      reasoningFieldChars: typeof m.reasoning === 'string' ? m.reasoning.length : 0,
      inCurrentChain: index >= start,
    });
  });
  return out;
}

function logChatRequest(root, body) {
  if (!root) return;
  const file = path.join(root, FILE);
  try {
    if (fs.statSync(file).size > MAX_BYTES) return;
  } catch {
    /* no log yet */
  }
  try {
    const entry = { at: Date.now(), toolCallMessages: toolCallMessages(body && body.messages), body };
    fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
  } catch {
    /* a full disk or a read-only state dir: the log is for tests, the answer still goes out */
  }
}

module.exports = { FILE, logChatRequest, toolCallMessages, currentChainStart, reasoningText };
