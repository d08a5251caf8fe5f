/**
 * Pure judges of SGLang responses (../shared/reference/sglang-server.md sections 4–6).
 * Each returns pass/fail/skipped with the facts that show it (present/words/verifyFindings.ts), quoting the relevant
 * part of the response; present/words/findingWords.ts words them.
 */
import { engineById, type EngineId } from '../engine/engine';
import Ajv from 'ajv';
import { getFlag } from '../engine/execStart';
import type { ArgumentFault, Fact } from '../present/words/verifyFindings';
import { nestedTooDeeply } from '../present/words/findingWords';

/**
 * 'inconclusive': the answer was cut by max_tokens before it could show whether the parser works
 * (a budget problem, not a parser one); 'skipped': the request got no answer (timeout, 503).
 */
export type CheckStatus = 'pass' | 'fail' | 'inconclusive' | 'skipped';

/**
 * A fault the chat model knows how to repair on the way (docs/chat-model.md):
 * 'reasoningInContent' the reasoning stays in content, ended by </think> (or ◁/think▷).
 */
export type KnownFault = 'reasoningInContent';

export interface Judgement {
  readonly status: CheckStatus;
  /** What shows it, in the order it is read. */
  readonly facts: readonly Fact[];
  readonly fault?: KnownFault;
}

export interface ExpectedParsers {
  readonly reasoningParser: string;
  readonly toolCallParser: string;
  /** The server the unit runs (from its ExecStart); SGLang when unknown. */
  readonly engine?: EngineId;
}

/** An OpenAI tool as sent in the request. */
export interface ToolDefinition {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description?: string; readonly parameters: object };
}

export interface ToolCall {
  id?: string;
  index?: number;
  type?: string;
  function: { name?: string; arguments?: string };
}

export interface ChatMessage {
  role?: string;
  content: string | null;
  reasoning_content: string | null;
  tool_calls: ToolCall[] | null;
}

/** The part of a chat completion the judges read; assembleStream produces the same. */
export interface ChatCompletion {
  choices: { index: number; finish_reason: string | null; message: ChatMessage }[];
  model?: string;
}

export const EVIDENCE_MAX = 200;
export const THINK_MARKERS = ['<think>', '</think>', '◁think▷', '◁/think▷'];
const TOOL_TOKEN = '<|tool_call';
const SECTION_END = '<|tool_calls_section_end|>';

export function truncate(s: string, max = EVIDENCE_MAX): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

/** Quoted excerpt centred on `needle` (or the start), for evidence. */
export function around(text: string, needle?: string, width = 90): string {
  const at = needle === undefined ? -1 : text.indexOf(needle);
  if (at < 0) return JSON.stringify(text.length > width ? `${text.slice(0, width)}…` : text);
  const start = Math.max(0, at - Math.floor(width / 2));
  const end = Math.min(text.length, at + needle!.length + Math.floor(width / 2));
  return JSON.stringify(`${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`);
}

/**
 * JSON.stringify for evidence, that never throws: a body nested 100k levels deep overflows the
 * stack of JSON.stringify and of String() on arrays.
 */
export function showJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return nestedTooDeeply();
  }
}

