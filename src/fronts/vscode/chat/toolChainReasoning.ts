/**
 * Interleaved thinking through the editor: Kimi K2's thinking models expect their own reasoning
 * for the tool chain in progress back in the history, and VS Code replays an answer's tool calls
 * without it. The chat model keeps the reasoning of each answer that ended in tool calls, keyed by
 * those calls (ids, names and arguments, which VS Code replays unchanged), and sends it back on
 * that assistant message as `reasoning_content` (SGLang, vLLM up to 0.11.0) and `reasoning` (vLLM
 * since 0.11.1), only where Kimi's chat template renders it: the messages after the last assistant
 * message without tool calls. What the template drops for earlier turns is not sent.
 * Bounded: per conversation chain, evicted by size (least recently used chain first) and by age.
 */
import type { OpenAiMessage, OpenAiToolCall } from './openaiChat';

export interface ReasoningLimits {
  /** All chains together, in characters. */
  readonly maxChars: number;
  /** One chain; its oldest answers go first. */
  readonly maxCharsPerChain: number;
  /** A chain not used for this long is forgotten. */
  readonly maxAgeMs: number;
}

export const DEFAULT_REASONING_LIMITS: ReasoningLimits = {
  maxChars: 8_000_000,
  maxCharsPerChain: 2_000_000,
  maxAgeMs: 6 * 60 * 60 * 1000,
};

type AssistantMessage = Extract<OpenAiMessage, { role: 'assistant' }>;

function hasCalls(m: OpenAiMessage): m is AssistantMessage & { tool_calls: readonly OpenAiToolCall[] } {
  return m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0;
}

/** Index of the first message Kimi's template renders with its reasoning (after the last answer without calls). */
export function currentChainStart(messages: readonly OpenAiMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && !hasCalls(m)) return i + 1;
  }
  return 0;
}

/** The key of one answer's calls: ids, names and arguments as sent (the same on every replay). */
export function callsKey(calls: readonly OpenAiToolCall[]): string {
  return JSON.stringify(calls.map((c) => [c.id, c.function.name, c.function.arguments]));
}

interface Chain {
  lastUsed: number;
  chars: number;
  /** callsKey -> reasoning, oldest first. */
  readonly answers: Map<string, string>;
}

/** Reasoning chars sent back per tool-call message of the current chain (0: none known). */
export interface Carried {
  readonly messages: OpenAiMessage[];
  readonly carried: readonly number[];
}

export class ReasoningMemory {
  /** Least recently used first. */
  private readonly chains = new Map<string, Chain>();
  /** scope + callsKey -> its chain's key. */
  private readonly chainOfAnswer = new Map<string, string>();
  private total = 0;

  constructor(
    private readonly limits: ReasoningLimits = DEFAULT_REASONING_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** How much is kept (for the log and the tests). */
  get size(): { readonly chains: number; readonly answers: number; readonly chars: number } {
    return { chains: this.chains.size, answers: this.chainOfAnswer.size, chars: this.total };
  }

  /**
   * The history with the reasoning of the current chain's tool-call messages attached. `scope`
   * keeps servers apart (Kimi's ids, functions.NAME:IDX, repeat across conversations).
   */
  attach(scope: string, messages: readonly OpenAiMessage[]): Carried {
    this.expire();
    const start = currentChainStart(messages);
    const carried: number[] = [];
    const out = messages.map((m, i) => {
      if (i < start || !hasCalls(m)) return m;
      const reasoning = this.recall(scope, m.tool_calls);
      carried.push(reasoning?.length ?? 0);
      return reasoning ? { ...m, reasoning_content: reasoning, reasoning } : m;
    });
    return { messages: out, carried };
  }

  /**
   * Keeps the reasoning of an answer that ended in `calls`, in the chain the request `messages`
   * continues (a new chain when it starts one).
   */
  remember(
    scope: string,
    messages: readonly OpenAiMessage[],
    calls: readonly OpenAiToolCall[],
    reasoning: string,
  ): void {
    if (calls.length === 0 || reasoning === '' || reasoning.length > this.limits.maxCharsPerChain) return;
    this.expire();
    const answerKey = `${scope}\n${callsKey(calls)}`;
    const first = messages.slice(currentChainStart(messages)).find(hasCalls);
    const continued = first ? this.chainOfAnswer.get(`${scope}\n${callsKey(first.tool_calls)}`) : undefined;
    const chainKey = continued ?? answerKey;
    this.forget(answerKey);
    const chain = this.touch(chainKey) ?? { lastUsed: this.now(), chars: 0, answers: new Map<string, string>() };
    this.chains.set(chainKey, chain);
    chain.answers.set(answerKey, reasoning);
    chain.chars += reasoning.length;
    this.total += reasoning.length;
    this.chainOfAnswer.set(answerKey, chainKey);
    for (const [key, text] of chain.answers) {
      if (chain.chars <= this.limits.maxCharsPerChain) break;
      this.drop(chain, key, text);
    }
    for (const [key, c] of this.chains) {
      if (this.total <= this.limits.maxChars) break;
      this.dropChain(key, c);
    }
  }

  private recall(scope: string, calls: readonly OpenAiToolCall[]): string | undefined {
    const answerKey = `${scope}\n${callsKey(calls)}`;
    const chainKey = this.chainOfAnswer.get(answerKey);
    return chainKey === undefined ? undefined : this.touch(chainKey)?.answers.get(answerKey);
  }

  /** Marks a chain used (moves it to the end of the LRU order). */
  private touch(chainKey: string): Chain | undefined {
    const chain = this.chains.get(chainKey);
    if (!chain) return undefined;
    chain.lastUsed = this.now();
    this.chains.delete(chainKey);
    this.chains.set(chainKey, chain);
    return chain;
  }

  private forget(answerKey: string): void {
    const chainKey = this.chainOfAnswer.get(answerKey);
    const chain = chainKey === undefined ? undefined : this.chains.get(chainKey);
    const text = chain?.answers.get(answerKey);
    if (chain && text !== undefined) this.drop(chain, answerKey, text);
  }

  private drop(chain: Chain, answerKey: string, text: string): void {
    chain.answers.delete(answerKey);
    chain.chars -= text.length;
    this.total -= text.length;
    this.chainOfAnswer.delete(answerKey);
  }

  private dropChain(chainKey: string, chain: Chain): void {
    for (const [key, text] of [...chain.answers]) this.drop(chain, key, text);
    this.chains.delete(chainKey);
  }

  private expire(): void {
    const oldest = this.now() - this.limits.maxAgeMs;
    for (const [key, chain] of this.chains) {
      if (chain.lastUsed >= oldest) break; // LRU order: the rest are newer
      this.dropChain(key, chain);
    }
  }
}
