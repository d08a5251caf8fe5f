/**
 * Load history: per server + unit, the last 20 loads (phase durations, bytes, mean rates,
 * page-cache residency at restart, outcome). Stored through a Memento-like interface (the
 * controller passes `context.globalState`); everything else here is pure.
 */
import { LOAD_PHASES, type ActivityKind, type LoadPhase } from '../../engine/events';
import type { LoadPrior } from '../eta/eta';
import { captureSizesUpTo } from '../../engine/cudaGraphs';
import type { LoadState } from '../state/loadStateTypes';

export const HISTORY_LIMIT = 20;
/** Records of late watches (begun on a load under way, or a server already serving) kept besides the cap. */
export const LATE_WATCHES_KEEP = 3;
/**
 * A watch that began after the load did (a `wait` begun on a load under way, a window opened
 * on a server already loading or serving) read the phases so far from the journal all at once:
 * their durations are not known. This much is clock noise, not lateness.
 */
export const LATE_WATCH_MS = 1_000;

export type LoadOutcome = 'ready' | 'failed' | 'stopped' | 'timeout' | 'unreachable' | 'cancelled';

export interface LoadRecord {
  /** When the load began (restart requested, else process start, else watch start), epoch ms. */
  readonly startedAt: number;
  readonly outcome: LoadOutcome;
  /** Restart (or start) to ready; only for outcome 'ready'. */
  readonly totalMs?: number;
  /** How long each phase lasted (until the next one began, or until the end). */
  readonly phaseMs: Readonly<Partial<Record<LoadPhase, number>>>;
  /** Weights phase end -> ready. */
  readonly afterWeightsMs?: number;
  /** The weights' bytes all read (or the last shard line) -> weights phase end: quiet processing inside the weights phase. */
  readonly afterShardsMs?: number;
  /** Load start -> weights phase. */
  readonly startingMs?: number;
  readonly bytesRead?: number;
  readonly totalBytes?: number;
  /** Mean rates while reading cold (storage) and warm (page cache), bytes/s. */
  readonly coldBps?: number;
  readonly warmBps?: number;
  /** Bytes read / weights phase duration. */
  readonly meanBps?: number;
  /** Model bytes resident in the page cache when the restart was asked for. */
  readonly residentBytesAtStart?: number;
  // --- since the load breakdown (docs/load-breakdown.md); absent from older records ---
  /** When each phase began, ms after startedAt. */
  readonly phaseStartMs?: Readonly<Partial<Record<LoadPhase, number>>>;
  /** The named quiet steps (JIT compiles, weights after the last shard), ms after startedAt. */
  readonly steps?: readonly LoadStep[];
  /** Share of the weights this load found in the page cache, from its own reads (0..1). */
  readonly cachedShare?: number;
  /** When the watch began, ms after startedAt (0 when it saw the restart): what began before it was seen late. */
  readonly watchFromMs?: number;
  /** CUDA graphs the capture ran (its bar's total), and the unit's `--cuda-graph-max-bs` then. */
  readonly captureBatches?: number;
  readonly cudaGraphMaxBs?: number;
}

/** A named quiet step of a load (monitor/history/loadBreakdown.ts tracks them from the states). */
export interface LoadStep {
  readonly kind: ActivityKind;
  /** ms after the load's start. */
  readonly startMs: number;
  readonly ms: number;
}

/** A step as the watch sees it: epoch ms, `until` once it ended. */
export interface SeenStep {
  readonly kind: ActivityKind;
  readonly since: number;
  readonly until?: number;
}

