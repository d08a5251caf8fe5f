/**
 * A verification as it goes, in words: the status bar's few words, the line naming the check a
 * user waits on and what its stream carried so far, and the budgets the checks were given.
 */
import * as l10n from '@vscode/l10n';

/** The log's line as a verification starts: the parsers it expects (and the engine, when not SGLang). */
export function verifyingParsersLine(engine: string | undefined, reasoning: string, tool: string): string {
  return engine !== undefined
    ? l10n.t('Verifying parsers ({0}, expected reasoning {1}, tool calls {2})', engine, reasoning, tool)
    : l10n.t('Verifying parsers (expected reasoning {0}, tool calls {1})', reasoning, tool);
}

/** A check under way, as verify/progress.ts keeps it (the parts the words need). */
export interface CheckUnderWay {
  readonly name: string;
  readonly stream: boolean;
  readonly askedAt?: number;
  readonly budget?: number;
  readonly retry?: boolean;
  readonly tally: { readonly reasoningTokens: number; readonly answerTokens: number };
  readonly respondedAt?: number;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** "1,830 tokens of reasoning so far, budget 2,048": what the answer carried so far. */
export function tallyText(c: CheckUnderWay): string {
  const budget =
    c.budget !== undefined
      ? c.retry
        ? l10n.t(', budget {0} (retry)', count(c.budget))
        : l10n.t(', budget {0}', count(c.budget))
      : '';
  if (!c.stream)
    return c.budget !== undefined
      ? l10n.t('no answer yet: a plain answer comes whole{0}', budget)
      : l10n.t('no answer yet');
  const t = c.tally;
  if (t.reasoningTokens === 0 && t.answerTokens === 0)
    return c.respondedAt === undefined
      ? l10n.t('no response yet: queued behind other requests or at the server{0}', budget)
      : l10n.t('nothing streamed yet{0}', budget);
  const parts = [
    ...(t.reasoningTokens > 0 ? [l10n.t('{0} tokens of reasoning', count(t.reasoningTokens))] : []),
    ...(t.answerTokens > 0 ? [l10n.t('{0} of the answer', count(t.answerTokens))] : []),
  ];
  return l10n.t('{0} so far{1}', parts.join(', '), budget);
}

/** "reasoning (stream) waiting 42 s (1,830 tokens of reasoning so far, budget 2,048)" */
export function checkLine(c: CheckUnderWay, now: number): string {
  if (c.askedAt === undefined) return l10n.t('{0} waiting for a free slot', c.name);
  return l10n.t('{0} waiting {1} s ({2})', c.name, Math.max(0, Math.floor((now - c.askedAt) / 1000)), tallyText(c));
}

/** "verifying 5/16": the status bar's few words. */
export function progressWord(p: { readonly done: number; readonly total: number }): string {
  return l10n.t('verifying {0}/{1}', p.done, p.total);
}

/** The max_tokens budgets the checks used, and the context length they were chosen from. */
export interface BudgetFacts {
  readonly first: number;
  readonly retry: number | undefined;
  readonly thinkingOff: number;
  readonly contextLength: number | undefined;
  /** Where the context length was read ("/server_info context_length"); undefined when nowhere. */
  readonly source: string | undefined;
}

/** "budgets: 2048 tokens per answer, 8192 on retry of a cut answer, 256 with thinking off; context length …" */
export function budgetWords(b: BudgetFacts): string {
  const context =
    b.contextLength !== undefined && b.source !== undefined
      ? l10n.t('context length {0} from {1}', b.contextLength, b.source)
      : l10n.t('no context length (neither /server_info nor /v1/models gave one)');
  const retry = b.retry !== undefined ? l10n.t('{0} on retry of a cut answer', b.retry) : l10n.t('no retry (no room)');
  return l10n.t(
    'budgets: {0} tokens per answer, {1}, {2} with thinking off; {3}',
    b.first,
    retry,
    b.thinkingOff,
    context,
  );
}
