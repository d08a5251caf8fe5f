/**
 * A load's breakdown in words (monitor/history/loadBreakdown.ts has the figures): one line for the
 * ready notification, the CLI and the agents' tools, and the dashboard's per-phase rows. Pure.
 */
import type { ActivityKind } from '../engine/events';
import { formatRate } from './etaText';
import type { LoadBreakdown, Reason, TimedPhase, WeightsFacts } from '../monitor/history/loadBreakdown';
import { formatDuration } from '../util/duration';

export const PHASE_WORDS: Readonly<Record<TimedPhase, string>> = {
  restart: 'restart',
  starting: 'start',
  'loading weights': 'weights',
  'allocating KV cache': 'KV cache',
  'capturing CUDA graphs': 'CUDA graphs',
  'warming up': 'warm-up',
};

export const STEP_WORDS: Readonly<Record<ActivityKind, string>> = {
  deepgemm: 'DeepGEMM compile',
  'torch-compile': 'torch.compile',
  'piecewise-graphs': 'piecewise CUDA graphs',
  'flashinfer-jit': 'flashinfer JIT compile',
  autotune: 'kernel autotuning',
  'post-shards': 'processing after the last shard',
};

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
        ? 'cold'
        : w.source === 'warm'
          ? 'from the page cache'
          : undefined
      : share < 0.1
        ? 'cold'
        : share > 0.9
          ? 'from the page cache'
          : `${percent(share)} from the page cache`;
  const rate = w.bps !== undefined && w.bps > 0 ? `at ${formatRate(w.bps)}` : undefined;
  return [where, rate].filter(Boolean).join(' ');
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
      const parts = [`${PHASE_WORDS[p.phase]} ${formatDuration(p.ms)}`];
      if (p.phase === 'loading weights' && b.weights) {
        const w = weightsWords(b.weights);
        if (w) parts.push(w);
      }
      const steps = b.steps.filter(
        (s) => s.ms >= NAMED_SHARE * b.totalMs && s.startMs >= p.startMs && s.startMs < p.startMs + p.ms,
      );
      const inside = steps.map((s) => `${STEP_WORDS[s.kind]} ${formatDuration(s.ms)}`);
      return `${parts.join(' ')}${inside.length ? ` (${inside.join(', ')})` : ''}`;
    })
    .join(', ');
}

export function reasonWords(reason: Reason): string {
  switch (reason.kind) {
    case 'page cache':
      return `the page cache held ${percent(reason.share)} of the weights, ${percent(reason.previousShare)} last time`;
    case 'read rate':
      return `the weights were read at ${formatRate(reason.bps)}, ${formatRate(reason.previousBps)} last time`;
    case 'step':
      return reason.now
        ? `${STEP_WORDS[reason.step]} ${formatDuration(reason.ms)} this time, none last time`
        : `no ${STEP_WORDS[reason.step]} this time (${formatDuration(reason.ms)} last time)`;
    case 'phase': {
      const word = PHASE_WORDS[reason.phase];
      if (reason.ms === 0) return `no ${word} phase this time (${formatDuration(reason.previousMs)} last time)`;
      if (reason.previousMs === 0) return `${word} ${formatDuration(reason.ms)} this time, none last time`;
      return `${word} took ${formatDuration(reason.ms)}, ${formatDuration(reason.previousMs)} last time`;
    }
  }
}

/** "2m 10s slower than last time: the page cache held 4 % of the weights, 96 % last time" */
export function comparisonWords(b: LoadBreakdown): string {
  const c = b.comparison;
  if (!c) return 'the first load on record here';
  if (c.same) return `about as long as last time (${formatDuration(c.previousTotalMs)})`;
  const how = `${formatDuration(Math.abs(c.deltaMs))} ${c.deltaMs > 0 ? 'slower' : 'faster'} than last time`;
  return c.reason ? `${how}: ${reasonWords(c.reason)}` : how;
}

/**
 * "loaded in 9m 12s: weights 6m 2s cold at 1.50 GB/s, CUDA graphs 1m 40s; 2m 10s slower than
 * last time: the page cache held 4 % of the weights, 96 % last time"
 */
export function breakdownLine(b: LoadBreakdown): string {
  const phases = phasesWords(b);
  return `loaded in ${formatDuration(b.totalMs)}${phases ? `: ${phases}` : ''}; ${comparisonWords(b)}`;
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
    const then = b.previous.length ? `; last time ${last === undefined ? 'none' : formatDuration(last)}` : '';
    return {
      label: PHASE_WORDS[p.phase],
      ms: p.ms,
      text: `${formatDuration(p.ms)}${extra ? ` ${extra}` : ''}${then}`,
      previousMs: p.previousMs.map((ms) => ms ?? null),
    };
  });
}
