/**
 * The one table of parser checks: what each sends, what passes, and what an agent suffers when it
 * fails. The verifier runs it; the log, the notification, the dashboard, the servers view, the CLI
 * and the agents' tools all show its names, evidence and consequences (through ./report).
 */
import { judgeCarriedReasoning, judgeParallelCalls, judgeRoundTrip, reasoningTextOf, toolCallsOf } from './agentJudges';
import { judgeReasoning, judgeThinkingOff, judgeToolCall, type Judgement, type ToolDefinition } from './judges';

/** Every check a verification can run: the type and the broker's schema both come from this list. */
export const CHECK_NAMES = [
  'server flags',
  'reasoning',
  'reasoning (stream)',
  'thinking off',
  'tool calling',
  'tool calling (stream)',
  'tool round trip',
  'tool round trip (stream)',
  'reasoning carried through tool calls',
  'parallel tool calls',
  'parallel tool calls (stream)',
  'tool_choice required',
  'tool_choice required (stream)',
  'named tool choice',
  'named tool choice (stream)',
  'tool-call ids',
] as const;

export type CheckName = (typeof CHECK_NAMES)[number];

export const WEATHER_TOOL: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name, e.g. Paris' } },
      required: ['city'],
    },
  },
};

/** Listed first in the named-choice request, so a server that ignores the name calls this one. */
export const TIME_TOOL: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'Get the current local time in a timezone.',
    parameters: {
      type: 'object',
      properties: { timezone: { type: 'string', description: 'IANA timezone, e.g. Europe/Paris' } },
      required: ['timezone'],
    },
  },
};

export const REASONING_PROMPT = 'What is 17 * 23? Think it through, then answer with the number only.';
export const TOOL_PROMPT = 'What is the weather in Paris right now? Use the get_weather tool.';
export const PARALLEL_CITIES = ['Paris', 'Tokyo'] as const;
export const PARALLEL_PROMPT =
  'What is the weather in Paris and in Tokyo right now? Call get_weather for both cities at once, one call per city.';
/** What the tool answers in the round trip; the model's answer must use it. */
export const TOOL_RESULT = { city: 'Paris', temperature_c: 18, conditions: 'light rain' };
export const TOOL_RESULT_WORDS = ['18', 'rain'];

type Body = Record<string, unknown>;

function chat(model: string, messages: unknown[], maxTokens: number, stream: boolean, extra: Body = {}): Body {
  return { model, messages, max_tokens: maxTokens, temperature: 0, stream, ...extra };
}

/** Request bodies, exported so the simulator and the tests can match on them. */
export function reasoningRequest(model: string, stream = false, maxTokens = 2048): Body {
  return chat(model, [{ role: 'user', content: REASONING_PROMPT }], maxTokens, stream);
}

export function thinkingOffRequest(model: string, maxTokens = 256): Body {
  return { ...reasoningRequest(model, false, maxTokens), chat_template_kwargs: { thinking: false } };
}

export function toolRequest(model: string, stream = false, maxTokens = 2048): Body {
  return chat(model, [{ role: 'user', content: TOOL_PROMPT }], maxTokens, stream, { tools: [WEATHER_TOOL] });
}

export function parallelRequest(model: string, stream = false, maxTokens = 2048): Body {
  return chat(model, [{ role: 'user', content: PARALLEL_PROMPT }], maxTokens, stream, {
    tools: [WEATHER_TOOL],
    parallel_tool_calls: true,
  });
}

export function requiredRequest(model: string, stream = false, maxTokens = 2048): Body {
  return chat(model, [{ role: 'user', content: 'Paris: is it raining?' }], maxTokens, stream, {
    tools: [WEATHER_TOOL],
    tool_choice: 'required',
  });
}

export function namedRequest(model: string, stream = false, maxTokens = 2048): Body {
  return chat(model, [{ role: 'user', content: 'I am in Paris. What should I wear today?' }], maxTokens, stream, {
    tools: [TIME_TOOL, WEATHER_TOOL],
    tool_choice: { type: 'function', function: { name: WEATHER_TOOL.function.name } },
  });
}

/**
 * The second turn of an agent: the first answer sent back as the assistant message (with its
 * reasoning, which Kimi's template renders), then the tool's result under the call's id.
 * A string when the first answer has no call to answer.
 */
