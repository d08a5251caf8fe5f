/**
 * Rate and ETA of a load. Pure: every function takes what it needs and the time.
 *
 * Model: remaining = weights still to read + the phases after the weights (KV cache, CUDA
 * graphs, warm-up). Weights still to read is split, when the page-cache residency measured
 * before the restart is known, into cold bytes (storage; counted in `read_bytes`) at the cold
 * rate and warm bytes (page cache) at the warm rate; that is what keeps the estimate right when
 * the rate changes mid-way (cold files, then cached ones).
 *
 * What was known before the load (residency, history's rates) is a prior, and what the load
 * shows wins as evidence grows:
 * - the residency is checked against the bytes read: more cold bytes than it allows (files
 *   evicted after it was measured) or more warm bytes (files read in since) disproves it, and
 *   it stops driving the split: the bytes left then go at the rate the load shows now;
 * - each live rate is measured over the last 10 s, and over up to 30 s as long as the older
 *   samples agree with that, so a rate that changes mid-way is followed within ~10 s;
 * - a prior rate counts as PRIOR_WEIGHT_MS of measurement against all the measurement of this
 *   load, and not at all once the live rate has disproved it;
 * - no estimate is returned that elapsed time has disproved: its ready time passed; bytes that
 *   stopped growing (a stall: gone DISPROVED_GRACE_MS, less one sample interval, after the first
 *   sample that saw no growth); history's after-weights time overrun; no progress for longer
 *   than a shard takes plus DISPROVED_GRACE_MS. `visibleEta` hides a stored ETA once its time
 *   is DISPROVED_GRACE_MS past (for a display that outlives the signals).
 * Nothing is shown before there is enough signal (>= 5 % of the bytes and >= 10 s of samples).
 */
import type { LoadPhase } from '../engine/events';

/** One reading of the bytes witness. */
export interface IoSample {
  readonly at: number;
  /** Bytes the service's processes have read (max of read_bytes, rchar, cgroup rbytes). */
  readonly bytes: number;
  /** Bytes read from storage (block I/O, read_bytes), when known: the cold part. */
  readonly coldBytes?: number;
}

/** What this host's history (or the page-cache measurement) says before the load starts. */
export interface LoadPrior {
  /** Cold (storage) read rate, bytes/s. */
  readonly coldBps?: number;
  /** Warm (page cache) read rate, bytes/s. */
  readonly warmBps?: number;
  /** Model bytes resident in the page cache when the restart was asked for. */
  readonly residentBytes?: number;
  /** Total model bytes (*.safetensors), when known before the watch measures it. */
  readonly totalBytes?: number;
  /** From process start to the first weights read (torch distributed init etc.), ms. */
  readonly startingMs?: number;
  /** The weights phase in history (its processing after the last shard included), ms. */
  readonly weightsPhaseMs?: number;
  /** From the end of the weights to ready (KV cache + CUDA graphs + warm-up), ms. */
  readonly afterWeightsMs?: number;
  /** From the weights' last byte (or shard line) to the end of the weights phase (quiet processing), ms. */
  readonly afterShardsMs?: number;
  /** Spread of the whole load in history (min..max ms), for the dashboard's band. */
  readonly totalMsRange?: readonly [number, number];
  /** Number of past loads the prior comes from (0 = defaults only). */
  readonly loads?: number;
}

export const DEFAULT_COLD_BPS = 240e6;
export const DEFAULT_WARM_BPS = 3e9;
/** Without history, the phases after the weights are taken as this share of the weights time. */
export const DEFAULT_AFTER_WEIGHTS_SHARE = 0.25;
export const DEFAULT_AFTER_WEIGHTS_MIN_MS = 8_000;

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
/** The first live estimate of the weights: this much of the model read, over samples this far apart (wide, at first). */
const FIRST_RATE_BYTES_FRACTION = 0.02;
const FIRST_RATE_SPAN_MS = 4_000;
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

/**
 * Bytes/s of `pick(sample)` counted only over the intervals (within the window) in which it
 * grew, with how long those intervals last. Undefined when it did not grow.
 */