/** What the extension's global state offers (vscode.Memento's shape). */
export interface MementoLike {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

export function historyKey(server: string, unit: string): string {
  return `kimi.loadHistory:${server}:${unit}`;
}

function loadStart(state: LoadState): number {
  return state.restartRequestedAt ?? state.processStartedAt ?? state.watchStartedAt;
}

/** The record of one finished (or abandoned) load. Pure. */
export function recordOf(
  state: LoadState,
  outcome: LoadOutcome,
  now: number,
  residentBytesAtStart?: number,
  seenSteps: readonly SeenStep[] = [],
  cudaGraphMaxBs?: number,
): LoadRecord {
  const startedAt = loadStart(state);
  const end = state.readyAt ?? now;
  const seen = LOAD_PHASES.filter((p) => state.phaseTimes[p] !== undefined).map(
    (p) => [p, state.phaseTimes[p]!] as const,
  );
  const phaseMs: Partial<Record<LoadPhase, number>> = {};
  for (let i = 0; i < seen.length; i++) {
    const [phase, at] = seen[i]!;
    if (phase === 'ready') continue;
    const next = seen[i + 1]?.[1] ?? end;
    phaseMs[phase] = Math.max(0, next - at);
  }
  const phaseStartMs: Partial<Record<LoadPhase, number>> = {};
  for (const [phase, at] of seen) phaseStartMs[phase] = Math.max(0, at - startedAt);
  const steps = seenSteps
    .filter((s) => s.since >= startedAt && s.since <= end)
    .map((s) => ({
      kind: s.kind,
      startMs: s.since - startedAt,
      ms: Math.max(0, Math.min(s.until ?? end, end) - s.since),
    }));
  const cachedShare = cachedShareOf(state);
  const weightsAt = state.phaseTimes['loading weights'];
  const weightsEnd = seen.find(([p]) => p !== 'starting' && p !== 'loading weights')?.[1];
  const t = state.ioTotals;
  const record: LoadRecord = {
    startedAt,
    outcome,
    phaseMs,
    ...(outcome === 'ready' && state.readyAt !== undefined ? { totalMs: state.readyAt - startedAt } : {}),
    ...(outcome === 'ready' && weightsEnd !== undefined && state.readyAt !== undefined
      ? { afterWeightsMs: state.readyAt - weightsEnd }
      : {}),
    ...(weightsEnd !== undefined && state.weightsReadAt !== undefined && state.weightsReadAt <= weightsEnd
      ? { afterShardsMs: weightsEnd - state.weightsReadAt }
      : {}),
    ...(weightsAt !== undefined ? { startingMs: Math.max(0, weightsAt - startedAt) } : {}),
    ...(state.io ? { bytesRead: state.io.readBytes } : {}),
    ...(state.io?.totalBytes !== undefined ? { totalBytes: state.io.totalBytes } : {}),
    ...(t.coldMs >= 1000 ? { coldBps: (t.coldBytes / t.coldMs) * 1000 } : {}),
    ...(t.warmMs >= 1000 ? { warmBps: (t.warmBytes / t.warmMs) * 1000 } : {}),
    ...(state.io && phaseMs['loading weights']
      ? { meanBps: (state.io.readBytes / phaseMs['loading weights']) * 1000 }
      : {}),
    ...(residentBytesAtStart !== undefined ? { residentBytesAtStart } : {}),
    phaseStartMs,
    ...(steps.length ? { steps } : {}),
    ...(cachedShare !== undefined ? { cachedShare } : {}),
    watchFromMs: Math.max(0, state.watchStartedAt - startedAt),
    ...(state.cudaGraphBatches && state.cudaGraphBatches.total > 0
      ? { captureBatches: state.cudaGraphBatches.total }
      : {}),
    ...(cudaGraphMaxBs !== undefined ? { cudaGraphMaxBs } : {}),
  };
  return record;
}

/**
 * The share of the weights a load found in the page cache, from its own reads: what it did not
 * read from storage (read_bytes). Unknown without the storage count or the model's size, and when
 * neither count grew (an mmap load of cached files, or a filesystem that counts nothing, look alike).
 */
export function cachedShareOf(state: LoadState): number | undefined {
  const io = state.io;
  const total = io?.totalBytes ?? state.prior?.totalBytes;
  if (!io || io.coldBytes === undefined || total === undefined || total <= 0) return undefined;
  if (io.coldBytes <= 0 && io.readBytes < total / 2) return undefined;
  return Math.max(0, Math.min(1, 1 - io.coldBytes / total));
}

/**
 * Whether the watch saw this load from its start, so that its phases' durations are true. Older
 * records do not say when their watch began: one begun on a running server that reached ready
 * has its whole age before the weights.
 */
export function watchedFromStart(r: LoadRecord): boolean {
  if (r.watchFromMs !== undefined) return r.watchFromMs <= LATE_WATCH_MS;
  if (r.outcome !== 'ready' || r.totalMs === undefined) return true;
  return r.startingMs !== undefined && r.startingMs < 0.75 * r.totalMs;
}

/**
 * The newest first: at most `limit` loads watched from their start, and the newest LATE_WATCHES_KEEP
 * late ones (a window reload or a `status` records one each time: they must not push real loads out).
 */
export function appendRecord(records: readonly LoadRecord[], record: LoadRecord, limit = HISTORY_LIMIT): LoadRecord[] {
  let watched = 0;
  let late = 0;
  return [record, ...records].filter((r) => (watchedFromStart(r) ? ++watched <= limit : ++late <= LATE_WATCHES_KEEP));
}

export function median(values: readonly number[]): number | undefined {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1]! + v[mid]!) / 2;
}

