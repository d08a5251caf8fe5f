/**
 * The ETA benchmark's arithmetic, pure: what the status bar said (its text, sampled every
 * second) against the truth (the simulated host's journal), per load and per case.
 */

/** One status-bar reading. */
export interface Sample {
  readonly at: number;
  /** The status bar's text at `at` (statusText). */
  readonly text: string;
  /** The watcher's phase then, with the quiet step it names in it (what "a phase change" means). */
  readonly phase: string | undefined;
}

/** When the truth says each step of the load happened (journal times, epoch ms). */
export interface Truth {
  readonly start: number;
  readonly weightsBegin?: number;
  /** The shard bar at 100 %. */
  readonly lastShard?: number;
  readonly weightsEnd?: number;
  readonly captureBegin?: number;
  readonly captureEnd?: number;
  readonly ready: number;
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000 };

/** "1h 5m" -> 3 900 000; a bare number takes `unit`; undefined when nothing reads. */
function durationMs(text: string, unit?: string): number | undefined {
  if (/^\d+(?:\.\d+)?$/.test(text.trim()) && unit) return Number(text) * UNIT_MS[unit]!;
  let ms = 0;
  let found = false;
  for (const t of text.matchAll(/(\d+(?:\.\d+)?)\s*(h|m|s)\b/g)) {
    ms += Number(t[1]) * UNIT_MS[t[2]!]!;
    found = true;
  }
  return found ? ms : undefined;
}

/**
 * "45s left" -> 45 000; ranges "4-6m left" -> [240 000, 360 000], "45s-2m left", "1h 5m-1h 20m
 * left"; undefined without "left".
 */
export function parseLeft(text: string): { readonly lowMs: number; readonly highMs: number } | undefined {
  const m = /·\s*([^·]*?)\s*\bleft\b/.exec(text);
  if (!m) return undefined;
  const [lo, hi] = m[1]!.replace(/^[~≈]|about\s+/g, '').split(/\s*[-–]\s*/);
  const high = durationMs(hi ?? lo!);
  if (high === undefined) return undefined;
  const lastUnit = /(h|m|s)\s*$/.exec(hi ?? lo!)?.[1];
  const low = durationMs(lo!, lastUnit);
  return low === undefined ? undefined : { lowMs: low, highMs: high };
}

/** The remaining time a text shows (a range's middle), ms. */
export function shownMs(text: string): number | undefined {
  const r = parseLeft(text);
  return r ? (r.lowMs + r.highMs) / 2 : undefined;
}

/**
 * Error of what was shown at `fraction` of the load (restart to ready): (shown - true left) /
 * true left, from the last sample at or before that point; undefined when no ETA was shown
 * then (or no sample in the 2 s before).
 */
export function errorAt(samples: readonly Sample[], truth: Truth, fraction: number): number | undefined {
  const t = truth.start + fraction * (truth.ready - truth.start);
  const s = [...samples].reverse().find((x) => x.at <= t);
  if (!s || t - s.at > 2000) return undefined;
  const shown = shownMs(s.text);
  if (shown === undefined) return undefined;
  const left = truth.ready - s.at;
  return left > 0 ? (shown - left) / left : undefined;
}

export interface Jump {
  readonly ratio: number;
  readonly from: string;
  readonly to: string;
  readonly phase: string | undefined;
  readonly afterMs: number;
}

/**
 * The largest move of the shown time within `windowMs` without a phase change: between two
 * samples, the later one against what the earlier one implied for then (its time less the
 * time gone), both floored at `floorMs` (5 s: a poll late and the display's rounding move a
 * few seconds; "3s left" -> "1s left" is no jump a user reads), as a ratio >= 1.
 */
