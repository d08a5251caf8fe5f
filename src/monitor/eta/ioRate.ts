/**
 * The bytes witness of a load and its live read rates. Pure: every function takes the samples
 * (and what it needs) and returns a rate, a span or a verdict.
 *
 * - each live rate is measured over the last 10 s, and over up to 30 s as long as the older
 *   samples agree with that, so a rate that changes mid-way is followed within ~10 s;
 * - a prior rate counts as PRIOR_WEIGHT_MS of measurement against all the measurement of this
 *   load, and not at all once the live rate has disproved it;
 * - the page-cache residency measured before the restart is checked against the bytes read.
 */
/** One reading of the bytes witness. */
export interface IoSample {
  readonly at: number;
  /** Bytes the service's processes have read (max of read_bytes, rchar, cgroup rbytes). */
  readonly bytes: number;
  /** Bytes read from storage (block I/O, read_bytes), when known: the cold part. */
  readonly coldBytes?: number;
}

/** How far back the live rate looks. */
export const RATE_WINDOW_MS = 30_000;
/**
 * Windows the live rate is measured over, shortest first: the shortest, then each longer one
 * while the older samples it adds agree (within RATE_AGREEMENT) with the shortest. A steady
 * rate is averaged over 30 s, a rate that changed is measured only since the change.
 */
export const RATE_WINDOWS_MS: readonly number[] = [10_000, 15_000, 20_000, RATE_WINDOW_MS];
const RATE_AGREEMENT = 0.15;
/** Weight of a prior rate, expressed as milliseconds of live measurement it is worth. */
const PRIOR_WEIGHT_MS = 10_000;
/** A prior rate further than this share from the live one (after MIN_SAMPLE_SPAN_MS of it) is disproved. */
const PRIOR_DISPROVED = 0.3;
/** A witness growing by less than this share of the model per RATE_WINDOW_MS is a trickle (sockets, imports), not weights. */
export const NOISE_SHARE = 0.005;
/** The residency is disproved when the bytes read contradict it by more than this share of the model. */
const RESIDENCY_SLACK = 0.01;
export const MIN_BYTES_FRACTION = 0.05;
export const MIN_SAMPLE_SPAN_MS = 10_000;
/** How long an ETA may stay after elapsed time has disproved it. */
export const DISPROVED_GRACE_MS = 10_000;

/** Keeps the samples of the last `keepMs` (and at most `max`), appending `sample`. */
export function pushSample(
  samples: readonly IoSample[],
  sample: IoSample,
  keepMs = 2 * RATE_WINDOW_MS,
  max = 240,
): IoSample[] {
  const out = samples.filter((s) => s.at >= sample.at - keepMs && s.at < sample.at);
  out.push(sample);
  return out.length > max ? out.slice(out.length - max) : out;
}

/**
 * Bytes/s of `pick(sample)` over the window ending at the last sample: a least-squares slope,
 * so one late or early sample does not swing it. Undefined with < 2 samples or no time span.
 */
export function windowRate(
  samples: readonly IoSample[],
  pick: (s: IoSample) => number | undefined = (s) => s.bytes,
  windowMs = RATE_WINDOW_MS,
): number | undefined {
  const last = samples[samples.length - 1];
  if (!last) return undefined;
  const pts: [number, number][] = [];
  for (const s of samples) {
    const v = pick(s);
    if (s.at >= last.at - windowMs && v !== undefined) pts.push([s.at / 1000, v]);
  }
  if (pts.length < 2) return undefined;
  const n = pts.length;
  const mx = pts.reduce((a, p) => a + p[0], 0) / n;
  const my = pts.reduce((a, p) => a + p[1], 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const [x, y] of pts) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
  }
  if (sxx <= 0) return undefined;
  return Math.max(0, sxy / sxx);
}

/** Milliseconds the samples span within the window. */
export function windowSpanMs(samples: readonly IoSample[], windowMs = RATE_WINDOW_MS): number {
  const last = samples[samples.length - 1];
  if (!last) return 0;
  const first = samples.find((s) => s.at >= last.at - windowMs) ?? last;
  return last.at - first.at;
}

/**
 * The live rate blended with a prior: the prior counts as PRIOR_WEIGHT_MS of measurement, the
 * live rate as `liveSpanMs` of it (up to the samples kept, 60 s), so a fresh load leans on
 * history and the prior's share keeps shrinking as the load goes on.
 */
export function blendRate(live: number | undefined, liveSpanMs: number, prior: number): number {
  if (live === undefined || liveSpanMs <= 0) return prior;
  const w = Math.min(liveSpanMs, 2 * RATE_WINDOW_MS);
  return (live * w + prior * PRIOR_WEIGHT_MS) / (w + PRIOR_WEIGHT_MS);
}

/** A live rate: bytes/s, the window it was measured over, and how long this load has measured it. */
export interface LiveRate {
  readonly bps: number;
  readonly spanMs: number;
  /** Measurement behind the rate in all the samples kept (the prior's weight is set against it). */
  readonly evidenceMs: number;
}

/**
 * The live rate of `pick`, measured since the last change of rate: over the shortest of
 * RATE_WINDOWS_MS first, then over each longer one as long as the part it adds (the older
 * samples) agrees with that within RATE_AGREEMENT. A steady rate is averaged over 30 s; a rate
 * that changed mid-way is measured only since the change, once the shortest window has seen
 * it. `active`: count only the intervals in which `pick` grew (a kind of reading that stops and
 * starts), else every interval. `noisePerWindow`: growth below this per RATE_WINDOW_MS is a
 * trickle, not a rate.
 */
