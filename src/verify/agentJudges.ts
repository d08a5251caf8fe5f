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
import type { Fact } from '../present/words/verifyFindings';

/** choices[0].finish_reason, or undefined when the body has no choice. */
export function finishReasonOf(resp: unknown): string | null | undefined {
  const c = firstChoice(resp);
  return 'kind' in c ? undefined : c.finishReason;
}

/** The tool calls of choices[0] (none for an error body). */
export function toolCallsOf(resp: unknown): readonly ToolCall[] {
  const c = firstChoice(resp);
  return 'kind' in c ? [] : (c.message.tool_calls ?? []);
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
  if ('kind' in c) return result('fail', c);
  const m = c.message;
  const content = m.content ?? '';
  const reasoning = m.reasoning_content;
  const marker = THINK_MARKERS.find((k) => content.includes(k));
  if (marker) {
    return result(
      'fail',
      [
        { kind: 'leakedAfterResult', marker, reasoning: reasoning ? reasoning.length : str(reasoning) },
        { kind: 'excerpt', field: 'content', quote: around(content, marker, 70) },
      ],
      leaksReasoningBeforeEnd(content, reasoning) ? 'reasoningInContent' : undefined,
    );
  }
  const raw = rawToolTokenProblems(m);
  if (raw.length > 0)
    return result('fail', [
      ...raw.map((p) => p.fact),
      ...raw.map((p) => p.excerpt).filter((e): e is Fact => e !== undefined),
    ]);
  const calls = m.tool_calls ?? [];
  if (calls.length > 0)
    return result('fail', {
      kind: 'calledAgain',
      calls: calls.map(callText).join(', '),
      finishReason: str(c.finishReason),
    });
  if (content.trim() === '') {
    return result('fail', {
      kind: 'emptyFollowUp',
      finishReason: str(c.finishReason),
      reasoning: reasoning ? around(reasoning, undefined, 60) : str(reasoning),
    });
  }
  const lower = content.toLowerCase();
  if (!mustMention.some((w) => lower.includes(w.toLowerCase()))) {
    return result('fail', {
      kind: 'resultUnused',
      words: mustMention.map((w) => JSON.stringify(w)).join(', '),
      excerpt: around(content),
    });
  }
  return result('pass', {
    kind: 'answerUsesResult',
    ...(reasoning && reasoning.trim() !== '' ? { reasoningChars: reasoning.length } : {}),
    excerpt: around(content, undefined, 80),
  });
}

/** The reasoning of choices[0] (reasoning_content, else vLLM's reasoning), '' when none. */
export function reasoningTextOf(resp: unknown): string {
  const c = firstChoice(resp);
  return 'kind' in c ? '' : (c.message.reasoning_content ?? '');
}

/** The round trip of a history that carried the model's reasoning back: the same verdict, said so. */
export function judgeCarriedReasoning(resp: unknown, mustMention: readonly string[]): Judgement {
  const j = judgeRoundTrip(resp, mustMention);
  return j.status === 'pass' ? result('pass', [{ kind: 'historyAccepted' }, ...j.facts]) : j;
}

/** One answer with a call per city, each with its own id and schema-valid arguments naming its city. */
export function judgeParallelCalls(resp: unknown, tool: ToolDefinition, cities: readonly string[]): Judgement {
  const c = firstChoice(resp);
  if ('kind' in c) return result('fail', c);
  const calls = c.message.tool_calls ?? [];
  const raw = rawToolTokenProblems(c.message);
  const shown = calls.map(callText).join(', ');
  const problems: Fact[] = raw.flatMap((p) => (p.excerpt ? [p.fact, p.excerpt] : [p.fact]));
  if (calls.length < cities.length) {
    problems.unshift({ kind: 'tooFewCalls', calls: calls.length, cities, finishReason: str(c.finishReason) });
  }
  const markupInId = calls.find((t) => (t.id ?? '').includes('<|'));
  if (markupInId) problems.push({ kind: 'idSwallowed', id: JSON.stringify(markupInId.id) });
  const ids = calls.map((t) => t.id ?? '');
  if (ids.some((id) => id === '')) problems.push({ kind: 'callWithoutId' });
  else if (new Set(ids).size !== ids.length) problems.push({ kind: 'idShared', ids: JSON.stringify(ids) });
  for (const [i, call] of calls.entries()) {
    if (call.function?.name !== tool.function.name)
      problems.push({ kind: 'callsOther', index: i, name: str(call.function?.name), expected: tool.function.name });
    for (const fault of argumentProblems(call.function?.arguments, tool))
      problems.push({ kind: 'badArguments', index: i, fault });
  }
  const argsText = calls.map((t) => (t.function?.arguments ?? '').toLowerCase()).join(' ');
  const missing = cities.filter((city) => !argsText.includes(city.toLowerCase()));
  if (calls.length > 0 && missing.length > 0) problems.push({ kind: 'noCallFor', cities: missing });
  if (calls.length >= cities.length && c.finishReason !== 'tool_calls')
    problems.push({ kind: 'finishReasonNot', finishReason: str(c.finishReason), expected: 'tool_calls' });
  if (problems.length === 0) return result('pass', { kind: 'raw', text: shown });
  return result('fail', [...problems, ...(shown ? [{ kind: 'calls', text: shown } as const] : [])]);
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
  if (withCalls.length === 0) return result('skipped', { kind: 'noCallsForIds' });
  const format = idFormatOf(toolCallParser);
  const problems: Fact[] = [];
  const seen: { from: string; ids: string[] }[] = [];
  for (const s of withCalls) {
    const ids = s.calls.map((t) => t.id ?? '');
    seen.push({ from: s.from, ids });
    if (new Set(ids).size !== ids.length) problems.push({ kind: 'idsRepeat', from: s.from, ids: JSON.stringify(ids) });
    for (const [i, call] of s.calls.entries()) {
      const id = call.id ?? '';
      if (id === '') problems.push({ kind: 'idMissing', from: s.from, index: i });
      else if (format && !format.pattern.test(id))
        problems.push({ kind: 'idNotFormat', from: s.from, id: JSON.stringify(id), format: format.text });
      else if (format && call.function?.name && !id.startsWith(`functions.${call.function.name}:`))
        problems.push({ kind: 'idOtherFunction', from: s.from, id: JSON.stringify(id), name: call.function.name });
    }
  }
  if (problems.length === 0)
    return result('pass', { kind: 'idsSeen', ...(format ? { format: format.text } : {}), seen });
  return result('fail', problems);
}
