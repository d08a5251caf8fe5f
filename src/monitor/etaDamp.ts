/**
 * What the state keeps of the ETA, damped. Pure. Once shown, the time left moves by at most
 * MAX_MOVE within DAMP_WINDOW_MS (against the countdown of what was shown) while the phase and
 * its quiet step stay the same; a change of phase (or step) lets it move freely. The range's ends
 * are damped the same way.
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
  /** When that phase/step began to be estimated: the first SETTLE_MS of it move freely. */
  readonly keySince?: number;
}

/** Largest factor the time left may move by within DAMP_WINDOW_MS (the target is 1.5: kept under it). */
export const MAX_MOVE = 1.4;
export const DAMP_WINDOW_MS = 10_000;
/** Below this the ratio of two times left means nothing (1 s against 2 s is no jump a user sees). */
const FLOOR_MS = 2_000;
/**
 * The first seconds of a phase (or step) move freely: its first evidence (the first cold bytes
 * against a forecast, the first rate) may say it is far from the plan, and a bound on what
 * was said before the evidence would only keep the wrong number on screen.
 */
export const SETTLE_MS = 8_000;

function clampMove(previousLeft: number, wanted: number, factor: number): number {
  const base = Math.max(FLOOR_MS, previousLeft);
  return Math.min(base * factor, Math.max(base / factor, wanted));
}

/** The raw estimate at `now`, moved from the previous one by no more than the bound allows. */
export function dampEta(previous: ShownEta | undefined, raw: RawEta, now: number): ShownEta {
  let mid = raw.midMs;
  let low = Math.min(raw.lowMs, mid);
  let high = Math.max(raw.highMs, mid);
  const sameKey = previous !== undefined && previous.key === raw.key;
  const keySince = sameKey ? (previous.keySince ?? previous.at) : now;
  if (previous && sameKey && now >= previous.at && now - keySince >= SETTLE_MS) {
    const dt = Math.min(DAMP_WINDOW_MS, now - previous.at);
    const factor = MAX_MOVE ** (dt / DAMP_WINDOW_MS);
    // A quiet step past its plan grows with its own time: only its fall is damped.
    mid = raw.growing
      ? Math.max(mid, clampMove(previous.readyAt - now, mid, factor))
      : clampMove(previous.readyAt - now, mid, factor);
    const lowMoved = clampMove((previous.lowAt ?? previous.readyAt) - now, low, factor);
    low = Math.min(mid, raw.growing ? Math.max(low, lowMoved) : lowMoved);
    high = Math.max(mid, clampMove((previous.highAt ?? previous.readyAt) - now, high, factor));
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
  };
}
