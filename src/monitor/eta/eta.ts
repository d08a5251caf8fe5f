/**
 * The weights' ETA of a load (the bytes or shards left at the live rate, then the phases after
 * them). Pure: it takes the samples, the prior and the time. The rates are ioRate.ts's.
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
import type { LoadPhase } from '../../engine/events';
import {
  DISPROVED_GRACE_MS,
  lastGrowth,
  learnedRate,
  liveRate,
  MIN_BYTES_FRACTION,
  MIN_SAMPLE_SPAN_MS,
  NOISE_SHARE,
  RATE_WINDOW_MS,
  residencyHolds,
  sampleIntervalMs,
  samplesSince,
  windowSpanMs,
  type IoSample,
} from './ioRate';
import type { ForeseenStep } from './compileForecast';

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
  /** Quiet steps an empty kernel cache adds to this start (read before the restart), with their lengths. */
  readonly foreseenSteps?: readonly ForeseenStep[];
}

export const DEFAULT_COLD_BPS = 240e6;
export const DEFAULT_WARM_BPS = 3e9;
/** Without history, the phases after the weights are taken as this share of the weights time. */
export const DEFAULT_AFTER_WEIGHTS_SHARE = 0.25;
export const DEFAULT_AFTER_WEIGHTS_MIN_MS = 8_000;
/** The first live estimate of the weights: this much of the model read, over samples this far apart (wide, at first). */
const FIRST_RATE_BYTES_FRACTION = 0.02;
const FIRST_RATE_SPAN_MS = 4_000;

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