/** A value of a parsed body as text: strings as they are, anything else as JSON. */
export function text(v: unknown): string {
  return typeof v === 'string' ? v : showJson(v);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function result(status: CheckStatus, facts: Fact | readonly Fact[], fault?: KnownFault): Judgement {
  return { status, facts: 'kind' in facts ? [facts] : facts, ...(fault ? { fault } : {}) };
}

/** Content that holds the reasoning ended by a closing think tag (and no reasoning field). */
export function leaksReasoningBeforeEnd(content: string, reasoning: string | null): boolean {
  return (!reasoning || reasoning.trim() === '') && (content.includes('</think>') || content.includes('◁/think▷'));
}

/** choices[0] with its message, or the reason there is none (an error body, a bad shape). */
export function firstChoice(resp: unknown): { finishReason: string | null; message: ChatMessage } | Fact {
  if (isRecord(resp) && resp.object === 'error')
    return { kind: 'errorBody', code: text(resp.code ?? ''), message: text(resp.message ?? '') };
  if (isRecord(resp) && isRecord(resp.error))
    return { kind: 'errorBody', message: text(resp.error.message ?? resp.error) };
  const choice = isRecord(resp) && Array.isArray(resp.choices) ? resp.choices[0] : undefined;
  if (!isRecord(choice) || !isRecord(choice.message)) return { kind: 'noMessage', body: showJson(resp) };
  const m = choice.message;
  return {
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    message: {
      role: typeof m.role === 'string' ? m.role : undefined,
      content: typeof m.content === 'string' ? m.content : null,
      reasoning_content: reasoningOf(m),
      tool_calls: Array.isArray(m.tool_calls) ? (m.tool_calls.filter(isRecord) as unknown as ToolCall[]) : null,
    },
  };
}

/**
 * The reasoning text: SGLang and older vLLM send `reasoning_content`; vLLM after PR #27752
 * (Nov 2025) sends both; vLLM after PR #33402 (Jan 2026) only `reasoning`.
 */
export function reasoningOf(m: Record<string, unknown>): string | null {
  if (typeof m.reasoning_content === 'string') return m.reasoning_content;
  return typeof m.reasoning === 'string' ? m.reasoning : null;
}

export function str(v: unknown): string {
  return v === undefined ? 'absent' : showJson(v);
}

/** /server_info (or /get_server_info) carries the parser flags of the running process. */
export function judgeServerInfo(info: unknown, expected: ExpectedParsers): Judgement {
  if (!isRecord(info)) return result('fail', { kind: 'notJsonObject', body: showJson(info) });
  // Some versions nest the args; flat is the documented shape.
  const args = isRecord(info.server_args) ? info.server_args : info;
  const reasoning = args.reasoning_parser;
  const tool = args.tool_call_parser;
  const seen: Fact = { kind: 'serverArgs', reasoning: str(reasoning), tool: str(tool) };
  const wrong: Fact[] = [];
  if (reasoning !== expected.reasoningParser)
    wrong.push({ kind: 'flagShould', flag: 'reasoning_parser', expected: expected.reasoningParser });
  if (tool !== expected.toolCallParser)
    wrong.push({ kind: 'flagShould', flag: 'tool_call_parser', expected: expected.toolCallParser });
  return result(wrong.length === 0 ? 'pass' : 'fail', [seen, ...wrong]);
}

/**
 * vLLM has no /server_info (only with VLLM_SERVER_DEV_MODE=1, and then as text): the flags of the
 * running process are read from its command line (/proc/MAINPID/cmdline), which the unit file may
 * no longer match. vLLM also needs --enable-auto-tool-choice for tool calls with tool_choice "auto".
 */
export function judgeRunningFlags(argv: readonly string[] | undefined, expected: ExpectedParsers): Judgement {
  if (!argv || argv.length === 0) return result('skipped', { kind: 'noRunningProcess' });
  if (!argv.some((a) => a.startsWith('--')))
    return result('skipped', { kind: 'renamedCommandLine', argv: JSON.stringify(argv.join(' ')) });
  const reasoning = getFlag(argv, '--reasoning-parser');
  const tool = getFlag(argv, '--tool-call-parser');
  // The switches the engine's tool calls need besides the parser flags (vLLM's --enable-auto-tool-choice).
  const switches = (expected.engine ? engineById(expected.engine).parsers.switches : []).map((name) => ({
    name,
    set: argv.some((a) => a === name || a.startsWith(`${name}=`)),
  }));
  const seen: Fact = {
    kind: 'runningFlags',
    ...(reasoning !== undefined ? { reasoning } : {}),
    ...(tool !== undefined ? { tool } : {}),
    switches,
  };
  const wrong: Fact[] = [];
  if (reasoning !== expected.reasoningParser)
    wrong.push({ kind: 'flagShould', flag: '--reasoning-parser', expected: expected.reasoningParser });
  if (tool !== expected.toolCallParser)
    wrong.push({ kind: 'flagShould', flag: '--tool-call-parser', expected: expected.toolCallParser });
  for (const missing of switches.filter((s) => !s.set)) wrong.push({ kind: 'switchNeeded', name: missing.name });
  return result(wrong.length === 0 ? 'pass' : 'fail', [seen, ...wrong]);
}

/** Reasoning is separated: non-empty reasoning_content, no think markers left in content. */
export function judgeReasoning(resp: unknown): Judgement {
  const c = firstChoice(resp);
  if ('kind' in c) return result('fail', c);
  const content = c.message.content ?? '';
  const reasoning = c.message.reasoning_content;
  const marker = THINK_MARKERS.find((m) => content.includes(m));
  if (marker) {
    return result(
      'fail',
      { kind: 'markersInContent', hasReasoning: !!reasoning, marker, excerpt: around(content, marker) },
      leaksReasoningBeforeEnd(content, reasoning) ? 'reasoningInContent' : undefined,
    );
  }
  if (!reasoning || reasoning.trim() === '') {
    return result('fail', { kind: 'reasoningAndContent', reasoning: str(reasoning), content: around(content) });
  }
  const inner = ['</think>', '◁/think▷'].find((m) => reasoning.includes(m));
  if (inner) return result('fail', { kind: 'endInReasoning', marker: inner, excerpt: around(reasoning, inner) });
  // Reasoning alone does not show the parser found where it ends.
  if (content.trim() === '')
    return result('fail', {
      kind: 'noAnswerAfterReasoning',
      finishReason: str(c.finishReason),
      chars: reasoning.length,
      excerpt: around(reasoning, undefined, 60),
    });
  return result('pass', {
    kind: 'reasoningSeparated',
    chars: reasoning.length,
    reasoning: around(reasoning),
    content: around(content),
  });
}

/** With chat_template_kwargs {"thinking": false}: no reasoning at all. */
export function judgeThinkingOff(resp: unknown): Judgement {
  const c = firstChoice(resp);
  if ('kind' in c) return result('fail', c);
  const content = c.message.content ?? '';
  const reasoning = c.message.reasoning_content;
  if (reasoning && reasoning.trim() !== '')
    return result('fail', { kind: 'reasoningStillSet', chars: reasoning.length, excerpt: around(reasoning) });
  const marker = THINK_MARKERS.find((m) => content.includes(m));
  if (marker) return result('fail', { kind: 'thinkingStillOn', marker, excerpt: around(content, marker) });
  if (content.trim() === '')
    return result('fail', { kind: 'noAnswer', reasoning: str(reasoning), finishReason: str(c.finishReason) });
  return result('pass', { kind: 'reasoningAndContent', reasoning: str(reasoning), content: around(content) });
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new WeakMap<object, ReturnType<typeof ajv.compile>>();

function validatorFor(schema: object): ReturnType<typeof ajv.compile> {
  let v = validators.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(schema, v);
  }
  return v;
}

export interface Problem {
  readonly fact: Fact;
  /** Quoted part of the response that shows it. */
  readonly excerpt?: Fact;
}

/** Names the known ways raw tool-call tokens end up in the text instead of in tool_calls. */
export function rawToolTokenProblems(m: ChatMessage): Problem[] {
  const problems: Problem[] = [];
  const reasoning = m.reasoning_content ?? '';
  const content = m.content ?? '';
  if (reasoning.includes(TOOL_TOKEN)) {
    const end = reasoning.lastIndexOf(SECTION_END);
    const afterSection = end >= 0 ? reasoning.slice(end + SECTION_END.length) : '';
    const excerpt: Fact = { kind: 'excerpt', field: 'reasoning_content', quote: around(reasoning, TOOL_TOKEN, 60) };
    const stayed = content.trim() === '' && afterSection.trim() === '';
    problems.push({ fact: { kind: stayed ? 'callBeforeThinkEnd' : 'callInReasoning' }, excerpt });
  }
  if (content.includes(TOOL_TOKEN)) {
    const thinkEnd = content.indexOf('</think>');
    const detail =
      m.reasoning_content === null && thinkEnd < 0
        ? 'noThinkEnd'
        : thinkEnd > content.indexOf(TOOL_TOKEN)
          ? 'sectionBeforeEnd'
          : undefined;
    problems.push({
      fact: { kind: 'rawToolTokens', ...(detail ? { detail } : {}) },
      excerpt: { kind: 'excerpt', field: 'content', quote: around(content, TOOL_TOKEN, 60) },
    });
  }
  return problems;
}

/** A request with one tool must come back as a structured call to it with schema-valid arguments. */
export function judgeToolCall(
  resp: unknown,
  tool: ToolDefinition,
  options: { readonly forced?: boolean } = {},
): Judgement {
  const c = firstChoice(resp);
  if ('kind' in c) return result('fail', c);
  const m = c.message;
  // Named token leaks first: they explain the symptoms that follow.
  const problems: Problem[] = rawToolTokenProblems(m);
  const calls = m.tool_calls ?? [];
  let callText = '';
  if (calls.length === 0) {
    problems.push({
      fact: { kind: 'noToolCalls', finishReason: str(c.finishReason) },
      ...(problems.length === 0
        ? { excerpt: { kind: 'excerpt', field: 'content', quote: around(m.content ?? '', undefined, 60) } }
        : {}),
    });
  } else {
    const call = calls[0];
    const name = call.function?.name;
    const args = call.function?.arguments;
    callText = `${name === undefined ? '?' : text(name)}(${args === undefined ? '' : text(args)})${call.id ? ` id=${text(call.id)}` : ''}`;
    // A forced tool choice may end with "stop", as OpenAI's API does.
    const finishOk = c.finishReason === 'tool_calls' || (options.forced === true && c.finishReason === 'stop');
    if (!finishOk)
      problems.push({ fact: { kind: 'finishReasonNot', finishReason: str(c.finishReason), expected: 'tool_calls' } });
    if (call.type !== 'function') problems.push({ fact: { kind: 'callTypeNot', type: str(call.type) } });
    if (name !== tool.function.name)
      problems.push({ fact: { kind: 'callsOther', index: 0, name: str(name), expected: tool.function.name } });
    problems.push(...argumentProblems(args, tool).map((fault) => ({ fact: { kind: 'badArguments', fault } as const })));
  }
  if (problems.length === 0) return result('pass', { kind: 'raw', text: callText });
  const excerpts = problems.map((p) => p.excerpt).filter((e): e is Fact => e !== undefined);
  return result('fail', [
    ...problems.map((p) => p.fact),
    ...(callText ? [{ kind: 'call', text: callText } as const] : []),
    ...excerpts,
  ]);
}

export function argumentProblems(args: unknown, tool: ToolDefinition): ArgumentFault[] {
  if (typeof args !== 'string') return [{ kind: 'argsNotString', args: str(args) }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return [{ kind: 'argsNotJson', args: showJson(args) }];
  }
  const validate = validatorFor(tool.function.parameters);
  if (!validate(parsed)) return [{ kind: 'argsSchema', errors: ajv.errorsText(validate.errors) }];
  return [];
}
