/**
 * Rate and ETA of a load. Pure: every function takes what it needs and the time.
 *
 * Model: remaining = weights still to read + the phases after the weights (KV cache, CUDA
 * graphs, warm-up). Weights still to read is split, when the page-cache residency measured
 * before the restart is known, into cold bytes (storage; counted in `read_bytes`) at the cold
 * rate and warm bytes (page cache) at the warm rate; that is what keeps the estimate right when
 * the rate changes mid-way (cold files, then cached ones). Each rate is the live rate over the
 * recent window, blended with this host's history (or defaults) while the window is short.
 * Nothing is shown before there is enough signal (>= 5 % of the bytes and >= 10 s of samples).
 */
import type { LoadPhase } from '../server/events';

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
  /** From the end of the weights to ready (KV cache + CUDA graphs + warm-up), ms. */
  readonly afterWeightsMs?: number;
  /** Spread of the whole load in history (min..max ms), for the dashboard's band. */
  readonly totalMsRange?: readonly [number, number];
  /** Number of past loads the prior comes from (0 = defaults only). */
  readonly loads?: number;
}

export const DEFAULT_COLD_BPS = 240e6;
export const DEFAULT_WARM_BPS = 3e9;
/** Without history, the phases after the weights are taken as this share of the weights time. */
export const DEFAULT_AFTER_WEIGHTS_SHARE = 0.2;
export const DEFAULT_AFTER_WEIGHTS_MIN_MS = 5_000;

/** How far back the live rate looks. */
export const RATE_WINDOW_MS = 30_000;
/** Weight of the prior rate, expressed as milliseconds of live window it is worth. */
const PRIOR_WEIGHT_MS = 10_000;
export const MIN_BYTES_FRACTION = 0.05;
export const MIN_SAMPLE_SPAN_MS = 10_000;

/** Keeps the samples of the last `keepMs` (and at most `max`), appending `sample`. */
export function pushSample(samples: readonly IoSample[], sample: IoSample, keepMs = 2 * RATE_WINDOW_MS, max = 240): IoSample[] {
  const out = samples.filter((s) => s.at >= sample.at - keepMs && s.at < sample.at);
  out.push(sample);
  return out.length > max ? out.slice(out.length - max) : out;
}

/**
 * Bytes/s of `pick(sample)` over the window ending at the last sample: a least-squares slope,
 * so one late or early sample does not swing it. Undefined with < 2 samples or no time span.
 */
