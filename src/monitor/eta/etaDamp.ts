/**
 * What the state keeps of the ETA, damped. Pure. Once shown, the time left moves by at most
 * MAX_MOVE within DAMP_WINDOW_MS (against the countdown of what was shown) while the phase and
 * its quiet step stay the same; a change of phase (or step) lets it move freely. The range is
 * centred on the middle (what a reader takes for the estimate).
 */
import { contradictedReason } from '../../present/words/etaWords';
import type { EtaSource, RawEta, ReadsMoved } from './etaPlan';

/** The ETA a state keeps: absolute times, so a display counts down between signals. */
export interface ShownEta {
  readonly at: number;
  readonly readyAt: number;
  /** The range's ends (absent: a single number). */
  readonly lowAt?: number;
  readonly highAt?: number;
  readonly basis: string;
  readonly source?: EtaSource;
  readonly readsMoved?: ReadsMoved;
  readonly reason?: string;
  /** Phase/step it was made in (etaLoad's key). */
  readonly key?: string;
  /** When that phase/step began to be estimated. */
  readonly keySince?: number;
  /** The middles shown in this phase/step over the last DAMP_WINDOW_MS ([at, readyAt]): the bound's anchors. */
  readonly recent?: readonly (readonly [number, number])[];
}

/** Largest factor the time left may move by within DAMP_WINDOW_MS (the target is 1.5: kept under it). */
export const MAX_MOVE = 1.4;
export const DAMP_WINDOW_MS = 10_000;
/** Below this the ratio of two times left means nothing (2 s against 4 s is no jump a user sees). */
const FLOOR_MS = 5_000;
/** Anchors kept at most (the newest; a signal every 250 ms for the whole window is 48). */
const MAX_ANCHORS = 64;
/**
 * An anchor binds this long: the window, and the time it stays on screen until the next signal
 * replaces it (the watcher polls every 2 s).
 */
const ANCHOR_LIFE_MS = DAMP_WINDOW_MS + 2_000;

function clampMove(previousLeft: number, wanted: number, factor: number): number {
  const base = Math.max(FLOOR_MS, previousLeft);
  return Math.min(base * factor, Math.max(base / factor, wanted));
}

/** Widest a shown range may be on either side of its middle, as a share of the middle. */
const MAX_HALF_WIDTH = 0.75;

/**
 * The range as shown, centred on the estimate: a reader takes the middle of "40-80s left" for the
 * estimate, so the middle is it. As wide as the evidence's range, at most MAX_HALF_WIDTH of the
 * middle either side (a range of "3s-5m" says nothing a user can plan with).
 */
function centred(mid: number, low: number, high: number): { low: number; high: number } {
  const half = Math.min(MAX_HALF_WIDTH * mid, Math.max(0, (high - low) / 2));
  return { low: mid - half, high: mid + half };
}

/**
 * True when `wantedMs` (the raw middle at `now`) lies above the range `previous` showed, counted
 * down to `now`, by more than one window's bound could move the middle (1.4x over its upper end):
 * the range promised "ready by then" and the evidence says later. (A range too pessimistic is no
 * false promise; it comes down within the bound.)
 */
function contradicts(previous: ShownEta, wantedMs: number, now: number): boolean {
  const high = Math.max(FLOOR_MS, (previous.highAt ?? previous.readyAt) - now);
  return wantedMs > high * MAX_MOVE;
}

/**
 * The phase and quiet step an estimate was made in, without how it was made ("/forecast",
 * "/overrun"): the first evidence replacing a forecast, or a step outrunning its plan, is no
 * phase change a user sees, so it moves within the bound too.
 */
export function phaseKeyOf(key: string | undefined): string | undefined {
  return key?.replace(/\/(forecast|overrun)$/, '');
}

/**
 * The raw estimate at `now`, its middle moved from the previous one by no more than the bound
 * allows inside one phase (or step), its range centred on that middle.
 */
export function dampEta(previous: ShownEta | undefined, raw: RawEta, now: number): ShownEta {
  let mid = raw.midMs;
  let low = Math.min(raw.lowMs, mid);
  let high = Math.max(raw.highMs, mid);
  const samePhase = previous !== undefined && phaseKeyOf(previous.key) === phaseKeyOf(raw.key);
  const keySince = samePhase && previous.key === raw.key ? (previous.keySince ?? previous.at) : now;
  // (nothing shown in the last window binds: after a gap in the signals the estimate starts afresh)
  const bound = previous && samePhase && now >= previous.at && now - previous.at <= ANCHOR_LIFE_MS;
  // The evidence beats the forecast: a raw middle outside the range shown, further than one
  // window's bound could bring the middle, says the range was a false promise; it moves there at once.
  const contradicted = bound && contradicts(previous, raw.midMs, now);
  const recentKept = bound && !contradicted;
  if (bound && !contradicted) {
    const dt = Math.min(DAMP_WINDOW_MS, now - previous.at);
    const factor = MAX_MOVE ** (dt / DAMP_WINDOW_MS);
    // Against every middle shown in the last 10 s (not only the previous one: small steps compound).
    const anchors = [...(previous.recent ?? []), [previous.at, previous.readyAt] as const].filter(
      ([at]) => at >= now - ANCHOR_LIFE_MS,
    );
    const up = Math.min(...anchors.map(([, readyAt]) => Math.max(FLOOR_MS, readyAt - now) * MAX_MOVE));
    const down = Math.max(...anchors.map(([, readyAt]) => Math.max(FLOOR_MS, readyAt - now) / MAX_MOVE));
    // Within the bound, whatever the evidence says: it gets there over the next windows (the
    // estimators keep an uncertain time high enough to grow from; see QUIET_FLOOR_MS). A fall
    // takes only its step's share of the window's move (a 1.4x drop at once would leave the older
    // anchors asking for more than the newer allow), and the newer anchors win a conflict.
    const fall = Math.max(FLOOR_MS, previous.readyAt - now) / factor;
    mid = Math.min(up, Math.max(down, fall, raw.midMs));
    // The lower end: damped as before; the upper end is the evidence's (the bound is the middle's only).
    low = Math.min(mid, raw.midMs, clampMove((previous.lowAt ?? previous.readyAt) - now, low, factor));
    high = Math.max(mid, raw.midMs, high);
  }
  ({ low, high } = centred(mid, low, high));
  // The range always holds what the evidence says now, however far the middle is bound from it.
  low = Math.min(low, raw.midMs);
  high = Math.max(high, raw.midMs);
  const recent: (readonly [number, number])[] = [];
  if (recentKept && previous) {
    for (const anchor of [...(previous.recent ?? []), [previous.at, previous.readyAt] as const]) {
      if (anchor[0] < now - ANCHOR_LIFE_MS) continue;
      // (every middle shown binds: one dropped could be the one a reader compares with; the same
      // ready time again binds as the newer one does)
      if (recent[recent.length - 1]?.[1] === anchor[1]) recent.pop();
      recent.push(anchor);
    }
    recent.splice(0, Math.max(0, recent.length - MAX_ANCHORS));
  }
  return {
    at: now,
    readyAt: now + mid,
    lowAt: now + Math.max(0, low),
    highAt: now + high,
    basis: raw.basis,
    source: raw.source,
    ...(raw.readsMoved ? { readsMoved: raw.readsMoved } : {}),
    ...(raw.reason !== undefined || (contradicted && raw.readsMoved === undefined)
      ? { reason: raw.reason ?? contradictedReason() }
      : {}),
    key: raw.key,
    keySince,
    ...(recent.length ? { recent } : {}),
  };
}