export function largestJump(samples: readonly Sample[], windowMs = 10_000, floorMs = 5000): Jump | undefined {
  let best: Jump | undefined;
  for (let i = 0; i < samples.length; i++) {
    const a = samples[i]!;
    const shownA = shownMs(a.text);
    if (shownA === undefined) continue;
    for (let j = i + 1; j < samples.length && samples[j]!.at - a.at <= windowMs; j++) {
      const b = samples[j]!;
      if (b.phase !== a.phase) break;
      const shownB = shownMs(b.text);
      if (shownB === undefined) continue;
      const expected = Math.max(floorMs, shownA - (b.at - a.at));
      const got = Math.max(floorMs, shownB);
      const ratio = Math.max(got / expected, expected / got);
      if (!best || ratio > best.ratio)
        best = { ratio, from: leftText(a.text), to: leftText(b.text), phase: a.phase, afterMs: b.at - a.at };
    }
  }
  return best;
}

function leftText(text: string): string {
  return /·\s*([^·]*?\bleft)\b/.exec(text)?.[1] ?? text;
}

/** Per phase of the watcher: how many samples, how many with an ETA shown (before ready). */
export function coverage(samples: readonly Sample[], truth: Truth): Map<string, { samples: number; shown: number }> {
  const out = new Map<string, { samples: number; shown: number }>();
  for (const s of samples) {
    if (s.at >= truth.ready) break;
    // before the watcher's first state (the restart just asked for) there is no phase to show one in
    if (s.phase === undefined) continue;
    const key = s.phase;
    const c = out.get(key) ?? { samples: 0, shown: 0 };
    c.samples++;
    if (shownMs(s.text) !== undefined) c.shown++;
    out.set(key, c);
  }
  return out;
}

/**
 * Share of the readings with an ETA (before ready) whose range held the time really left (a
 * single number counts as a range of itself), with 1 s of slack for the display's rounding.
 */
export function inRangeShare(samples: readonly Sample[], truth: Truth): { inRange: number; shown: number } {
  let inRange = 0;
  let shown = 0;
  for (const s of samples) {
    if (s.at >= truth.ready) break;
    const r = parseLeft(s.text);
    if (!r) continue;
    shown++;
    const left = truth.ready - s.at;
    if (left >= r.lowMs - 1000 && left <= r.highMs + 1000) inRange++;
  }
  return { inRange, shown };
}

/** The phases of the truth, as the watcher names them, with how long each really took (ms). */
export function truthPhases(t: Truth): Record<string, number> {
  const out: Record<string, number> = {};
  const span = (name: string, from: number | undefined, to: number | undefined) => {
    if (from !== undefined && to !== undefined && to >= from) out[name] = to - from;
  };
  span('starting', t.start, t.weightsBegin);
  span('loading weights', t.weightsBegin, t.weightsEnd);
  span('allocating KV cache', t.weightsEnd, t.captureBegin);
  span('capturing CUDA graphs', t.captureBegin, t.captureEnd);
  span('warming up', t.captureEnd, t.ready);
  return out;
}

/** Truth from the journal's lines of one load (entries at or after `start`). */
export function truthOf(entries: readonly { t: number; msg: string }[], start: number): Truth | undefined {
  const after = entries.filter((e) => e.t / 1000 >= start - 50);
  const at = (re: RegExp) => {
    const e = after.find((x) => re.test(x.msg));
    return e ? e.t / 1000 : undefined;
  };
  const ready = at(/The server is fired up and ready to roll!/);
  if (ready === undefined) return undefined;
  const opt = (k: keyof Truth, v: number | undefined) => (v === undefined ? {} : { [k]: v });
  return {
    start,
    ready,
    ...opt('weightsBegin', at(/Load weight begin/)),
    ...opt('lastShard', at(/loading shards:\s+100% Completed/)),
    ...opt('weightsEnd', at(/Load weight end/)),
    ...opt('captureBegin', at(/Capture cuda graph begin/)),
    ...opt('captureEnd', at(/Capture cuda graph end/)),
  };
}

export const median = (v: readonly number[]): number | undefined => {
  if (!v.length) return undefined;
  const s = [...v].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The value of largest magnitude (sign kept). */
export const worst = (v: readonly number[]): number | undefined =>
  v.length ? v.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a)) : undefined;

export const pct = (x: number | undefined): string =>
  x === undefined ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;
