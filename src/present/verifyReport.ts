/**
 * How a verification reads: one summary line (notification, status bar, servers view, dashboard,
 * CLI, agents' tools) and one table with the evidence, the request and what an agent suffers
 * (the log, the dashboard, the CLI, the agents' tools). Pure.
 */
import * as l10n from '@vscode/l10n';
import { checkTitle } from './words/checkWords';
import { budgetWords } from './words/verifyProgressWords';
import { truncate } from '../verify/judges';
import { verificationVerdictOf } from '../verify/verdict';
import type { CheckResult, VerifyResult } from '../verify/verifier';

function names(checks: readonly CheckResult[], status: CheckResult['status']): string[] {
  return checks.filter((c) => c.status === status).map((c) => checkTitle(c.name));
}

function statusWord(status: CheckResult['status']): string {
  switch (status) {
    case 'pass':
      return l10n.t('pass');
    case 'fail':
      return l10n.t('fail');
    case 'inconclusive':
      return l10n.t('inconclusive');
    case 'skipped':
      return l10n.t('skipped');
  }
}

/** The inconclusive checks by why: answers cut by max_tokens first, then those out of time. */
function inconclusiveGroups(result: VerifyResult): { readonly why: string; readonly names: string[] }[] {
  const budget = result.budgets?.retry ?? result.budgets?.first;
  const cut = result.checks
    .filter((c) => c.status === 'inconclusive' && c.cause === undefined)
    .map((c) => checkTitle(c.name));
  const slow = result.checks
    .filter((c) => c.status === 'inconclusive' && c.cause === 'time')
    .map((c) => checkTitle(c.name));
  return [
    {
      why:
        budget !== undefined
          ? l10n.t('answers cut at {0} tokens, a budget problem, not the parsers', budget)
          : l10n.t('answers cut by max_tokens'),
      names: cut,
    },
    {
      why: l10n.t('out of time with the model still reasoning or answering, a slow server, not the parsers'),
      names: slow,
    },
  ].filter((g) => g.names.length > 0);
}

/** One line for a notification, the status bar tooltip, the servers view and the agents. */
export function summarize(result: VerifyResult): string {
  const failed = names(result.checks, 'fail');
  const inconclusive = names(result.checks, 'inconclusive');
  const skipped = names(result.checks, 'skipped');
  const groups = inconclusiveGroups(result);
  // Answers cut by the budget alone read as they always did; out of time says so.
  const slow = result.checks.some((c) => c.status === 'inconclusive' && c.cause === 'time');
  const inconclusiveTail = slow
    ? l10n.t('inconclusive: {0}', groups.map((g) => `${g.names.join(', ')} (${g.why.split(/[,，]/)[0]})`).join('; '))
    : l10n.t('inconclusive: {0}', inconclusive.join(', '));
  const also = [
    ...(inconclusive.length > 0 ? [inconclusiveTail] : []),
    ...(skipped.length > 0 ? [l10n.t('skipped: {0}', skipped.join(', '))] : []),
  ];
  const tail = also.length > 0 ? ` (${also.join('; ')})` : '';
  switch (verificationVerdictOf(result)) {
    case 'verified':
      return l10n.t('Parsers verified for agents ({0} checks)', result.checks.length);
    case 'failed':
      return l10n.t('Parser check failed: {0}{1}', failed.join(', '), tail);
    case 'inconclusive': {
      const why = groups.map((g) => `(${g.why}): ${g.names.join(', ')}`).join('; ');
      const skippedTail = skipped.length > 0 ? ` (${l10n.t('skipped: {0}', skipped.join(', '))})` : '';
      return l10n.t('Parser check inconclusive {0}{1}', why, skippedTail);
    }
    case 'incomplete':
      return l10n.t('Parser check incomplete, skipped: {0}', skipped.join(', '));
  }
}

/** The message after a watch reached ready and the checks ran. */
export function readySummary(summary: string): string {
  return l10n.t('ready, {0}', `${summary.charAt(0).toLowerCase()}${summary.slice(1)}`);
}

/** Fixed-width table for the log; under each check that did not pass, its request and what agents suffer. */
export function formatTable(result: VerifyResult, evidenceWidth = 120): string {
  const header = [l10n.t('check'), l10n.t('result'), l10n.t('evidence')] as const;
  const titles = result.checks.map((c) => checkTitle(c.name));
  const nameWidth = Math.max(5, header[0].length, ...titles.map((t) => t.length));
  const statusWidth = 12;
  const row = (a: string, b: string, c: string): string =>
    `${a.padEnd(nameWidth)}  ${b.padEnd(statusWidth)}  ${c}`.trimEnd();
  const indent = ' '.repeat(nameWidth + statusWidth + 4);
  const lines = [row(...header), row('-'.repeat(nameWidth), '-'.repeat(statusWidth), '-'.repeat(8))];
  for (const [i, c] of result.checks.entries()) {
    lines.push(row(titles[i]!, statusWord(c.status), truncate(c.evidence, evidenceWidth)));
    if (c.consequence !== undefined) lines.push(indent + l10n.t('for agents: {0}', c.consequence));
    if (c.request !== undefined) lines.push(indent + l10n.t('request: {0}', truncate(c.request, evidenceWidth)));
  }
  if (result.budgets !== undefined) lines.push(budgetWords(result.budgets));
  if (result.model !== undefined) lines.push(l10n.t('model: {0}', result.model));
  return lines.join('\n');
}