function pick(records: readonly LoadRecord[], f: (r: LoadRecord) => number | undefined): number[] {
  return records.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x));
}

/**
 * The ETA prior from history: median cold and warm rates, median fixed phases of the loads
 * that reached ready, and the spread of their totals, from the loads watched from their start. `extra` adds what is known now
 * (residency measured before the restart, model size).
 */
export function priorFrom(
  records: readonly LoadRecord[],
  extra: { residentBytes?: number; totalBytes?: number; cudaGraphMaxBs?: number } = {},
): LoadPrior {
  records = records.filter(watchedFromStart);
  const ready = records.filter((r) => r.outcome === 'ready');
  const coldBps = median(pick(records, (r) => r.coldBps));
  // A "page-cache rate" under the same load's storage rate is a trickle (sockets, imports) of a
  // load that read every byte cold, no reading rate: a forecast of cached files at it says minutes.
  const warmBps = median(
    pick(records, (r) => (r.coldBps !== undefined && (r.warmBps ?? 0) < r.coldBps ? undefined : r.warmBps)),
  );
  const afterWeightsMs = afterWeightsFor(ready, extra.cudaGraphMaxBs);
  const afterShardsMs = median(pick(ready, (r) => r.afterShardsMs));
  const startingMs = median(pick(ready, (r) => r.startingMs));
  const weightsPhaseMs = median(pick(ready, (r) => r.phaseMs['loading weights']));
  const totals = pick(ready, (r) => r.totalMs);
  return {
    ...(coldBps !== undefined ? { coldBps } : {}),
    ...(warmBps !== undefined ? { warmBps } : {}),
    ...(afterWeightsMs !== undefined ? { afterWeightsMs } : {}),
    ...(afterShardsMs !== undefined ? { afterShardsMs } : {}),
    ...(startingMs !== undefined ? { startingMs } : {}),
    ...(weightsPhaseMs !== undefined ? { weightsPhaseMs } : {}),
    ...(totals.length ? { totalMsRange: [Math.min(...totals), Math.max(...totals)] as const } : {}),
    ...(extra.residentBytes !== undefined ? { residentBytes: extra.residentBytes } : {}),
    ...(extra.totalBytes !== undefined ? { totalBytes: extra.totalBytes } : {}),
    loads: ready.length,
  };
}

/**
 * History's time from the weights' end to ready, for a load that will capture with
 * `cudaGraphMaxBs`: each past load's capture scaled by the CUDA graphs the new bound gives
 * against the ones its own gave (SGLang captures one per batch size up to the bound), the rest
 * as it was. Loads that did not record both are taken as they were.
 */
function afterWeightsFor(ready: readonly LoadRecord[], cudaGraphMaxBs: number | undefined): number | undefined {
  return median(
    pick(ready, (r) => {
      const capture = r.phaseMs['capturing CUDA graphs'];
      if (r.afterWeightsMs === undefined || cudaGraphMaxBs === undefined || r.cudaGraphMaxBs === undefined)
        return r.afterWeightsMs;
      if (capture === undefined || r.cudaGraphMaxBs === cudaGraphMaxBs) return r.afterWeightsMs;
      const then = captureSizesUpTo(r.cudaGraphMaxBs);
      if (then <= 0) return r.afterWeightsMs;
      return r.afterWeightsMs - capture + (capture * captureSizesUpTo(cudaGraphMaxBs)) / then;
    }),
  );
}

function isRecord(x: unknown): x is LoadRecord {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as LoadRecord).startedAt === 'number' &&
    typeof (x as LoadRecord).outcome === 'string'
  );
}

/** History of one server+unit in a Memento. */
export class LoadHistoryStore {
  constructor(private readonly memento: MementoLike) {}

  list(server: string, unit: string): LoadRecord[] {
    const raw = this.memento.get<unknown>(historyKey(server, unit));
    return Array.isArray(raw) ? raw.filter(isRecord) : [];
  }

  async add(server: string, unit: string, record: LoadRecord): Promise<LoadRecord[]> {
    const next = appendRecord(this.list(server, unit), record);
    await this.memento.update(historyKey(server, unit), next);
    return next;
  }

  async clear(server: string, unit: string): Promise<void> {
    await this.memento.update(historyKey(server, unit), undefined);
  }
}
