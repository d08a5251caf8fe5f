/**
 * The ETA's tooltip line in words: what is shown, where the plan comes from, and why it moved.
 * Pure; the monitor hands over the facts (the state, the shown ETA, how the reads moved).
 */
import * as l10n from '@vscode/l10n';
import type { ShownEta } from '../monitor/eta/etaDamp';
import { inWeightsFirstSeconds } from '../monitor/eta/etaLoad';
import { sourceOf, type EtaSource, type ReadsMoved } from '../monitor/eta/etaPlan';
import { etaText, formatBytes, formatRate } from './etaText';
import type { LoadState } from '../monitor/state/loadStateTypes';

/** "from this server's 3 previous loads", "from defaults for a 41.2 GB model on 8 GPUs (no previous load)". */
export function sourceText(state: LoadState, source: EtaSource): string {
  if (source === 'history') {
    const n = state.prior?.loads ?? 0;
    return n === 1 ? l10n.t("from this server's previous load") : l10n.t("from this server's {0} previous loads", n);
  }
  const total = state.io?.totalBytes ?? state.prior?.totalBytes;
  const gpus = state.gpu?.perGpu.length;
  const model = total !== undefined ? l10n.t('a {0} model', formatBytes(total)) : undefined;
  const gpuWords = gpus ? (gpus === 1 ? l10n.t('1 GPU') : l10n.t('{0} GPUs', gpus)) : undefined;
  if (model !== undefined && gpuWords !== undefined)
    return l10n.t('from defaults for {0} on {1} (no previous load)', model, gpuWords);
  const what = model ?? gpuWords;
  return what !== undefined
    ? l10n.t('from defaults for {0} (no previous load)', what)
    : l10n.t('from defaults (no previous load)');
}

/** "reads slowed: these files were not in the page cache (...)", "reads sped up: 900 MB/s now, ...". */
export function readsMovedText(moved: ReadsMoved): string {
  if (moved.kind === 'uncached')
    return l10n.t(
      'reads slowed: these files were not in the page cache (the forecast said {0} % cached)',
      moved.cachedPercent ?? '?',
    );
  return moved.nowBps < moved.pastBps
    ? l10n.t('reads slowed: {0} now, {1} in previous loads', formatRate(moved.nowBps), formatRate(moved.pastBps))
    : l10n.t('reads sped up: {0} now, {1} in previous loads', formatRate(moved.nowBps), formatRate(moved.pastBps));
}

/** Why no ETA is shown yet, when the reason is the weights' first seconds (the tooltip's ETA line then). */
export function etaPendingText(state: LoadState, now: number): string | undefined {
  if (state.eta !== undefined || !inWeightsFirstSeconds(state, now)) return undefined;
  return l10n.t('ETA: in a few seconds, once the bytes read give a rate');
}

/**
 * The tooltip's ETA line: what is shown, where the plan comes from, and why it moved when
 * something moved it ("ETA: 4-6m left, from defaults for a 41.2 GB model on 8 GPUs (no previous
 * load); reads slowed: these files were not in the page cache ...").
 */
export function etaTooltip(state: LoadState, eta: ShownEta, now: number): string {
  const text = etaText(eta, now) ?? '';
  const source = sourceText(state, eta.source ?? sourceOf(state));
  const why = [eta.readsMoved ? readsMovedText(eta.readsMoved) : undefined, eta.reason].filter(Boolean).join('; ');
  return why ? l10n.t('ETA: {0}, {1}; {2}', text, source, why) : l10n.t('ETA: {0}, {1}', text, source);
}
