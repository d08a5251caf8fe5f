/**
 * What each parser check sends, what passes, and what an agent suffers when it fails, in the
 * user's language. The requests themselves (prompts, tool definitions) are the model's input and
 * stay English in verify/checks.ts; they are quoted here as sent.
 */
import * as l10n from '@vscode/l10n';

/** The checks asked once, plain; each chat check is also asked streamed ("<name> (stream)"). */
export type PlainCheck =
  | 'server flags'
  | 'reasoning'
  | 'thinking off'
  | 'tool calling'
  | 'tool round trip'
  | 'reasoning carried through tool calls'
  | 'parallel tool calls'
  | 'tool_choice required'
  | 'named tool choice'
  | 'tool-call ids';

export type WordedCheck = PlainCheck | `${PlainCheck} (stream)`;

export interface CheckWords {
  /** What is sent. */
  readonly sent: string;
  /** What passes. */
  readonly passes: string;
  /** What an agent suffers when it fails. */
  readonly consequence: string;
}

/** The prompts as the checks send them, quoted in what is sent. */
export interface CheckPrompts {
  readonly reasoning: string;
  readonly tool: string;
  readonly parallel: string;
}

const WORDS: Readonly<Record<PlainCheck, (p: CheckPrompts) => CheckWords>> = {
  'server flags': () => ({
    sent: l10n.t('GET /server_info (SGLang), or the running command line (vLLM)'),
    passes: l10n.t('the reasoning and tool-call parsers the unit asks for (and --enable-auto-tool-choice on vLLM)'),
    consequence: l10n.t('the server runs without the parsers asked for: tool calls and thinking arrive as raw text'),
  }),
  reasoning: (p) => ({
    sent: JSON.stringify(p.reasoning),
    passes: l10n.t('reasoning_content (or reasoning) non-empty, an answer in content, no <think>/</think> in it'),
    consequence: l10n.t(
      "the model's thinking is shown as its answer, </think> and all: agents treat the reasoning as the reply",
    ),
  }),
  'thinking off': (p) => ({
    sent: l10n.t('{0} with chat_template_kwargs {1}', JSON.stringify(p.reasoning), '{"thinking": false}'),
    passes: l10n.t('no reasoning_content, no <think> in content'),
    consequence: l10n.t('agents that turn thinking off get an empty reply: the answer lands in reasoning_content'),
  }),
  'tool calling': (p) => ({
    sent: l10n.t('{0} with the get_weather tool', JSON.stringify(p.tool)),
    passes: l10n.t('a structured get_weather call with schema-valid arguments, finish_reason "tool_calls"'),
    consequence: l10n.t('agents get no tool call: the call arrives as text and the agent answers without its tools'),
  }),
  'tool round trip': () => ({
    sent: l10n.t(
      'the tool calling answer sent back, then the tool\'s result as a role "tool" message with its tool_call_id',
    ),
    passes: l10n.t(
      'an answer that uses the result (18 °C, light rain), reasoning separated on this turn too, no new call',
    ),
    consequence: l10n.t(
      'a second turn fails after a tool result (empty, or with the thinking in the reply): agents stall after the first tool call',
    ),
  }),
  'reasoning carried through tool calls': () => ({
    sent: l10n.t(
      "an earlier finished turn, then the tool calling (stream) answer sent back with its reasoning as reasoning_content (and reasoning), then the tool's result; streamed",
    ),
    passes: l10n.t(
      'the server takes the history (HTTP 200) and the answer uses the result (18 °C, light rain), no new call',
    ),
    consequence: l10n.t(
      "a Kimi thinking model gets its own reasoning back between tool calls (interleaved thinking) only where the server takes it: without it the agent's next step answers worse",
    ),
  }),
  'parallel tool calls': (p) => ({
    sent: JSON.stringify(p.parallel),
    passes: l10n.t('two get_weather calls, Paris and Tokyo, each with its own id'),
    consequence: l10n.t(
      'agents asking for several tools at once run only one (or a garbled one): the other results never come',
    ),
  }),
  'tool_choice required': () => ({
    sent: l10n.t('tool_choice "required" with the get_weather tool'),
    passes: l10n.t('a structured get_weather call (finish_reason "tool_calls" or "stop")'),
    consequence: l10n.t('agents that force a tool call (tool_choice "required") get none'),
  }),
  'named tool choice': () => ({
    sent: l10n.t('tool_choice {0} with get_time listed first', '{"type":"function","function":{"name":"get_weather"}}'),
    passes: l10n.t('a structured call to get_weather, not get_time'),
    consequence: l10n.t('agents that force a particular tool get no call, or a call to another tool'),
  }),
  'tool-call ids': () => ({
    sent: l10n.t('the ids of every call above'),
    passes: l10n.t('the format the parser is meant to produce (functions.NAME:IDX for kimi_k2), unique in each answer'),
    consequence: l10n.t(
      "the follow-up turn may come back empty: agents stall after the first tool call (Kimi's template renders the id into the next prompt)",
    ),
  }),
};

const STREAM = ' (stream)';

const TITLES: Readonly<Record<PlainCheck, () => string>> = {
  'server flags': () => l10n.t('server flags'),
  reasoning: () => l10n.t('reasoning'),
  'thinking off': () => l10n.t('thinking off'),
  'tool calling': () => l10n.t('tool calling'),
  'tool round trip': () => l10n.t('tool round trip'),
  'reasoning carried through tool calls': () => l10n.t('reasoning carried through tool calls'),
  'parallel tool calls': () => l10n.t('parallel tool calls'),
  'tool_choice required': () => l10n.t('tool_choice required'),
  'named tool choice': () => l10n.t('named tool choice'),
  'tool-call ids': () => l10n.t('tool-call ids'),
};

/** A check's name as a user reads it (the name itself, the identifier of --json and the broker, stays). */
export function checkTitle(name: WordedCheck): string {
  if (!name.endsWith(STREAM)) return TITLES[name as PlainCheck]();
  return l10n.t('{0} (stream)', TITLES[name.slice(0, -STREAM.length) as PlainCheck]());
}

/** A check's words; a streamed check says it is streamed, and that agents get this one. */
export function checkWords(name: WordedCheck, prompts: CheckPrompts): CheckWords {
  if (!name.endsWith(STREAM)) return WORDS[name as PlainCheck](prompts);
  const plain = WORDS[name.slice(0, -STREAM.length) as PlainCheck](prompts);
  return {
    sent: l10n.t('{0}, streamed (SSE)', plain.sent),
    passes: plain.passes,
    consequence: l10n.t('{0} (agents stream: this is what they get)', plain.consequence),
  };
}
