/**
 * A load's breakdown in words (monitor/history/loadBreakdown.ts has the figures): one line for the
 * ready notification, the CLI and the agents' tools, and the dashboard's per-phase rows. Pure.
 */
import * as l10n from '@vscode/l10n';
import type { ActivityKind } from '../engine/events';
import { formatRate } from './etaText';
import type { LoadBreakdown, Reason, TimedPhase, WeightsFacts } from '../monitor/history/loadBreakdown';
import { formatDuration } from '../util/duration';

/** A timed phase's short name in the display language ("weights", "KV cache"). */
export function phaseShortWord(phase: TimedPhase): string {
  switch (phase) {
    case 'restart':
      return l10n.t('restart');
    case 'starting':
      return l10n.t('start');
    case 'loading weights':
      return l10n.t('weights');
    case 'allocating KV cache':
      return l10n.t('KV cache');
    case 'capturing CUDA graphs':
      return l10n.t('CUDA graphs');
    case 'warming up':
      return l10n.t('warm-up');
  }
}

/** A step's name in the display language ("DeepGEMM compile"). */
export function stepWord(kind: ActivityKind): string {
  switch (kind) {
    case 'deepgemm':
      return l10n.t('DeepGEMM compile');
    case 'torch-compile':
      return 'torch.compile';
    case 'piecewise-graphs':
      return l10n.t('piecewise CUDA graphs');
    case 'flashinfer-jit':
      return l10n.t('flashinfer JIT compile');
    case 'autotune':
      return l10n.t('kernel autotuning');
    case 'post-shards':
      return l10n.t('processing after the last shard');
  }
}

/** A phase is named in the line when it took at least this share of the load. */
const NAMED_SHARE = 0.1;
const MAX_NAMED = 3;

/** "4 %" */
export function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

/** "cold at 1.50 GB/s", "from the page cache at 3.00 GB/s", "40 % from the page cache at 900 MB/s". */
export function weightsWords(w: WeightsFacts): string {
  const share = w.cachedShare;
  const where =
    share === undefined
      ? w.source === 'cold'
        ? l10n.t('cold')
        : w.source === 'warm'
          ? l10n.t('from the page cache')
          : undefined
      : share < 0.1
        ? l10n.t('cold')
        : share > 0.9
          ? l10n.t('from the page cache')
          : l10n.t('{0} from the page cache', percent(share));
  const rate = w.bps !== undefined && w.bps > 0 ? formatRate(w.bps) : undefined;
  if (where !== undefined && rate !== undefined) return l10n.t('{0} at {1}', where, rate);
  if (rate !== undefined) return l10n.t('at {0}', rate);
  return where ?? '';
}

/** "weights 6m 2s cold at 1.50 GB/s, CUDA graphs 1m 40s (DeepGEMM compile 1m 20s)" */
function phasesWords(b: LoadBreakdown): string {
  const long = b.phases.filter((p) => p.ms >= NAMED_SHARE * b.totalMs && p.ms >= 1000);
  const named = (long.length ? long : [...b.phases].sort((x, y) => y.ms - x.ms).slice(0, 1))
    .sort((x, y) => y.ms - x.ms)
    .slice(0, MAX_NAMED)
    .sort((x, y) => x.startMs - y.startMs);
  return named
    .map((p) => {
      const w = p.phase === 'loading weights' && b.weights ? weightsWords(b.weights) : '';
      const took = w
        ? l10n.t('{0} {1} {2}', phaseShortWord(p.phase), formatDuration(p.ms), w)
        : l10n.t('{0} {1}', phaseShortWord(p.phase), formatDuration(p.ms));
      const steps = b.steps.filter(
        (s) => s.ms >= NAMED_SHARE * b.totalMs && s.startMs >= p.startMs && s.startMs < p.startMs + p.ms,
      );
      const inside = steps.map((s) => l10n.t('{0} {1}', stepWord(s.kind), formatDuration(s.ms)));
      return inside.length ? l10n.t('{0} ({1})', took, inside.join(', ')) : took;
    })
    .join(', ');
}

export function reasonWords(reason: Reason): string {
  switch (reason.kind) {
    case 'page cache':
      return l10n.t(
        'the page cache held {0} of the weights, {1} last time',
        percent(reason.share),
        percent(reason.previousShare),
      );
    case 'read rate':
      return l10n.t(
        'the weights were read at {0}, {1} last time',
        formatRate(reason.bps),
        formatRate(reason.previousBps),
      );
    case 'step':
      return reason.now
        ? l10n.t('{0} {1} this time, none last time', stepWord(reason.step), formatDuration(reason.ms))
        : l10n.t('no {0} this time ({1} last time)', stepWord(reason.step), formatDuration(reason.ms));
    case 'phase': {
      const word = phaseShortWord(reason.phase);
      if (reason.ms === 0)
        return l10n.t('no {0} phase this time ({1} last time)', word, formatDuration(reason.previousMs));
      if (reason.previousMs === 0) return l10n.t('{0} {1} this time, none last time', word, formatDuration(reason.ms));
      return l10n.t('{0} took {1}, {2} last time', word, formatDuration(reason.ms), formatDuration(reason.previousMs));
    }
  }
}

/** "2m 10s slower than last time: the page cache held 4 % of the weights, 96 % last time" */
export function comparisonWords(b: LoadBreakdown): string {
  const c = b.comparison;
  if (!c) return l10n.t('the first load on record here');
  if (c.same) return l10n.t('about as long as last time ({0})', formatDuration(c.previousTotalMs));
  const delta = formatDuration(Math.abs(c.deltaMs));
  const how = c.deltaMs > 0 ? l10n.t('{0} slower than last time', delta) : l10n.t('{0} faster than last time', delta);
  return c.reason ? l10n.t('{0}: {1}', how, reasonWords(c.reason)) : how;
}

/**
 * "loaded in 9m 12s: weights 6m 2s cold at 1.50 GB/s, CUDA graphs 1m 40s; 2m 10s slower than
 * last time: the page cache held 4 % of the weights, 96 % last time"
 */
export function breakdownLine(b: LoadBreakdown): string {
  const phases = phasesWords(b);
  const total = formatDuration(b.totalMs);
  return phases
    ? l10n.t('loaded in {0}: {1}; {2}', total, phases, comparisonWords(b))
    : l10n.t('loaded in {0}; {1}', total, comparisonWords(b));
}

/** One row of the dashboard's per-phase bars: this load and the previous ones, newest first. */
export interface PhaseRow {
  readonly label: string;
  readonly ms: number;
  /** "6m 2s cold at 1.50 GB/s (last time 1m 10s)". */
  readonly text: string;
  readonly previousMs: readonly (number | null)[];
}

export function phaseRows(b: LoadBreakdown): PhaseRow[] {
  return b.phases.map((p) => {
    const extra = p.phase === 'loading weights' && b.weights ? weightsWords(b.weights) : '';
    const last = p.previousMs[0];
    const took = extra ? l10n.t('{0} {1}', formatDuration(p.ms), extra) : formatDuration(p.ms);
    const lastWord = last === undefined ? l10n.t('none') : formatDuration(last);
    return {
      label: phaseShortWord(p.phase),
      ms: p.ms,
      text: b.previous.length ? l10n.t('{0}; last time {1}', took, lastWord) : took,
      previousMs: p.previousMs.map((ms) => ms ?? null),
    };
  });
}
