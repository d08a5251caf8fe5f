/** The words of load advice, the same in every front (CLI, VS Code, the ready notification). */
import type { Advice, AdviceResult } from '../engine/advice/rules';
import { formatMs } from '../engine/advice/rules';
import type { EngineVersion } from '../engine/advice/version';
import { engineById, type EngineId } from '../engine/engine';

/** "1 suggestion: Load the weights with 8 threads", "2 suggestions: A; B"; undefined for none. */
export function adviceSummary(result: AdviceResult): string | undefined {
  const n = result.advice.length;
  if (n === 0) return undefined;
  return `${n} suggestion${n === 1 ? '' : 's'} for a faster load: ${result.advice.map((a) => a.title).join('; ')}`;
}

/** The header line: what the load was and what is advised. */
export function adviceHeader(server: string, result: AdviceResult, totalMs: number): string {
  const largest = result.largest ? `; largest phase: ${result.largest.phase} ${formatMs(result.largest.ms)}` : '';
  const n = result.advice.length;
  const what =
    n === 0 ? 'no suggestion (no advice has its evidence in this load)' : `${n} suggestion${n === 1 ? '' : 's'}`;
  return `${server}: the last load took ${formatMs(totalMs)}${largest}: ${what}`;
}

/** One advice as lines: title and action, evidence, the figure, its sources, why it cannot be applied. */
export function adviceLines(advice: Advice, index: number): string[] {
  return [
    `${index}. ${advice.title}: ${advice.action}`,
    `   evidence: ${advice.evidence.join('; ')}`,
    `   published: ${advice.figure}`,
    `   source: ${advice.sources.join(' ')}`,
    ...(advice.notApplicable ? [`   not applied from here: ${advice.notApplicable}`] : []),
  ];
}

export function versionLine(engine: EngineId, version: EngineVersion | undefined): string {
  const name = engineById(engine).label;
  return version ? `${name} ${version.text} (from ${version.source})` : `${name} version unknown`;
}
