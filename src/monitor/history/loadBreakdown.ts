/**
 * Every load explained (docs/load-breakdown.md): a finished load's phases with their start,
 * duration and rate, against the same server's previous loads, and the biggest difference
 * explained only from what was measured (the page-cache share, the read rate, a step present in
 * one load and not the other). Pure: the words are in present/loadSummary.ts.
 */
import type { ActivityKind, LoadPhase } from '../../engine/events';
import { watchedFromStart, type LoadRecord, type LoadStep, type SeenStep } from './history';
import type { LoadState } from '../state/loadStateTypes';

/** The parts of a load that last (ready is a moment); `restart`: from the restart to the new process's first phase. */
export type TimedPhase = 'restart' | Exclude<LoadPhase, 'ready'>;
export const TIMED_PHASES: readonly TimedPhase[] = [
  'restart',
  'starting',
  'loading weights',
  'allocating KV cache',
  'capturing CUDA graphs',
  'warming up',
];

/** Two loads this close (ms, or share of the previous total, whichever is larger) took the same time. */
export const SAME_MS = 2_000;
export const SAME_SHARE = 0.05;
/** Page-cache shares this far apart explain a weights phase that moved the same way. */
export const CACHE_SHARE_GAP = 0.2;
/** Read rates this many times apart explain a weights phase that moved the same way. */
export const RATE_RATIO = 1.25;
/** A step explains a phase's difference when it accounts for at least this share of it. */
export const STEP_SHARE = 0.25;
/** Previous loads a breakdown keeps per phase (the dashboard's bars). */
export const PREVIOUS_LOADS = 5;

/** The steps that compile or tune (a first start pays them; a cache spares the next). */
const JIT_STEPS: readonly ActivityKind[] = ['deepgemm', 'torch-compile', 'flashinfer-jit', 'autotune'];

export interface PhaseBreakdown {
  readonly phase: TimedPhase;
  /** ms after the load's start. */
  readonly startMs: number;
  readonly ms: number;
  /** The phase in the previous comparable loads, newest first (undefined: that load had none). */
  readonly previousMs: readonly (number | undefined)[];
}

export interface WeightsFacts {
  /** The weights' rate, bytes/s: storage reads (cold), page-cache reads (warm), or model size / phase (mean). */
  readonly bps: number | undefined;
  readonly source: 'cold' | 'warm' | 'mean' | undefined;
  /** Share of the weights found in the page cache (0..1), when measured. */
  readonly cachedShare: number | undefined;
}

/** Why this load differs from the last one, from evidence only. */
export type Reason =
  | { readonly kind: 'page cache'; readonly share: number; readonly previousShare: number }
  | { readonly kind: 'read rate'; readonly bps: number; readonly previousBps: number }
  /** A step this load had and the last did not (`now`), or the reverse. */
  | { readonly kind: 'step'; readonly step: ActivityKind; readonly ms: number; readonly now: boolean }
  /** No cause measured: only where the time went. */
  | { readonly kind: 'phase'; readonly phase: TimedPhase; readonly ms: number; readonly previousMs: number };

export interface Comparison {
  readonly previousTotalMs: number;
  /** Positive: slower than last time. */
  readonly deltaMs: number;
  /** Within SAME_MS / SAME_SHARE of last time. */
  readonly same: boolean;
  readonly reason: Reason | undefined;
}

export interface LoadBreakdown {
  readonly startedAt: number;
  readonly totalMs: number;
  readonly phases: readonly PhaseBreakdown[];
  readonly steps: readonly LoadStep[];
  readonly weights: WeightsFacts | undefined;
  /** The previous comparable loads, newest first (at most PREVIOUS_LOADS). */
  readonly previous: readonly { readonly startedAt: number; readonly totalMs: number }[];
  /** Against the last comparable load; undefined on a first load. */
  readonly comparison: Comparison | undefined;
}

/** A load that reached ready and was watched (nearly) from its start: its phases are true. */
export function comparable(r: LoadRecord): boolean {
  if (r.outcome !== 'ready' || r.totalMs === undefined || !(r.totalMs > 0)) return false;
  return watchedFromStart(r);
}

function phaseMsOf(r: LoadRecord, phase: TimedPhase): number | undefined {
  if (phase === 'restart') return restartMsOf(r);
  const ms = r.phaseMs?.[phase];
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : undefined;
}

/** The restart to the first phase seen (an older record: to the weights, less the start phase). */
function restartMsOf(r: LoadRecord): number | undefined {
  const starts = Object.values(r.phaseStartMs ?? {}).filter((v): v is number => typeof v === 'number');
  if (starts.length) return Math.max(0, Math.min(...starts));
  if (r.startingMs === undefined) return undefined;
  return Math.max(0, r.startingMs - (r.phaseMs?.starting ?? 0));
}