export function roundTripRequest(
  model: string,
  first: unknown,
  stream = false,
  maxTokens = 2048,
  earlier: readonly Body[] = [],
): Body | string {
  const calls = toolCallsOf(first);
  if (calls.length === 0) return 'the first turn has no tool call to answer';
  const call = calls[0];
  const choice = (first as { choices: { message: { content?: unknown } }[] }).choices[0].message;
  const assistant: Body = {
    role: 'assistant',
    content: typeof choice.content === 'string' ? choice.content : '',
    tool_calls: [
      {
        id: call.id ?? '',
        type: 'function',
        function: { name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' },
      },
    ],
  };
  const reasoning = reasoningTextOf(first);
  // SGLang's and older vLLM's templates read reasoning_content, vLLM since 0.11.1 reads `reasoning`.
  if (reasoning !== '') Object.assign(assistant, { reasoning_content: reasoning, reasoning });
  return chat(
    model,
    [
      ...earlier,
      { role: 'user', content: TOOL_PROMPT },
      assistant,
      { role: 'tool', tool_call_id: call.id ?? '', content: JSON.stringify(TOOL_RESULT) },
    ],
    maxTokens,
    stream,
    {
      tools: [WEATHER_TOOL],
    },
  );
}

/** A finished turn before the tool chain: Kimi's template drops its reasoning, so none is sent. */
export const EARLIER_TURN: readonly Body[] = [
  { role: 'user', content: 'What is the capital of France?' },
  { role: 'assistant', content: 'The capital of France is Paris.' },
];

/**
 * A multi-step history as an agent sends it: an earlier finished turn, then the tool chain in
 * progress with the server's own call and its reasoning, then the tool's result. A string when
 * the first answer has no call, or no reasoning to carry.
 */
export function carriedReasoningRequest(model: string, first: unknown, stream = true, maxTokens = 2048): Body | string {
  if (toolCallsOf(first).length > 0 && reasoningTextOf(first) === '')
    return 'the first turn has no reasoning to carry back';
  return roundTripRequest(model, first, stream, maxTokens, EARLIER_TURN);
}

/** How a check gets its answer. */
export type CheckRun =
  | { readonly kind: 'flags' }
  | {
      readonly kind: 'chat';
      readonly stream: boolean;
      readonly body: (model: string, maxTokens: number, stream: boolean) => Body;
      readonly judge: (resp: unknown) => Judgement;
      /** thinking off: a cut answer with reasoning in it still shows the fault. */
      readonly budget: 'answer' | 'thinkingOff';
    }
  | {
      readonly kind: 'followUp';
      readonly stream: boolean;
      readonly after: CheckName;
      readonly body: (model: string, first: unknown, maxTokens: number, stream: boolean) => Body | string;
      readonly judge: (resp: unknown) => Judgement;
    }
  | { readonly kind: 'ids'; readonly from: readonly CheckName[] };

export interface CheckSpec {
  readonly name: CheckName;
  /** What is sent, in words (docs/verification.md and the log). */
  readonly request: string;
  /** What passes. */
  readonly passes: string;
  /** What an agent suffers when it fails. */
  readonly consequence: string;
  readonly run: CheckRun;
}

const STREAMING = ' (agents stream: this is what they get)';

function streamed(spec: CheckSpec): CheckSpec {
  if (spec.run.kind !== 'chat' && spec.run.kind !== 'followUp') return spec;
  return {
    ...spec,
    name: `${spec.name} (stream)` as CheckName,
    request: `${spec.request}, streamed (SSE)`,
    consequence: `${spec.consequence}${STREAMING}`,
    run: {
      ...spec.run,
      stream: true,
      ...(spec.run.kind === 'followUp' ? { after: `${spec.run.after} (stream)` as CheckName } : {}),
    },
  };
}

const reasoning: CheckSpec = {
  name: 'reasoning',
  request: `"${REASONING_PROMPT}"`,
  passes: 'reasoning_content (or reasoning) non-empty, an answer in content, no <think>/</think> in it',
  consequence: "the model's thinking is shown as its answer, </think> and all: agents treat the reasoning as the reply",
  run: {
    kind: 'chat',
    stream: false,
    body: (m, n, st) => reasoningRequest(m, st, n),
    judge: judgeReasoning,
    budget: 'answer',
  },
};

const toolCalling: CheckSpec = {
  name: 'tool calling',
  request: `"${TOOL_PROMPT}" with the get_weather tool`,
  passes: 'a structured get_weather call with schema-valid arguments, finish_reason "tool_calls"',
  consequence: 'agents get no tool call: the call arrives as text and the agent answers without its tools',
  run: {
    kind: 'chat',
    stream: false,
    body: (m, n, st) => toolRequest(m, st, n),
    judge: (r) => judgeToolCall(r, WEATHER_TOOL),
    budget: 'answer',
  },
};

const roundTrip: CheckSpec = {
  name: 'tool round trip',
  request: 'the tool calling answer sent back, then the tool\'s result as a role "tool" message with its tool_call_id',
  passes: 'an answer that uses the result (18 °C, light rain), reasoning separated on this turn too, no new call',
  consequence:
    'a second turn fails after a tool result (empty, or with the thinking in the reply): agents stall after the first tool call',
  run: {
    kind: 'followUp',
    stream: false,
    after: 'tool calling',
    body: (m, first, n, st) => roundTripRequest(m, first, st, n),
    judge: (r) => judgeRoundTrip(r, TOOL_RESULT_WORDS),
  },
};

const carried: CheckSpec = {
  name: 'reasoning carried through tool calls',
  request:
    "an earlier finished turn, then the tool calling (stream) answer sent back with its reasoning as reasoning_content (and reasoning), then the tool's result; streamed",
  passes: 'the server takes the history (HTTP 200) and the answer uses the result (18 °C, light rain), no new call',
  consequence:
    "a Kimi thinking model gets its own reasoning back between tool calls (interleaved thinking) only where the server takes it: without it the agent's next step answers worse",
  run: {
    kind: 'followUp',
    stream: true,
    after: 'tool calling (stream)',
    body: (m, first, n, st) => carriedReasoningRequest(m, first, st, n),
    judge: (r) => judgeCarriedReasoning(r, TOOL_RESULT_WORDS),
  },
};

const parallel: CheckSpec = {
  name: 'parallel tool calls',
  request: `"${PARALLEL_PROMPT}"`,
  passes: 'two get_weather calls, Paris and Tokyo, each with its own id',
  consequence: 'agents asking for several tools at once run only one (or a garbled one): the other results never come',
  run: {
    kind: 'chat',
    stream: false,
    body: (m, n, st) => parallelRequest(m, st, n),
    judge: (r) => judgeParallelCalls(r, WEATHER_TOOL, PARALLEL_CITIES),
    budget: 'answer',
  },
};

const required: CheckSpec = {
  name: 'tool_choice required',
  request: 'tool_choice "required" with the get_weather tool',
  passes: 'a structured get_weather call (finish_reason "tool_calls" or "stop")',
  consequence: 'agents that force a tool call (tool_choice "required") get none',
  run: {
    kind: 'chat',
    stream: false,
    body: (m, n, st) => requiredRequest(m, st, n),
    judge: (r) => judgeToolCall(r, WEATHER_TOOL, { forced: true }),
    budget: 'answer',
  },
};

const named: CheckSpec = {
  name: 'named tool choice',
  request: 'tool_choice {"type":"function","function":{"name":"get_weather"}} with get_time listed first',
  passes: 'a structured call to get_weather, not get_time',
  consequence: 'agents that force a particular tool get no call, or a call to another tool',
  run: {
    kind: 'chat',
    stream: false,
    body: (m, n, st) => namedRequest(m, st, n),
    judge: (r) => judgeToolCall(r, WEATHER_TOOL, { forced: true }),
    budget: 'answer',
  },
};

export const CHECKS: readonly CheckSpec[] = [
  {
    name: 'server flags',
    request: 'GET /server_info (SGLang), or the running command line (vLLM)',
    passes: 'the reasoning and tool-call parsers the unit asks for (and --enable-auto-tool-choice on vLLM)',
    consequence: 'the server runs without the parsers asked for: tool calls and thinking arrive as raw text',
    run: { kind: 'flags' },
  },
  reasoning,
  streamed(reasoning),
  {
    name: 'thinking off',
    request: `"${REASONING_PROMPT}" with chat_template_kwargs {"thinking": false}`,
    passes: 'no reasoning_content, no <think> in content',
    consequence: 'agents that turn thinking off get an empty reply: the answer lands in reasoning_content',
    run: {
      kind: 'chat',
      stream: false,
      body: (m, n) => thinkingOffRequest(m, n),
      judge: judgeThinkingOff,
      budget: 'thinkingOff',
    },
  },
  toolCalling,
  streamed(toolCalling),
  roundTrip,
  streamed(roundTrip),
  carried,
  parallel,
  streamed(parallel),
  required,
  streamed(required),
  named,
  streamed(named),
  {
    name: 'tool-call ids',
    request: 'the ids of every call above',
    passes: 'the format the parser is meant to produce (functions.NAME:IDX for kimi_k2), unique in each answer',
    consequence:
      "the follow-up turn may come back empty: agents stall after the first tool call (Kimi's template renders the id into the next prompt)",
    run: {
      kind: 'ids',
      from: [
        'tool calling',
        'tool calling (stream)',
        'parallel tool calls',
        'parallel tool calls (stream)',
        'tool_choice required',
        'tool_choice required (stream)',
        'named tool choice',
        'named tool choice (stream)',
      ],
    },
  },
];
