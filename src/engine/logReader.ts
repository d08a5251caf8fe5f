/**
 * A log read as a stream: one entry's message -> its lines (logGrammar) -> events (logRules and
 * the engine's words), with the little state a stream needs (rank de-duplication, "are we
 * inside a traceback"). Pure.
 */
import { activityEvents } from './activity';
import { detach } from '../util/detach';
import type { JournalEvent } from './events';
import { splitLines, stripPrefix } from './logGrammar';
import { eitherGrammar, parseLine, type LineContext, type LogGrammar } from './logRules';
import { sglangGrammar } from './sglang/sglangLog';
import { vllmGrammar } from './vllm/vllmLog';

/** The words of every engine, vLLM's first: a log whose engine is not known yet (or a test's excerpt). */
export const ANY_ENGINE_GRAMMAR: LogGrammar = eitherGrammar(vllmGrammar, sglangGrammar);

/** One clean line (prefix not yet stripped) -> events; `grammar` by default every engine's. */
export function parseJournalLine(
  rawLine: string,
  ctx: LineContext = { inTraceback: false },
  grammar: LogGrammar = ANY_ENGINE_GRAMMAR,
): JournalEvent[] {
  return parseLine(rawLine, ctx, grammar);
}

/**
 * One journal MESSAGE -> events, in order. tqdm's updates arrive several to a message,
 * joined by `\r`; every update is taken.
 */
export function parseJournalMessage(
  message: string,
  ctx: LineContext = { inTraceback: false },
  grammar: LogGrammar = ANY_ENGINE_GRAMMAR,
): JournalEvent[] {
  const out: JournalEvent[] = [];
  for (const line of splitLines(message)) out.push(...lineEvents(line, ctx, grammar));
  return out;
}

/** One line's events: what it says of the load, then the quiet step it names (./activity). */
function lineEvents(line: string, ctx: LineContext, grammar: LogGrammar): JournalEvent[] {
  // The whole line: a logger prefix (`... - INFO - flashinfer.jit: `) can be part of the wording.
  return [...parseJournalLine(line, ctx, grammar), ...activityEvents(line)];
}

// ---------------------------------------------------------------- rank de-duplication

/**
 * With TP8, many lines come once per rank, differing only by the TPn tag. A line counts once
 * per `windowMs`: a second copy from another rank is dropped; the same rank saying the same
 * thing again is a real repeat and is kept.
 */
export class DedupeByRank {
  private readonly seen = new Map<string, { at: number; ranks: Set<string> }>();
  /** Lines remembered at most (the oldest go first), and the characters of a line a key keeps. */
  static readonly MAX_LINES = 4096;
  static readonly KEY_CHARS = 512;

  constructor(private readonly windowMs = 10_000) {}

  /** True when the message should be used. `at` is its time (epoch ms). */
  accept(message: string, at: number): boolean {
    const first = message.replace(/^\r+/, '');
    const { text, ranks } = stripPrefix(first);
    if (!ranks) return true;
    const key = keyOf(text.trim());
    const rank = ranks;
    this.prune(at);
    const entry = this.seen.get(key);
    if (!entry || at - entry.at > this.windowMs || entry.ranks.has(rank)) {
      this.seen.set(key, { at, ranks: new Set([rank]) });
      return true;
    }
    entry.ranks.add(rank);
    return false;
  }

  private prune(now: number): void {
    if (this.seen.size < DedupeByRank.MAX_LINES) return;
    for (const [k, v] of this.seen) if (now - v.at > this.windowMs) this.seen.delete(k);
    // Still full (a flood within one window): forget the oldest half, so a prune is rare.
    let excess = this.seen.size - DedupeByRank.MAX_LINES / 2;
    for (const k of this.seen.keys()) {
      if (excess-- <= 0) break;
      this.seen.delete(k);
    }
  }
}

/** One event and the line it came from (the text a signal carries: prefix kept, at most 300 characters). */
export interface ReadLine {
  readonly event: JournalEvent;
  readonly text: string;
}

const LINE_TEXT_CHARS = 300;

/** A long line is remembered by its length, head and tail, not whole. */
function keyOf(text: string): string {
  const n = DedupeByRank.KEY_CHARS;
  return detach(text.length <= 2 * n ? text : `${text.length}:${text.slice(0, n)}…${text.slice(-n)}`);
}

/** The stateful reader a journal follower uses: de-duplicates ranks, tracks tracebacks. */
export class JournalReader {
  private readonly ctx: LineContext = { inTraceback: false };
  private readonly dedupe: DedupeByRank;

  /** `grammar`: the engine's (engine.ts `engineFor(argv).grammar`); by default every engine's words. */
  constructor(
    private readonly grammar: LogGrammar = ANY_ENGINE_GRAMMAR,
    windowMs = 10_000,
  ) {
    this.dedupe = new DedupeByRank(windowMs);
  }

  /** One journal entry's MESSAGE -> events (empty for a duplicate from another rank). */
  read(message: string, at: number): JournalEvent[] {
    return this.readLines(message, at).map((l) => l.event);
  }

  /** One journal entry's MESSAGE -> events, each with its own line (a message may hold several). */
  readLines(message: string, at: number): ReadLine[] {
    // An empty line ends a traceback's explanation block.
    if (message.trim() === '') {
      this.ctx.explain = 0;
      this.ctx.afterException = false;
      return [];
    }
    if (!this.dedupe.accept(message, at)) return [];
    const out: ReadLine[] = [];
    for (const line of splitLines(message)) {
      for (const event of lineEvents(line, this.ctx, this.grammar)) {
        const text = event.type === 'error' && event.detail ? event.text : line.trim();
        out.push({ event, text: text.slice(0, LINE_TEXT_CHARS) });
      }
    }
    return out;
  }
}
