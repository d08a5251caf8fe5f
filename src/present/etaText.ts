/**
 * An ETA in words: what a display shows of a stored ETA at a time ("4-6m left", "40s left"),
 * and the rates and sizes beside it. Pure; the one wording of every front.
 */
import * as l10n from '@vscode/l10n';
import { DISPROVED_GRACE_MS } from '../monitor/eta/ioRate';

/**
 * What a display shows of a stored ETA at `now`: the milliseconds left (0 when due), or
 * undefined when there is none or its time is more than `graceMs` (10 s) past, i.e. elapsed
 * time has disproved it and no signal has replaced it since.
 */
export function visibleEta(
  eta: { readonly readyAt: number } | undefined,
  now: number,
  graceMs = DISPROVED_GRACE_MS,
): number | undefined {
  if (!eta) return undefined;
  const left = eta.readyAt - now;
  if (left < -graceMs) return undefined;
  return Math.max(0, left);
}

/** Seconds up to 100 s, then minutes and tens of seconds up to 5 min (whole minutes there would be 20 % off). */
function shortDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 100) return `${Math.max(1, s)}s`;
  if (s < 300) {
    const tens = Math.round(s / 10) * 10;
    return tens % 60 ? `${Math.floor(tens / 60)}m ${tens % 60}s` : `${tens / 60}m`;
  }
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/**
 * "3m left", "45s left", "2m 30s left", "1h 5m left"; with `highMs`, a range: "4-6m left",
 * "40-55s left", "45s-2m 30s left" (one number when both ends read the same). Short for the status bar.
 */
export function formatEta(ms: number, highMs?: number): string {
  const low = shortDuration(ms);
  if (highMs === undefined) return l10n.t('{0} left', low);
  const high = shortDuration(Math.max(ms, highMs));
  if (low === high) return l10n.t('{0} left', low);
  // "40-55s", "4-6m": one unit for both ends when each is a single number of it
  const single = /^\d+([sm])$/;
  if (single.exec(low)?.[1] !== undefined && single.exec(low)?.[1] === single.exec(high)?.[1])
    return l10n.t('{0} left', `${low.slice(0, -1)}-${high}`);
  return l10n.t('{0} left', `${low}-${high}`);
}

/** A range narrower than this (high / low) is shown as one number. */
export const RANGE_MIN_RATIO = 1.3;

/**
 * What a display says of a stored ETA at `now`: "4-6m left" when it is unsure, "5m left" when
 * sure, undefined when there is none (or it is disproved, see visibleEta). The one wording.
 */
export function etaText(
  eta: { readonly readyAt: number; readonly lowAt?: number; readonly highAt?: number } | undefined,
  now: number,
): string | undefined {
  const mid = visibleEta(eta, now);
  if (mid === undefined || !eta) return undefined;
  const low = eta.lowAt !== undefined ? Math.max(0, eta.lowAt - now) : mid;
  const high = eta.highAt !== undefined ? Math.max(mid, eta.highAt - now) : mid;
  if (high < 5_000 || high / Math.max(1_000, low) < RANGE_MIN_RATIO) return formatEta(mid);
  return formatEta(Math.min(low, mid), high);
}

/** "240 MB/s" (decimal megabytes, as disks are sold and iostat prints). */
export function formatRate(bps: number | undefined): string {
  if (bps === undefined) return '–';
  if (bps >= 1e9) return `${(bps / 1e9).toFixed(2)} GB/s`;
  return `${(bps / 1e6).toFixed(bps >= 1e8 ? 0 : 1)} MB/s`;
}

/** "41.2 GB" */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e12) return `${(bytes / 1e12).toFixed(2)} TB`;
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(0)} MB`;
  return `${Math.round(bytes / 1e3)} kB`;
}