export function liveRate(
  samples: readonly IoSample[],
  pick: (s: IoSample) => number | undefined,
  active: boolean,
  noisePerWindow = 0,
): LiveRate | undefined {
  const last = samples[samples.length - 1];
  if (!last) return undefined;
  // Intervals by how long ago they ended. With `active`, the first interval of a run of reading
  // (the one before it did not grow) began part-way, so it is left out when there are others.
  const intervals: { ago: number; bytes: number; ms: number; partial: boolean }[] = [];
  let before: boolean | undefined;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const va = pick(a);
    const vb = pick(b);
    if (va === undefined || vb === undefined || b.at <= a.at) {
      before = undefined;
      continue;
    }
    // (with `active`, growth below the trickle does not count as reading)
    const grew = active ? vb - va > (noisePerWindow / RATE_WINDOW_MS) * (b.at - a.at) : vb > va;
    if (!active || grew)
      intervals.push({
        ago: last.at - b.at,
        bytes: Math.max(0, vb - va),
        ms: b.at - a.at,
        partial: active && before === false,
      });
    before = grew;
  }
  if (intervals.some((x) => !x.partial)) {
    for (let i = intervals.length - 1; i >= 0; i--) if (intervals[i]!.partial) intervals.splice(i, 1);
  }
  const sum = (fromAgo: number, toAgo: number): { bytes: number; ms: number } => {
    let bytes = 0;
    let ms = 0;
    for (const x of intervals) {
      if (x.ago >= fromAgo && x.ago < toAgo) {
        bytes += x.bytes;
        ms += x.ms;
      }
    }
    return { bytes, ms };
  };
  const usable = (x: { bytes: number; ms: number }, windowMs: number): boolean =>
    x.ms > 0 && x.bytes > 0 && x.bytes >= (noisePerWindow * windowMs) / RATE_WINDOW_MS;
  const all = sum(0, Number.POSITIVE_INFINITY);
  if (!usable(all, 2 * RATE_WINDOW_MS)) return undefined;
  let chosen: { bytes: number; ms: number } | undefined;
  let reference: number | undefined;
  let previous = 0;
  for (const w of RATE_WINDOWS_MS) {
    if (reference === undefined) {
      const r = sum(0, w);
      if (usable(r, w)) {
        chosen = r;
        reference = r.bytes / r.ms;
      }
    } else {
      const older = sum(previous, w);
      if (older.ms > 0 && Math.abs(older.bytes / older.ms - reference) > RATE_AGREEMENT * reference) break;
      chosen = sum(0, w);
    }
    previous = w;
  }
  if (!chosen) return undefined;
  return { bps: (chosen.bytes / chosen.ms) * 1000, spanMs: chosen.ms, evidenceMs: all.ms };
}

/**
 * The rate to use: the live one, blended with the prior (history) while the load has measured
 * little; the prior is dropped once the live rate has disproved it. A default only stands in
 * when nothing was measured.
 */
export function learnedRate(live: LiveRate | undefined, prior: number | undefined, fallback: number): number {
  if (live === undefined || live.bps <= 0) return prior ?? fallback;
  if (prior === undefined || prior <= 0) return live.bps;
  if (live.evidenceMs >= MIN_SAMPLE_SPAN_MS && Math.abs(live.bps - prior) > PRIOR_DISPROVED * prior) return live.bps;
  return blendRate(live.bps, live.evidenceMs, prior);
}

/**
 * The residency measured before the restart, checked against the bytes read so far: it holds
 * while no more cold bytes were read than it leaves cold, and no more warm bytes than it says
 * are cached (with RESIDENCY_SLACK of the model for readahead and other reads).
 */
export function residencyHolds(totalBytes: number, residentBytes: number, coldRead: number, warmRead: number): boolean {
  const resident = Math.min(totalBytes, Math.max(0, residentBytes));
  const slack = totalBytes * RESIDENCY_SLACK;
  return coldRead <= totalBytes - resident + slack && warmRead <= resident + slack;
}

/**
 * When the bytes last grew by more than a trickle (`noisePerMs`), and the time of the first
 * sample after that (the one that showed they stopped), if any. With no growth in the samples
 * kept, `grewAt` is undefined and `flatSince` the second sample's time.
 */
export function lastGrowth(
  samples: readonly IoSample[],
  noisePerMs: number,
): { grewAt: number | undefined; flatSince: number | undefined } {
  for (let i = samples.length - 1; i >= 1; i--) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b.bytes - a.bytes > noisePerMs * Math.max(0, b.at - a.at))
      return { grewAt: b.at, flatSince: samples[i + 1]?.at };
  }
  return { grewAt: undefined, flatSince: samples[1]?.at };
}

/** The samples from `at` on, with the last one before it (the first interval's start). */
export function samplesSince(samples: readonly IoSample[], at: number | undefined): readonly IoSample[] {
  if (at === undefined) return samples;
  const i = samples.findIndex((s) => s.at >= at);
  return i < 0 ? samples.slice(-1) : samples.slice(Math.max(0, i - 1));
}

/** The usual time between samples (the median of the last few intervals), at most DISPROVED_GRACE_MS / 2. */
export function sampleIntervalMs(samples: readonly IoSample[]): number {
  const gaps: number[] = [];
  for (let i = Math.max(1, samples.length - 8); i < samples.length; i++) gaps.push(samples[i]!.at - samples[i - 1]!.at);
  if (!gaps.length) return 0;
  gaps.sort((a, b) => a - b);
  return Math.min(DISPROVED_GRACE_MS / 2, Math.max(0, gaps[Math.floor(gaps.length / 2)]!));
}