export function activeRate(
  samples: readonly IoSample[],
  pick: (s: IoSample) => number | undefined,
  windowMs = RATE_WINDOW_MS,
  minBytes = 0,
): { bps: number; spanMs: number } | undefined {
  const last = samples[samples.length - 1];
  if (!last) return undefined;
  let bytes = 0;
  let ms = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b.at < last.at - windowMs) continue;
    const va = pick(a);
    const vb = pick(b);
    if (va === undefined || vb === undefined || b.at <= a.at) continue;
    if (vb > va) {
      bytes += vb - va;
      ms += b.at - a.at;
    }
  }
  return ms > 0 && bytes >= minBytes && bytes > 0 ? { bps: (bytes / ms) * 1000, spanMs: ms } : undefined;
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
function samplesSince(samples: readonly IoSample[], at: number | undefined): readonly IoSample[] {
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

export interface EtaInput {
  readonly now: number;
  readonly phase: LoadPhase | undefined;
  /** When the weights phase began (journal), if it did. */
  readonly weightsStartedAt?: number;
  /** When the weights were done (the phase after them began), if they are. */
  readonly weightsEndedAt?: number;
  readonly totalBytes?: number;
  /** All io samples of this load, oldest first (the recent ones are enough). */
  readonly samples: readonly IoSample[];
  readonly shards?: { readonly done: number; readonly total: number };
  /** The last time the load made any progress (shards, bytes, GPU memory, phase): a stall check for the shards basis. */
  readonly lastProgressAt?: number;
  readonly prior?: LoadPrior;
}

export interface Eta {
  /** Estimated milliseconds until ready, from `now`. */
  readonly remainingMs: number;
  /** Weights part of it. */
  readonly weightsMs: number;
  readonly afterWeightsMs: number;
  /** Bytes/s used for the estimate (whole remaining weights / weightsMs). */
  readonly rateBps: number | undefined;
  /**
   * How it was made: 'bytes+cache' (cold/warm split by the measured residency), 'bytes' (the
   * bytes left at the rate the load shows: no residency, or a disproved one), 'shards',
   * 'history'.
   */
  readonly basis: 'bytes+cache' | 'bytes' | 'shards' | 'history';
  /** Set when the bytes read contradicted the residency measured before the restart. */
  readonly residencyDisproved?: boolean;
}

function afterWeightsFor(prior: LoadPrior | undefined, weightsTotalMs: number): number {
  if (prior?.afterWeightsMs !== undefined) return prior.afterWeightsMs + (prior.afterShardsMs ?? 0);
  return Math.max(DEFAULT_AFTER_WEIGHTS_MIN_MS, weightsTotalMs * DEFAULT_AFTER_WEIGHTS_SHARE);
}

/**
 * The ETA, or undefined when there is not enough signal yet to say anything honest, or when
 * elapsed time has disproved what the signal said (a stall, an overrun).
 */
export function estimateEta(input: EtaInput): Eta | undefined {
  const { now, phase, prior, samples } = input;
  if (phase === undefined || phase === 'ready') return undefined;
  if (phase === 'allocating KV cache' || phase === 'capturing CUDA graphs' || phase === 'warming up') {
    // Only history knows how long these take; without it, say nothing rather than guess.
    if (prior?.afterWeightsMs === undefined || input.weightsEndedAt === undefined) return undefined;
    const left = prior.afterWeightsMs - (now - input.weightsEndedAt);
    // Past history's time these phases are still going: history is disproved, nothing is known.
    if (left < 0) return undefined;
    return { remainingMs: left, weightsMs: 0, afterWeightsMs: left, rateBps: undefined, basis: 'history' };
  }
  const total = input.totalBytes ?? prior?.totalBytes;
  const last = samples[samples.length - 1];
  const span = windowSpanMs(samples);
  const weightsStartedAt = input.weightsStartedAt;

  if (
    total !== undefined &&
    total > 0 &&
    last &&
    last.bytes / total >= FIRST_RATE_BYTES_FRACTION &&
    span >= FIRST_RATE_SPAN_MS
  ) {
    const noise = total * NOISE_SHARE;
    const read = Math.min(total, last.bytes);
    if (last.bytes >= total) {
      // Every byte is read; the phases after the weights run from when the last one was.
      const doneAt = samples.find((s) => s.bytes >= total)?.at ?? last.at;
      const afterWeightsMs = afterWeightsFor(prior, weightsStartedAt !== undefined ? doneAt - weightsStartedAt : 0);
      const left = doneAt + afterWeightsMs - now;
      if (left < 0) return undefined;
      return { remainingMs: left, weightsMs: 0, afterWeightsMs: left, rateBps: undefined, basis: 'bytes' };
    }
    // Bytes that stopped growing disprove every rate: a stall (or a reader that went quiet). The
    // estimate is recomputed at each sample, so it is dropped one sample interval before the
    // grace ends: no ETA is left on screen more than DISPROVED_GRACE_MS after the first sample
    // that showed no progress.
    const growth = lastGrowth(samples, noise / RATE_WINDOW_MS);
    if (growth.flatSince !== undefined && now - growth.flatSince > DISPROVED_GRACE_MS - sampleIntervalMs(samples))
      return undefined;

    let weightsMs: number;
    let basis: Eta['basis'];
    const coldRead = last.coldBytes === undefined ? undefined : Math.max(0, Math.min(read, last.coldBytes));
    const residency = prior?.residentBytes;
    const residencyDisproved =
      residency !== undefined && coldRead !== undefined && !residencyHolds(total, residency, coldRead, read - coldRead);
    if (residency !== undefined && coldRead !== undefined && !residencyDisproved) {
      const resident = Math.min(total, residency);
      const coldLeft = Math.max(0, total - resident - coldRead);
      const warmLeft = Math.max(0, resident - (read - coldRead));
      // Each kind's rate is measured only over the intervals in which it advanced: cold reads
      // stop when the cached files come up, and a window average would lag that change.
      // Trickles below 0.5 % of the model in the window (rchar of sockets and imports, a
      // library read from disk) are noise, not a kind of weight reading.
      const coldLive = liveRate(samples, (s) => s.coldBytes, true, noise);
      const warmLive = liveRate(
        samples,
        (s) => (s.coldBytes === undefined ? undefined : s.bytes - s.coldBytes),
        true,
        noise,
      );
      // A page-cache rate from history below the trickle is not a reading rate (e.g. a cold
      // load whose only "warm" bytes were sockets and imports after the weights): no prior.
      const priorWarm =
        prior?.warmBps !== undefined && prior.warmBps > (noise / RATE_WINDOW_MS) * 1000 ? prior.warmBps : undefined;
      const coldBps = learnedRate(coldLive, prior?.coldBps, DEFAULT_COLD_BPS);
      const warmBps = learnedRate(warmLive, priorWarm, DEFAULT_WARM_BPS);
      weightsMs = (coldLeft / coldBps + warmLeft / warmBps) * 1000;
      basis = 'bytes+cache';
    } else {
      // Residency unknown, or disproved (files evicted, or read in, after it was measured): it
      // no longer says which bytes are slow; the bytes left go at the rate the load shows now.
      // (from the weights' start on: the flat intervals of the start-up are no part of the read rate)
      const live = liveRate(samplesSince(samples, weightsStartedAt), (s) => s.bytes, false, noise);
      const rate = learnedRate(live, prior?.coldBps, DEFAULT_COLD_BPS);
      weightsMs = rate > 0 ? ((total - read) / rate) * 1000 : Number.POSITIVE_INFINITY;
      basis = 'bytes';
    }
    if (!Number.isFinite(weightsMs)) return undefined;
    // The bytes are as of the last sample that saw them grow: the estimate runs from then (a
    // sample that saw nothing move does not push the ready time back).
    const asOf = growth.grewAt ?? last.at;
    const weightsLeft = asOf + weightsMs - now;
    const afterWeightsMs = afterWeightsFor(
      prior,
      (weightsStartedAt !== undefined ? asOf - weightsStartedAt : 0) + weightsMs,
    );
    const remainingMs = weightsLeft + afterWeightsMs;
    if (remainingMs < 0) return undefined;
    const rateBps = weightsMs > 0 ? ((total - read) / weightsMs) * 1000 : undefined;
    const weightsPart = Math.max(0, weightsLeft);
    return {
      remainingMs,
      weightsMs: weightsPart,
      afterWeightsMs: remainingMs - weightsPart,
      rateBps,
      basis,
      ...(residencyDisproved ? { residencyDisproved } : {}),
    };
  }

  // No usable bytes witness (e.g. a page-cached mmap load reads nothing from storage): shards.
  const weightsElapsed = weightsStartedAt !== undefined ? now - weightsStartedAt : 0;
  const shards = input.shards;
  if (
    shards &&
    shards.total > 0 &&
    shards.done >= 1 &&
    shards.done / shards.total >= MIN_BYTES_FRACTION &&
    weightsElapsed >= MIN_SAMPLE_SPAN_MS &&
    (total === undefined || !last || last.bytes / total < MIN_BYTES_FRACTION)
  ) {
    const perShard = weightsElapsed / shards.done;
    // No progress for longer than a shard takes, plus the grace: the shard rate is disproved.
    if (input.lastProgressAt !== undefined && now - input.lastProgressAt > perShard + DISPROVED_GRACE_MS)
      return undefined;
    const weightsMs = perShard * (shards.total - shards.done);
    const afterWeightsMs = afterWeightsFor(prior, weightsElapsed + weightsMs);
    return { remainingMs: weightsMs + afterWeightsMs, weightsMs, afterWeightsMs, rateBps: undefined, basis: 'shards' };
  }
  return undefined;
}

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
  if (highMs === undefined) return `${low} left`;
  const high = shortDuration(Math.max(ms, highMs));
  if (low === high) return `${low} left`;
  // "40-55s", "4-6m": one unit for both ends when each is a single number of it
  const single = /^\d+([sm])$/;
  if (single.exec(low)?.[1] !== undefined && single.exec(low)?.[1] === single.exec(high)?.[1])
    return `${low.slice(0, -1)}-${high} left`;
  return `${low}-${high} left`;
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
