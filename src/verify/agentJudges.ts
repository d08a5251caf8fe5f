/**
 * Pure judges of what an agent's turn needs beyond one answer: the turn after a tool result,
 * several calls in one answer, and the ids the parser gives the calls.
 */
import {
  THINK_MARKERS,
  argumentProblems,
  around,
  firstChoice,
  leaksReasoningBeforeEnd,
  rawToolTokenProblems,
  result,
  str,
  type Judgement,
  type ToolCall,
  type ToolDefinition,
} from './judges';

/** choices[0].finish_reason, or undefined when the body has no choice. */
export function finishReasonOf(resp: unknown): string | null | undefined {
  const c = firstChoice(resp);
  return typeof c === 'string' ? undefined : c.finishReason;
}

/** The tool calls of choices[0] (none for an error body). */
export function toolCallsOf(resp: unknown): readonly ToolCall[] {
  const c = firstChoice(resp);
  return typeof c === 'string' ? [] : (c.message.tool_calls ?? []);
}

function callText(call: ToolCall): string {
  return `${call.function?.name ?? '?'}(${call.function?.arguments ?? ''})${call.id ? ` id=${call.id}` : ''}`;
}

/**
 * The answer to the turn that carries a tool's result: text that uses the result (`mustMention`,
 * any of them, case-insensitive), no reasoning or markup left in content, no new call.
 */
export function judgeRoundTrip(resp: unknown, mustMention: readonly string[]): Judgement {
  const c = firstChoice(resp);
  if (typeof c === 'string') return result('fail', c);
  const m = c.message;
  const content = m.content ?? '';
  const reasoning = m.reasoning_content;
  const marker = THINK_MARKERS.find((k) => content.includes(k));
  if (marker) {
    return result(
      'fail',
      `reasoning leaked into content after the tool result (${marker} in content); reasoning_content ${reasoning ? `${reasoning.length} chars` : str(reasoning)} | content ${around(content, marker, 70)}`,
      leaksReasoningBeforeEnd(content, reasoning) ? 'reasoningInContent' : undefined,
    );
  }
  const raw = rawToolTokenProblems(m);
  if (raw.length > 0)
    return result('fail', `${raw.map((p) => p.label).join('; ')} | ${raw.map((p) => p.excerpt ?? '').join(' ')}`);
  const calls = m.tool_calls ?? [];
  if (calls.length > 0)
    return result(
      'fail',
      `called a tool again instead of answering: ${calls.map(callText).join(', ')}, finish_reason ${str(c.finishReason)}`,
    );
  if (content.trim() === '') {
    return result(
      'fail',
      `the follow-up turn came back empty: finish_reason ${str(c.finishReason)}, no content, no tool calls; reasoning_content ${reasoning ? around(reasoning, undefined, 60) : str(reasoning)}`,
    );
  }
  const lower = content.toLowerCase();
  if (!mustMention.some((w) => lower.includes(w.toLowerCase()))) {
    return result(
      'fail',
      `the answer does not use the tool's result (none of ${mustMention.map((w) => JSON.stringify(w)).join(', ')}): content ${around(content)}`,
    );
  }
  const thinking =
    reasoning && reasoning.trim() !== ''
      ? `reasoning_content (${reasoning.length} chars) separated`
      : 'no reasoning on this turn';
  return result('pass', `${thinking}; content: ${around(content, undefined, 80)}`);
}

/** The reasoning of choices[0] (reasoning_content, else vLLM's reasoning), '' when none. */
export function reasoningTextOf(resp: unknown): string {
  const c = firstChoice(resp);
  return typeof c === 'string' ? '' : (c.message.reasoning_content ?? '');
}

/** The round trip of a history that carried the model's reasoning back: the same verdict, said so. */
export function judgeCarriedReasoning(resp: unknown, mustMention: readonly string[]): Judgement {
  const j = judgeRoundTrip(resp, mustMention);
  return j.status === 'pass'
    ? result('pass', `history with the reasoning accepted; ${j.evidence}`)
    : result(j.status, j.evidence, j.fault);
}

