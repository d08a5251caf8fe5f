/** The words of load advice, the same in every front (CLI, VS Code, the ready notification). */
import * as l10n from '@vscode/l10n';
import type { Advice, AdviceResult } from '../engine/advice/rules';
import { formatMs } from '../engine/advice/rules';
import type { EngineVersion } from '../engine/advice/version';
import { engineById, type EngineId } from '../engine/engine';
import { phaseWord } from './stateWords';

/** "1 suggestion: Load the weights with 8 threads", "2 suggestions: A; B"; undefined for none. */
export function adviceSummary(result: AdviceResult): string | undefined {
  const n = result.advice.length;
  if (n === 0) return undefined;
  const titles = result.advice.map((a) => a.title).join('; ');
  return n === 1
    ? l10n.t('1 suggestion for a faster load: {0}', titles)
    : l10n.t('{0} suggestions for a faster load: {1}', n, titles);
}

/** The header line: what the load was and what is advised. */
export function adviceHeader(server: string, result: AdviceResult, totalMs: number): string {
  const n = result.advice.length;
  const what =
    n === 0
      ? l10n.t('no suggestion (no advice has its evidence in this load)')
      : n === 1
        ? l10n.t('1 suggestion')
        : l10n.t('{0} suggestions', n);
  return result.largest
    ? l10n.t(
        '{0}: the last load took {1}; largest phase: {2} {3}: {4}',
        server,
        formatMs(totalMs),
        phaseWord(result.largest.phase),
        formatMs(result.largest.ms),
        what,
      )
    : l10n.t('{0}: the last load took {1}: {2}', server, formatMs(totalMs), what);
}

/** One advice as lines: title and action, evidence, the figure, its sources, why it cannot be applied. */
export function adviceLines(advice: Advice, index: number): string[] {
  return [
    `${index}. ${advice.title}: ${advice.action}`,
    `   ${l10n.t('evidence: {0}', advice.evidence.join('; '))}`,
    `   ${l10n.t('published: {0}', advice.figure)}`,
    `   ${l10n.t('source: {0}', advice.sources.join(' '))}`,
    ...(advice.notApplicable ? [`   ${l10n.t('not applied from here: {0}', advice.notApplicable)}`] : []),
  ];
}

export function versionLine(engine: EngineId, version: EngineVersion | undefined): string {
  const name = engineById(engine).label;
  return version
    ? l10n.t('{0} {1} (from {2})', name, version.text, version.source)
    : l10n.t('{0} version unknown', name);
}
