/**
 * The ETA's tooltip line in words: what is shown, where the plan comes from, and why it moved.
 * Pure; the monitor hands over the facts (the state, the shown ETA, how the reads moved).
 */
import type { ShownEta } from '../monitor/eta/etaDamp';
import { inWeightsFirstSeconds } from '../monitor/eta/etaLoad';
import { sourceOf, type EtaSource, type ReadsMoved } from '../monitor/eta/etaPlan';
import { etaText, formatBytes, formatRate } from './etaText';
import type { LoadState } from '../monitor/state/loadStateTypes';

/** "from this server's 3 previous loads", "from defaults for a 41.2 GB model on 8 GPUs (no previous load)". */
export function sourceText(state: LoadState, source: EtaSource): string {
  if (source === 'history') {
    const n = state.prior?.loads ?? 0;
    return `from this server's ${n === 1 ? 'previous load' : `${n} previous loads`}`;
  }
  const total = state.io?.totalBytes ?? state.prior?.totalBytes;
  const gpus = state.gpu?.perGpu.length;
  const what = [
    total !== undefined ? `a ${formatBytes(total)} model` : undefined,
    gpus ? `${gpus} GPU${gpus === 1 ? '' : 's'}` : undefined,
  ].filter(Boolean);
  return `from defaults${what.length ? ` for ${what.join(' on ')}` : ''} (no previous load)`;
}

/** "reads slowed: these files were not in the page cache (...)", "reads sped up: 900 MB/s now, ...". */
export function readsMovedText(moved: ReadsMoved): string {
  if (moved.kind === 'uncached')
    return `reads slowed: these files were not in the page cache (the forecast said ${moved.cachedPercent ?? '?'} % cached)`;
  return `reads ${moved.nowBps < moved.pastBps ? 'slowed' : 'sped up'}: ${formatRate(moved.nowBps)} now, ${formatRate(moved.pastBps)} in previous loads`;
}

/** Why no ETA is shown yet, when the reason is the weights' first seconds (the tooltip's ETA line then). */
export function etaPendingText(state: LoadState, now: number): string | undefined {
  if (state.eta !== undefined || !inWeightsFirstSeconds(state, now)) return undefined;
  return 'ETA: in a few seconds, once the bytes read give a rate';
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
  return `ETA: ${text}, ${source}${why ? `; ${why}` : ''}`;
}