/** One answer with a call per city, each with its own id and schema-valid arguments naming its city. */
export function judgeParallelCalls(resp: unknown, tool: ToolDefinition, cities: readonly string[]): Judgement {
  const c = firstChoice(resp);
  if (typeof c === 'string') return result('fail', c);
  const calls = c.message.tool_calls ?? [];
  const raw = rawToolTokenProblems(c.message);
  const shown = calls.map(callText).join(', ');
  const problems: string[] = raw.map((p) => `${p.label} ${p.excerpt ?? ''}`.trim());
  if (calls.length < cities.length) {
    problems.unshift(
      `${calls.length} tool call${calls.length === 1 ? '' : 's'} for ${cities.length} cities (${cities.join(', ')}), finish_reason ${str(c.finishReason)}`,
    );
  }
  const markupInId = calls.find((t) => (t.id ?? '').includes('<|'));
  if (markupInId) problems.push(`a call swallowed into the id of another: id ${JSON.stringify(markupInId.id)}`);
  const ids = calls.map((t) => t.id ?? '');
  if (ids.some((id) => id === '')) problems.push('a call without an id');
  else if (new Set(ids).size !== ids.length) problems.push(`two calls share an id: ${JSON.stringify(ids)}`);
  for (const [i, call] of calls.entries()) {
    if (call.function?.name !== tool.function.name)
      problems.push(`tool_calls[${i}] calls ${str(call.function?.name)}, expected "${tool.function.name}"`);
    for (const p of argumentProblems(call.function?.arguments, tool)) problems.push(`tool_calls[${i}]: ${p}`);
  }
  const argsText = calls.map((t) => (t.function?.arguments ?? '').toLowerCase()).join(' ');
  const missing = cities.filter((city) => !argsText.includes(city.toLowerCase()));
  if (calls.length > 0 && missing.length > 0) problems.push(`no call for ${missing.join(', ')}`);
  if (calls.length >= cities.length && c.finishReason !== 'tool_calls')
    problems.push(`finish_reason ${str(c.finishReason)}, expected "tool_calls"`);
  if (problems.length === 0) return result('pass', shown);
  return result('fail', `${problems.join('; ')}${shown ? ` | calls: ${shown}` : ''}`);
}

/** The id format a tool-call parser gives its calls; undefined for parsers with no known format. */
export function idFormatOf(toolCallParser: string): { readonly pattern: RegExp; readonly text: string } | undefined {
  // Kimi's chat template renders the id into the next prompt; the model was trained on this shape.
  if (toolCallParser === 'kimi_k2') return { pattern: /^functions\.[\w.-]+:\d+$/, text: 'functions.NAME:IDX' };
  return undefined;
}

/** The calls of the answers that were checked, by the check they came from. */
export interface IdSample {
  readonly from: string;
  readonly calls: readonly ToolCall[];
}

/** Every call has an id of the parser's format, unique within its answer, naming the called function. */
export function judgeToolIds(samples: readonly IdSample[], toolCallParser: string): Judgement {
  const withCalls = samples.filter((s) => s.calls.length > 0);
  if (withCalls.length === 0) return result('skipped', 'no answer had a tool call to read the ids of');
  const format = idFormatOf(toolCallParser);
  const problems: string[] = [];
  const seen: string[] = [];
  for (const s of withCalls) {
    const ids = s.calls.map((t) => t.id ?? '');
    seen.push(`${s.from}: ${ids.map((id) => id || '(none)').join(', ')}`);
    if (new Set(ids).size !== ids.length) problems.push(`${s.from}: ids repeat ${JSON.stringify(ids)}`);
    for (const [i, call] of s.calls.entries()) {
      const id = call.id ?? '';
      if (id === '') problems.push(`${s.from}: tool_calls[${i}] has no id`);
      else if (format && !format.pattern.test(id))
        problems.push(`${s.from}: id ${JSON.stringify(id)} is not ${format.text}`);
      else if (format && call.function?.name && !id.startsWith(`functions.${call.function.name}:`))
        problems.push(`${s.from}: id ${JSON.stringify(id)} names another function than ${call.function.name}`);
    }
  }
  if (problems.length === 0) return result('pass', `${format ? `${format.text}: ` : ''}${seen.join('; ')}`);
  return result('fail', problems.join('; '));
}