function stepsOf(r: LoadRecord): readonly LoadStep[] {
  return Array.isArray(r.steps) ? r.steps : [];
}

/** The page-cache share of a load: its own reads first, else the residency measured before the restart. */
export function cachedShareOfRecord(r: LoadRecord): number | undefined {
  if (r.cachedShare !== undefined) return r.cachedShare;
  if (r.residentBytesAtStart !== undefined && r.totalBytes) return Math.min(1, r.residentBytesAtStart / r.totalBytes);
  return undefined;
}

export function weightsFacts(r: LoadRecord): WeightsFacts | undefined {
  const ms = phaseMsOf(r, 'loading weights');
  if (ms === undefined) return undefined;
  const cachedShare = cachedShareOfRecord(r);
  const warmish = cachedShare !== undefined ? cachedShare >= 0.5 : r.warmBps !== undefined && r.coldBps === undefined;
  const coldish = cachedShare !== undefined ? cachedShare < 0.5 : r.coldBps !== undefined && r.warmBps === undefined;
  if (warmish && r.warmBps !== undefined) return { bps: r.warmBps, source: 'warm', cachedShare };
  if (coldish && r.coldBps !== undefined) return { bps: r.coldBps, source: 'cold', cachedShare };
  const mean = r.totalBytes && ms > 0 ? (r.totalBytes / ms) * 1000 : r.meanBps;
  return { bps: mean, source: mean !== undefined ? 'mean' : undefined, cachedShare };
}

function stepMs(steps: readonly LoadStep[], kind: ActivityKind, within?: { startMs: number; ms: number }): number {
  return steps
    .filter((s) => s.kind === kind)
    .filter((s) => !within || (s.startMs < within.startMs + within.ms && s.startMs + s.ms > within.startMs))
    .reduce((sum, s) => sum + s.ms, 0);
}

/** A step in one load and not in the other that moved the phase the way the total moved. */
function stepReason(
  kinds: readonly ActivityKind[],
  current: LoadRecord,
  last: LoadRecord,
  phase: PhaseBreakdown,
  lastPhaseStartMs: number | undefined,
  phaseDelta: number,
): Reason | undefined {
  // A record from before steps were kept says nothing of its steps: no "none last time" from it.
  if (current.phaseStartMs === undefined || last.phaseStartMs === undefined) return undefined;
  const lastWindow =
    lastPhaseStartMs !== undefined ? { startMs: lastPhaseStartMs, ms: phaseMsOf(last, phase.phase) ?? 0 } : undefined;
  let best: Reason | undefined;
  for (const kind of kinds) {
    const nowMs = stepMs(stepsOf(current), kind, phase);
    const thenMs = stepMs(stepsOf(last), kind, lastWindow);
    const candidate =
      phaseDelta > 0 && nowMs > 0 && thenMs === 0
        ? { ms: nowMs, now: true }
        : phaseDelta < 0 && thenMs > 0 && nowMs === 0
          ? { ms: thenMs, now: false }
          : undefined;
    if (!candidate || candidate.ms < STEP_SHARE * Math.abs(phaseDelta)) continue;
    if (!best || (best.kind === 'step' && candidate.ms > best.ms)) best = { kind: 'step', step: kind, ...candidate };
  }
  return best;
}

function reasonFor(
  current: LoadRecord,
  last: LoadRecord,
  phases: readonly PhaseBreakdown[],
  weights: WeightsFacts | undefined,
  deltaMs: number,
): Reason | undefined {
  // The phase that moved most the way the whole load moved (a phase missing on one side counts as 0).
  const candidates = TIMED_PHASES.map((phase) => {
    const now = phases.find((p) => p.phase === phase)?.ms ?? 0;
    const then = phaseMsOf(last, phase) ?? 0;
    return { phase, now, then, delta: now - then };
  }).filter((c) => Math.sign(c.delta) === Math.sign(deltaMs) && c.delta !== 0);
  const top = candidates.sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta))[0];
  if (!top) return undefined;
  const phase: PhaseBreakdown = phases.find((p) => p.phase === top.phase) ?? {
    phase: top.phase,
    startMs: 0,
    ms: 0,
    previousMs: [],
  };
  const lastStart = top.phase === 'restart' ? 0 : last.phaseStartMs?.[top.phase];
  const slower = top.delta > 0;
  if (top.phase === 'loading weights') {
    const then = weightsFacts(last);
    const share = weights?.cachedShare;
    const previousShare = then?.cachedShare;
    if (
      share !== undefined &&
      previousShare !== undefined &&
      Math.abs(share - previousShare) >= CACHE_SHARE_GAP &&
      (slower ? share < previousShare : share > previousShare)
    )
      return { kind: 'page cache', share, previousShare };
    if (
      weights?.bps !== undefined &&
      then?.bps !== undefined &&
      weights.source === then.source &&
      weights.bps > 0 &&
      then.bps > 0 &&
      Math.max(weights.bps / then.bps, then.bps / weights.bps) >= RATE_RATIO &&
      (slower ? weights.bps < then.bps : weights.bps > then.bps)
    )
      return { kind: 'read rate', bps: weights.bps, previousBps: then.bps };
    const post = stepReason(['post-shards'], current, last, phase, lastStart, top.delta);
    if (post) return post;
  } else {
    const jit = stepReason(JIT_STEPS, current, last, phase, lastStart, top.delta);
    if (jit) return jit;
  }
  return { kind: 'phase', phase: top.phase, ms: top.now, previousMs: top.then };
}

