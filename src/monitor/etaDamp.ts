/**
 * What the state keeps of the ETA, damped. Pure. Once shown, the time left moves by at most
 * MAX_MOVE within DAMP_WINDOW_MS (against the countdown of what was shown) while the phase and
 * its quiet step stay the same; a change of phase (or step) lets it move freely. The range's ends
 * take up what the middle may not: a range that widens, not a number that jumps.
 */
import type { EtaSource, RawEta } from './etaLoad';

/** The ETA a state keeps: absolute times, so a display counts down between signals. */
export interface ShownEta {
  readonly at: number;
  readonly readyAt: number;
  /** The range's ends (absent: a single number). */
  readonly lowAt?: number;
  readonly highAt?: number;
  readonly basis: string;
  readonly source?: EtaSource;
  readonly reason?: string;
  /** Phase/step it was made in (etaLoad's key). */
  readonly key?: string;
  /** When that phase/step began to be estimated. */
  readonly keySince?: number;
  /** The middles shown in this phase/step over the last DAMP_WINDOW_MS ([at, readyAt], about one a second): the bound's anchors. */
  readonly recent?: readonly (readonly [number, number])[];
}

/** Largest factor the time left may move by within DAMP_WINDOW_MS (the target is 1.5: kept under it). */
export const MAX_MOVE = 1.4;
export const DAMP_WINDOW_MS = 10_000;
/** Below this the ratio of two times left means nothing (2 s against 4 s is no jump a user sees). */
const FLOOR_MS = 5_000;
/** Anchors kept this far apart (the bound holds against each of them). */
const ANCHOR_MS = 1_000;
/**
 * An anchor binds this long: the window, and the time it stays on screen until the next signal
 * replaces it (the watcher polls every 2 s).
 */
const ANCHOR_LIFE_MS = DAMP_WINDOW_MS + 2_000;

function clampMove(previousLeft: number, wanted: number, factor: number): number {
  const base = Math.max(FLOOR_MS, previousLeft);
  return Math.min(base * factor, Math.max(base / factor, wanted));
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
 * allows inside one phase (or step); the range's ends take up the rest at once (the high end
 * widens, the low end falls), so the range still holds what the evidence says.
 */
export function dampEta(previous: ShownEta | undefined, raw: RawEta, now: number): ShownEta {
  let mid = raw.midMs;
  let low = Math.min(raw.lowMs, mid);
  let high = Math.max(raw.highMs, mid);
  const samePhase = previous !== undefined && phaseKeyOf(previous.key) === phaseKeyOf(raw.key);
  const keySince = samePhase && previous.key === raw.key ? (previous.keySince ?? previous.at) : now;
  if (previous && samePhase && now >= previous.at) {
    const dt = Math.min(DAMP_WINDOW_MS, now - previous.at);
    const factor = MAX_MOVE ** (dt / DAMP_WINDOW_MS);
    // Against every middle shown in the last 10 s (not only the previous one: small steps compound).
    const anchors = [...(previous.recent ?? []), [previous.at, previous.readyAt] as const].filter(
      ([at]) => at >= now - ANCHOR_LIFE_MS,
    );
    const up = Math.min(...anchors.map(([, readyAt]) => Math.max(FLOOR_MS, readyAt - now) * MAX_MOVE));
    const down = Math.max(...anchors.map(([, readyAt]) => Math.max(FLOOR_MS, readyAt - now) / MAX_MOVE));
    // Within the bound, unless even the evidence's near end is past it (the shown time proved
    // short or long: a forecast the reads disproved), then only as far as that end.
    // A quiet step past its plan grows with its own time: only its fall is damped.
    const floor = Math.min(down, Math.max(raw.highMs, raw.midMs));
    mid = raw.growing ? Math.max(floor, raw.midMs) : Math.max(floor, Math.min(raw.midMs, Math.max(up, raw.lowMs)));
    // The ends: damped as before, and never narrower than where the raw middle is.
    const lowMoved = clampMove((previous.lowAt ?? previous.readyAt) - now, low, factor);
    low = Math.min(mid, raw.midMs, raw.growing ? Math.max(low, lowMoved) : lowMoved);
    const highMoved = clampMove((previous.highAt ?? previous.readyAt) - now, high, factor);
    high = Math.max(mid, raw.midMs, raw.growing ? Math.max(high, highMoved) : highMoved);
  }
  const recent: (readonly [number, number])[] = [];
  if (samePhase && previous) {
    for (const anchor of [...(previous.recent ?? []), [previous.at, previous.readyAt] as const]) {
      if (anchor[0] < now - ANCHOR_LIFE_MS) continue;
      const newest = recent[recent.length - 1];
      // (the older of two close anchors is kept: the newest is always the previous one, an anchor of its own)
      if (!newest || anchor[0] - newest[0] >= ANCHOR_MS) recent.push(anchor);
    }
  }
  return {
    at: now,
    readyAt: now + mid,
    lowAt: now + Math.max(0, low),
    highAt: now + high,
    basis: raw.basis,
    source: raw.source,
    ...(raw.reason !== undefined ? { reason: raw.reason } : {}),
    key: raw.key,
    keySince,
    ...(recent.length ? { recent } : {}),
  };
}
