/**
 * The one table of parser checks: each check's name, the requests it sends (the model's input,
 * kept in English) and how its answer is judged. The verifier runs it; what each sends, what
 * passes and what an agent suffers when it fails are said in present/words/checkWords.ts, and the
 * log, the notification, the dashboard, the servers view, the CLI and the agents' tools show them
 * (through present/verifyReport.ts).
 */
import { judgeCarriedReasoning, judgeParallelCalls, judgeRoundTrip, reasoningTextOf, toolCallsOf } from './agentJudges';
import type { NoFollowUp } from '../present/words/verifyFindings';
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
/** The prompts, quoted in what each check sends (present/words/checkWords.ts). */
export const CHECK_PROMPTS = { reasoning: REASONING_PROMPT, tool: TOOL_PROMPT, parallel: PARALLEL_PROMPT } as const;

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
 * Why not, when the first answer has no call to answer.
 */
export function roundTripRequest(
  model: string,
  first: unknown,
  stream = false,
  maxTokens = 2048,
  earlier: readonly Body[] = [],
): Body | NoFollowUp {
  const calls = toolCallsOf(first);
  if (calls.length === 0) return 'noToolCall';
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
 * progress with the server's own call and its reasoning, then the tool's result. Why not, when
 * the first answer has no call, or no reasoning to carry.
 */
export function carriedReasoningRequest(
  model: string,
  first: unknown,
  stream = true,
  maxTokens = 2048,
): Body | NoFollowUp {
  if (toolCallsOf(first).length > 0 && reasoningTextOf(first) === '') return 'noReasoning';
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
      readonly body: (model: string, first: unknown, maxTokens: number, stream: boolean) => Body | NoFollowUp;
      readonly judge: (resp: unknown) => Judgement;
    }
  | { readonly kind: 'ids'; readonly from: readonly CheckName[] };

export interface CheckSpec {
  readonly name: CheckName;
  readonly run: CheckRun;
}

function streamed(spec: CheckSpec): CheckSpec {
  if (spec.run.kind !== 'chat' && spec.run.kind !== 'followUp') return spec;
  return {
    ...spec,
    name: `${spec.name} (stream)` as CheckName,
    run: {
      ...spec.run,
      stream: true,
      ...(spec.run.kind === 'followUp' ? { after: `${spec.run.after} (stream)` as CheckName } : {}),
    },
  };
}

const reasoning: CheckSpec = {
  name: 'reasoning',
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
    run: { kind: 'flags' },
  },
  reasoning,
  streamed(reasoning),
  {
    name: 'thinking off',
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
