/**
 * Why the ETA says what it says, in words: the reasons the estimators (monitor/eta) give with a
 * number, shown in the tooltip after the estimate, in the display language. Pure functions of the
 * estimators' facts.
 */
import * as l10n from '@vscode/l10n';

/** Where the plan comes from: the previous loads of this server, or the defaults. */
type PlanSource = 'history' | 'defaults' | string;

const secs = (ms: number): number => Math.round(ms / 1000);

/** A step with its own bar, at the bar's rate. */
export function barRateReason(step: string): string {
  return l10n.t('{0}: at the rate of its bar', step);
}

/** The CUDA-graph batches, at the rate of those captured so far. */
export function graphBatchesReason(done: number, total: number): string {
  return l10n.t('CUDA graphs {0}/{1} at the rate of their batches', done, total);
}

/** The CUDA-graph batches before any was timed (the defaults' plan). */
export function graphBatchesUntimedReason(total: number): string {
  return l10n.t('CUDA graphs: {0} batch sizes to capture, none timed yet', total);
}

/** Whether a quiet step shows a bar that has no rate yet, or none. */
function barWords(hasBar: boolean): string {
  return hasBar ? l10n.t('its bar gives no rate yet') : l10n.t('no bar');
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
    ? l10n.t(
        '{0}: {1}; foreseen before the restart (an empty kernel cache), about {2} s ({3} s so far)',
        step,
        barWords(hasBar),
        secs(typicalMs),
        secs(elapsedMs),
      )
    : l10n.t(
        '{0}: {1}; such a step takes about {2} s in published logs ({3} s so far)',
        step,
        barWords(hasBar),
        secs(typicalMs),
        secs(elapsedMs),
      );
}

/** A quiet step nothing has timed: about half as long again as it has taken. */
export function untimedStepReason(step: string, hasBar: boolean, source: PlanSource, elapsedMs: number): string {
  return source === 'history'
    ? l10n.t(
        '{0}: {1}, and not in the previous loads to time it ({2} s so far): about half as long again as it has taken',
        step,
        barWords(hasBar),
        secs(elapsedMs),
      )
    : l10n.t(
        '{0}: {1}, and no previous load to time it ({2} s so far): about half as long again as it has taken',
        step,
        barWords(hasBar),
        secs(elapsedMs),
      );
}

/** What a step is called when no step is named and no phase is known. */
export function thisPhase(): string {
  return l10n.t('this phase');
}

/** A step past its plan: the estimate grows with it. */
export function overrunReason(step: string, source: PlanSource, elapsedMs: number): string {
  return source === 'history'
    ? l10n.t(
        '{0} is taking longer than in previous loads ({1} s so far): the estimate grows with it',
        step,
        secs(elapsedMs),
      )
    : l10n.t(
        '{0} is taking longer than the defaults said ({1} s so far): the estimate grows with it',
        step,
        secs(elapsedMs),
      );
}

/** The evidence moved outside the range shown: the estimate follows it at once. */
export function contradictedReason(): string {
  return l10n.t('what the load shows now is outside the range shown before: the estimate follows it');
}

/** Kernel compiles foreseen before the restart (an empty cache), each with its length. */
export function pendingCompileReason(steps: readonly { readonly kind: string; readonly ms: number }[]): string {
  return l10n.t(
    'a kernel compile foreseen (empty cache): {0}',
    steps.map((s) => l10n.t('{0} about {1} s', s.kind, secs(s.ms))).join(', '),
  );
}