/**
 * The breakdown of one load (its record) against the loads before it (newest first). Undefined
 * when the load did not reach ready or was not watched from (nearly) its start.
 */
export function breakdownOf(record: LoadRecord, earlier: readonly LoadRecord[]): LoadBreakdown | undefined {
  if (!comparable(record) || record.totalMs === undefined) return undefined;
  const previous = earlier.filter(comparable).slice(0, PREVIOUS_LOADS);
  const starts = record.phaseStartMs ?? {};
  const phases: PhaseBreakdown[] = TIMED_PHASES.flatMap((phase) => {
    const ms = phaseMsOf(record, phase);
    const startMs = phase === 'restart' ? 0 : starts[phase];
    if (ms === undefined || startMs === undefined || (phase === 'restart' && ms === 0)) return [];
    return [{ phase, startMs, ms, previousMs: previous.map((r) => phaseMsOf(r, phase)) }];
  });
  const weights = weightsFacts(record);
  const last = previous[0];
  let comparison: Comparison | undefined;
  if (last?.totalMs !== undefined) {
    const deltaMs = record.totalMs - last.totalMs;
    const same = Math.abs(deltaMs) < Math.max(SAME_MS, SAME_SHARE * last.totalMs);
    comparison = {
      previousTotalMs: last.totalMs,
      deltaMs,
      same,
      reason: same ? undefined : reasonFor(record, last, phases, weights, deltaMs),
    };
  }
  return {
    startedAt: record.startedAt,
    totalMs: record.totalMs,
    phases,
    steps: stepsOf(record),
    weights,
    previous: previous.map((r) => ({ startedAt: r.startedAt, totalMs: r.totalMs! })),
    comparison,
  };
}

/**
 * The breakdown of the newest load in a history (newest first) that can have one: a look at a
 * server found ready (a window reloaded) records a load whose phases it did not see, and is skipped.
 */
export function latestBreakdown(records: readonly LoadRecord[]): LoadBreakdown | undefined {
  const i = records.findIndex(comparable);
  return i < 0 ? undefined : breakdownOf(records[i]!, records.slice(i + 1));
}

// --- the steps of a load, as the watch's states show them ---

/** The steps seen in one load so far; a new load (another start) begins a new list. */
export interface StepTrack {
  readonly loadKey: number;
  readonly steps: readonly SeenStep[];
}

const MAX_STEPS = 32;

function loadKeyOf(state: LoadState): number {
  return state.restartRequestedAt ?? state.processStartedAt ?? state.watchStartedAt;
}

/** Folds one state into the steps seen: a step begins when the state names one, ends when it names another or none. */
export function trackSteps(track: StepTrack | undefined, state: LoadState, at: number): StepTrack {
  const loadKey = loadKeyOf(state);
  let steps = track && track.loadKey === loadKey ? track.steps : [];
  const open = steps.length > 0 && steps[steps.length - 1]!.until === undefined ? steps[steps.length - 1] : undefined;
  const activity = state.readyAt === undefined && state.failure === undefined ? state.activity : undefined;
  if (open && (!activity || activity.kind !== open.kind || activity.since !== open.since)) {
    steps = [...steps.slice(0, -1), { ...open, until: at }];
  }
  const stillOpen = open && activity && activity.kind === open.kind && activity.since === open.since;
  if (activity && !stillOpen) steps = [...steps, { kind: activity.kind, since: activity.since }].slice(-MAX_STEPS);
  return track && track.loadKey === loadKey && steps === track.steps ? track : { loadKey, steps };
}
