/**
 * A verification as it goes, pure: what each streamed answer carried so far (its SSE chunks of
 * reasoning and of the answer, counted as they arrive, not guessed), which checks are done and
 * which wait and for how long, in the words of the status bar, its tooltip and the log; and why a
 * check whose time ran out is inconclusive rather than a parser fault.
 */
import type { CheckName } from './checks';
import { checkLine, progressWord } from '../present/words/verifyProgressWords';

export { checkLine, progressWord, tallyText } from '../present/words/verifyProgressWords';
import { isRecord, reasoningOf, result, type Judgement } from './judges';
import type { Streamed } from '../present/words/verifyFindings';

export interface StreamTally {
  /** SSE chunks that carried reasoning: one a token at SGLang's and vLLM's default stream interval (1). */
  readonly reasoningTokens: number;
  readonly reasoningChars: number;
  /** Chunks of the answer: content or tool-call deltas. */
  readonly answerTokens: number;
  readonly answerChars: number;
  readonly finishReason?: string;
}

export const EMPTY_TALLY: StreamTally = { reasoningTokens: 0, reasoningChars: 0, answerTokens: 0, answerChars: 0 };

/** Counts a streamed chat completion's chunks as they arrive; the text may be split anywhere. */
export class SseTally {
  private pending = '';
  private counts: StreamTally = EMPTY_TALLY;

  get tally(): StreamTally {
    return this.counts;
  }

  push(text: string): void {
    this.pending = (this.pending + text).replace(/\r\n/g, '\n');
    for (let end = this.pending.indexOf('\n\n'); end >= 0; end = this.pending.indexOf('\n\n')) {
      const event = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      this.count(event);
    }
  }

  private count(event: string): void {
    const data = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('\n');
    if (data === '' || data === '[DONE]') return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    const choice = isRecord(chunk) && Array.isArray(chunk.choices) ? (chunk.choices[0] as unknown) : undefined;
    if (!isRecord(choice)) return;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const c = { ...this.counts };
    const reasoning = reasoningOf(delta);
    if (reasoning) {
      c.reasoningTokens++;
      c.reasoningChars += reasoning.length;
    }
    const content = typeof delta.content === 'string' ? delta.content : '';
    const calls = Array.isArray(delta.tool_calls) ? (delta.tool_calls as unknown[]) : [];
    if (content !== '' || calls.length > 0) {
      c.answerTokens++;
      c.answerChars += content.length + calls.reduce<number>((n, call) => n + argumentsOf(call).length, 0);
    }
    this.counts = typeof choice.finish_reason === 'string' ? { ...c, finishReason: choice.finish_reason } : c;
  }
}

function argumentsOf(call: unknown): string {
  const f = isRecord(call) && isRecord(call.function) ? call.function : undefined;
  return typeof f?.arguments === 'string' ? f.arguments : '';
}

export interface CheckProgress {
  readonly name: CheckName;
  readonly stream: boolean;
  /** When its request went out (a slot was free); undefined while it waits for one. */
  readonly askedAt?: number;
  /** max_tokens of the request under way. */
  readonly budget?: number;
  /** The retry at a bigger budget of an answer the first one cut. */
  readonly retry?: boolean;
  readonly tally: StreamTally;
  /** A stream's response began (the server took the request); undefined while it waits for it. */
  readonly respondedAt?: number;
  /** When that request ended (answered, failed or out of time), if it did. */
  readonly endedAt?: number;
}

export interface VerifyProgress {
  readonly done: number;
  readonly total: number;
  /** The checks not done yet, in the table's order. */
  readonly running: readonly CheckProgress[];
}

/** The check a user is told about: the longest-waiting stream that carried something, else the longest-waiting one. */
export function slowestCheck(p: VerifyProgress): CheckProgress | undefined {
  const asked = p.running.filter((c) => c.askedAt !== undefined && c.endedAt === undefined);
  const earliest = (list: readonly CheckProgress[]) =>
    list.reduce<CheckProgress | undefined>((a, c) => (a === undefined || c.askedAt! < a.askedAt! ? c : a), undefined);
  const streaming = asked.filter((c) => c.stream && (c.tally.reasoningTokens > 0 || c.tally.answerTokens > 0));
  return earliest(streaming) ?? earliest(asked);
}

/** "verifying 5/16 · reasoning (stream) waiting 42 s (1,830 tokens of reasoning so far, budget 2,048)" */
export function progressLine(p: VerifyProgress, now: number): string {
  const slowest = slowestCheck(p);
  return slowest ? `${progressWord(p)} · ${checkLine(slowest, now)}` : progressWord(p);
}

/** After this long a check waiting is said in the log (and the status bar's text), and again at most this often. */
export const LOG_EVERY_MS = 10_000;

/** A check has waited `afterMs` or more: the verification is a long one. */
export function isLong(p: VerifyProgress, now: number, afterMs = LOG_EVERY_MS): boolean {
  return p.running.some((c) => c.askedAt !== undefined && c.endedAt === undefined && now - c.askedAt >= afterMs);
}

/** Which checks are due a log line: waiting at least `everyMs`, and not logged for `everyMs`. */
export class ProgressLog {
  private readonly loggedAt = new Map<CheckName, number>();

  constructor(private readonly everyMs = LOG_EVERY_MS) {}

  due(p: VerifyProgress, now: number): string[] {
    const lines: string[] = [];
    for (const c of p.running) {
      if (c.askedAt === undefined || c.endedAt !== undefined || now - c.askedAt < this.everyMs) continue;
      const last = this.loggedAt.get(c.name);
      if (last !== undefined && now - last < this.everyMs) continue;
      this.loggedAt.set(c.name, now);
      lines.push(`${progressWord(p)} · ${checkLine(c, now)}`);
    }
    return lines;
  }
}

/** What a request streamed before now (tokens, and how fast), undefined when it streamed nothing. */
function whatStreamed(c: CheckProgress, now: number): Streamed | undefined {
  const t = c.tally;
  const tokens = t.reasoningTokens + t.answerTokens;
  if (tokens === 0) return undefined;
  const ms = (c.endedAt ?? now) - (c.askedAt ?? now);
  return {
    reasoningTokens: t.reasoningTokens,
    answerTokens: t.answerTokens,
    ...(c.budget !== undefined ? { budget: c.budget } : {}),
    ...(ms > 0 ? { rate: (tokens * 1000) / ms } : {}),
  };
}

/**
 * A check whose time ran out, from what was seen streaming: inconclusive when the model was seen
 * at work (its own stream, or for a plain request its streamed twin, the same prompt asked at the
 * same time); undefined when nothing came at all (the server did not answer: skipped, as before).
 */
export function timeoutJudgement(
  timeoutMs: number,
  own: CheckProgress | undefined,
  twin: CheckProgress | undefined,
  now: number,
): Judgement | undefined {
  const limitSeconds = Math.round(timeoutMs / 100) / 10;
  if (own?.stream) {
    const seen = whatStreamed(own, now);
    return seen ? result('inconclusive', { kind: 'outOfTime', limitSeconds, twin: false, seen }) : undefined;
  }
  // A twin whose stream ended with a finish_reason was not slow: it says nothing of this one.
  const seen = twin?.stream && twin.tally.finishReason === undefined ? whatStreamed(twin, now) : undefined;
  if (!twin || !seen) return undefined;
  return result('inconclusive', { kind: 'outOfTime', limitSeconds, twin: true, seen });
}