export function windowRate(samples: readonly IoSample[], pick: (s: IoSample) => number | undefined = (s) => s.bytes, windowMs = RATE_WINDOW_MS): number | undefined {
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
 * The live rate blended with a prior: the prior counts as PRIOR_WEIGHT_MS of window, so a
 * fresh window leans on history and a full one on what is measured now.
 */
export function blendRate(live: number | undefined, liveSpanMs: number, prior: number): number {
  if (live === undefined || liveSpanMs <= 0) return prior;
  const w = Math.min(liveSpanMs, RATE_WINDOW_MS);
  return (live * w + prior * PRIOR_WEIGHT_MS) / (w + PRIOR_WEIGHT_MS);
}

/**
 * Bytes/s of `pick(sample)` counted only over the intervals (within the window) in which it
 * grew, with how long those intervals last. Undefined when it did not grow.
 */
export function activeRate(samples: readonly IoSample[], pick: (s: IoSample) => number | undefined, windowMs = RATE_WINDOW_MS, minBytes = 0): { bps: number; spanMs: number } | undefined {
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

/** The live rate blended with history's; a default only stands in when nothing was measured. */
function pickRate(live: { bps: number; spanMs: number } | undefined, history: number | undefined, fallback: number): number {
  if (live === undefined || live.bps <= 0) return history ?? fallback;
  return history === undefined ? live.bps : blendRate(live.bps, live.spanMs, history);
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
  /** How it was made: 'bytes+cache' (cold/warm split), 'bytes', 'shards', 'history'. */
  readonly basis: 'bytes+cache' | 'bytes' | 'shards' | 'history';
}

function afterWeightsFor(prior: LoadPrior | undefined, weightsTotalMs: number): number {
  if (prior?.afterWeightsMs !== undefined) return prior.afterWeightsMs;
  return Math.max(DEFAULT_AFTER_WEIGHTS_MIN_MS, weightsTotalMs * DEFAULT_AFTER_WEIGHTS_SHARE);
}

/**
 * The ETA, or undefined when there is not enough signal yet to say anything honest.
 */
export function estimateEta(input: EtaInput): Eta | undefined {
  const { now, phase, prior, samples } = input;
  if (phase === undefined || phase === 'ready') return undefined;
  if (phase === 'allocating KV cache' || phase === 'capturing CUDA graphs' || phase === 'warming up') {
    // Only history knows how long these take; without it, say nothing rather than guess.
    if (prior?.afterWeightsMs === undefined || input.weightsEndedAt === undefined) return undefined;
    const left = Math.max(0, prior.afterWeightsMs - (now - input.weightsEndedAt));
    return { remainingMs: left, weightsMs: 0, afterWeightsMs: left, rateBps: undefined, basis: 'history' };
  }
  const total = input.totalBytes ?? prior?.totalBytes;
  const last = samples[samples.length - 1];
  const span = windowSpanMs(samples);
  const weightsElapsed = input.weightsStartedAt !== undefined ? now - input.weightsStartedAt : 0;

  if (total !== undefined && total > 0 && last && last.bytes / total >= MIN_BYTES_FRACTION && span >= MIN_SAMPLE_SPAN_MS) {
    const read = Math.min(total, last.bytes);
    let weightsMs: number;
    let basis: Eta['basis'];
    if (prior?.residentBytes !== undefined && last.coldBytes !== undefined) {
      const resident = Math.min(total, prior.residentBytes);
      const coldRead = Math.min(total - resident, last.coldBytes);
      const warmRead = Math.max(0, read - last.coldBytes);
      const coldLeft = Math.max(0, total - resident - coldRead);
      const warmLeft = Math.max(0, resident - warmRead);
      // Each kind's rate is measured only over the intervals in which it advanced: cold reads
      // stop when the cached files come up, and a window average would lag that change.
      // Trickles below 0.5 % of the model in the window (rchar of sockets and imports, a
      // library read from disk) are noise, not a kind of weight reading.
      const noise = total * 0.005;
      const coldLive = activeRate(samples, (s) => s.coldBytes, RATE_WINDOW_MS, noise);
      const warmLive = activeRate(samples, (s) => (s.coldBytes === undefined ? undefined : s.bytes - s.coldBytes), RATE_WINDOW_MS, noise);
      const coldBps = pickRate(coldLive, prior?.coldBps, DEFAULT_COLD_BPS);
      const warmBps = pickRate(warmLive, prior?.warmBps, DEFAULT_WARM_BPS);
      weightsMs = (coldLeft / coldBps + warmLeft / warmBps) * 1000;
      basis = 'bytes+cache';
    } else {
      const live = windowRate(samples);
      const rate = pickRate(live === undefined ? undefined : { bps: live, spanMs: span }, prior?.coldBps, DEFAULT_COLD_BPS);
      weightsMs = rate > 0 ? ((total - read) / rate) * 1000 : Number.POSITIVE_INFINITY;
      basis = 'bytes';
    }
    if (!Number.isFinite(weightsMs)) return undefined;
    const afterWeightsMs = afterWeightsFor(prior, weightsElapsed + weightsMs);
    const rateBps = weightsMs > 0 ? ((total - read) / weightsMs) * 1000 : undefined;
    return { remainingMs: weightsMs + afterWeightsMs, weightsMs, afterWeightsMs, rateBps, basis };
  }

  // No usable bytes witness (e.g. a page-cached mmap load reads nothing from storage): shards.
  const shards = input.shards;
  if (shards && shards.total > 0 && shards.done >= 1 && shards.done / shards.total >= MIN_BYTES_FRACTION && weightsElapsed >= MIN_SAMPLE_SPAN_MS && (total === undefined || !last || last.bytes / total < MIN_BYTES_FRACTION)) {
    const perShard = weightsElapsed / shards.done;
    const weightsMs = perShard * (shards.total - shards.done);
    const afterWeightsMs = afterWeightsFor(prior, weightsElapsed + weightsMs);
    return { remainingMs: weightsMs + afterWeightsMs, weightsMs, afterWeightsMs, rateBps: undefined, basis: 'shards' };
  }
  return undefined;
}

/** "3m left", "45s left", "1h 5m left"; short for the status bar. */
export function formatEta(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${Math.max(1, s)}s left`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m left`;
  return `${Math.floor(m / 60)}h ${m % 60}m left`;
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
