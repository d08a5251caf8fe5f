/**
 * Why the ETA says what it says, in words: the reasons the estimators (monitor/eta) give with a
 * number, shown in the tooltip after the estimate. Pure functions of the estimators' facts.
 */

/** Where the plan comes from: the previous loads of this server, or the defaults. */
type PlanSource = 'history' | 'defaults' | string;

const secs = (ms: number): number => Math.round(ms / 1000);

/** A step with its own bar, at the bar's rate. */
export function barRateReason(step: string): string {
  return `${step}: at the rate of its bar`;
}

/** The CUDA-graph batches, at the rate of those captured so far. */
export function graphBatchesReason(done: number, total: number): string {
  return `CUDA graphs ${done}/${total} at the rate of their batches`;
}

/** The CUDA-graph batches before any was timed (the defaults' plan). */
export function graphBatchesUntimedReason(total: number): string {
  return `CUDA graphs: ${total} batch sizes to capture, none timed yet`;
}

/** Whether a quiet step shows a bar that has no rate yet, or none. */
function barWords(hasBar: boolean): string {
  return hasBar ? 'its bar gives no rate yet' : 'no bar';
}

/** A quiet step whose typical length is known: foreseen before the restart, or from published logs. */
export function typicalStepReason(
  step: string,
  hasBar: boolean,
  foreseen: boolean,
  typicalMs: number,
  elapsedMs: number,
): string {
  return foreseen
    ? `${step}: ${barWords(hasBar)}; foreseen before the restart (an empty kernel cache), about ${secs(typicalMs)} s (${secs(elapsedMs)} s so far)`
    : `${step}: ${barWords(hasBar)}; such a step takes about ${secs(typicalMs)} s in published logs (${secs(elapsedMs)} s so far)`;
}

/** A quiet step nothing has timed: about half as long again as it has taken. */
export function untimedStepReason(step: string, hasBar: boolean, source: PlanSource, elapsedMs: number): string {
  return `${step}: ${barWords(hasBar)}, and ${source === 'history' ? 'not in the previous loads' : 'no previous load'} to time it (${secs(elapsedMs)} s so far): about half as long again as it has taken`;
}

/** What a step is called when no step is named and no phase is known. */
export const THIS_PHASE = 'this phase';

/** A step past its plan: the estimate grows with it. */
export function overrunReason(step: string, source: PlanSource, elapsedMs: number): string {
  return `${step} is taking longer than ${source === 'history' ? 'in previous loads' : 'the defaults said'} (${secs(elapsedMs)} s so far): the estimate grows with it`;
}

/** The evidence moved outside the range shown: the estimate follows it at once. */
export const CONTRADICTED_REASON = 'what the load shows now is outside the range shown before: the estimate follows it';

/** Kernel compiles foreseen before the restart (an empty cache), each with its length. */
export function pendingCompileReason(steps: readonly { readonly kind: string; readonly ms: number }[]): string {
  return `a kernel compile foreseen (empty cache): ${steps.map((s) => `${s.kind} about ${secs(s.ms)} s`).join(', ')}`;
}
