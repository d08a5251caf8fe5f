/**
 * What the load dashboard shows, built from LoadState: the time series (kept in a ring buffer)
 * and one serialisable model posted to the webview. Pure, no VS Code.
 */
import { visibleEta } from '../../../present/etaText';
import { LOAD_PHASES } from '../../../engine/events';
import { bytesFraction } from '../../../monitor/state/loadProgress';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { RingBuffer } from '../../../util/ringBuffer';
import type { LoadBreakdown } from '../../../monitor/history/loadBreakdown';
import { breakdownLine, phaseRows, type PhaseRow } from '../../../present/loadSummary';

export interface SeriesPoint {
  /** Epoch ms. */
  readonly t: number;
  readonly rateMBps: number | null;
  readonly gpuUsedGiB: number | null;
  readonly progress: number | null;
  /** Seconds left per the ETA at that moment. */
  readonly etaS: number | null;
}

/** The time series of one load; a new load (another watch start) starts it again. */
export class LoadSeries {
  private readonly buffer: RingBuffer<SeriesPoint>;
  private loadKey: number | undefined;

  constructor(capacity = 3600) {
    this.buffer = new RingBuffer<SeriesPoint>(capacity);
  }

  /** Adds a point when a witness reading or the progress changed. */
  observe(state: LoadState, now: number): void {
    const key = state.restartRequestedAt ?? state.watchStartedAt;
    if (key !== this.loadKey) {
      this.buffer.clear();
      this.loadKey = key;
    }
    const remaining = visibleEta(state.eta, now);
    const point: SeriesPoint = {
      t: now,
      rateMBps:
        state.readRate !== undefined && state.phase !== undefined && state.phase !== 'ready'
          ? state.readRate / 1e6
          : null,
      gpuUsedGiB: state.gpu ? state.gpu.usedMiB / 1024 : null,
      progress: state.progress ?? null,
      etaS: remaining === undefined ? null : remaining / 1000,
    };
    const last = this.buffer.last();
    if (
      last &&
      last.rateMBps === point.rateMBps &&
      last.gpuUsedGiB === point.gpuUsedGiB &&
      last.progress === point.progress &&
      now - last.t < 5000
    )
      return;
    this.buffer.push(point);
  }

  points(): SeriesPoint[] {
    return this.buffer.toArray();
  }
}

export interface DashboardModel {
  readonly title: string;
  readonly verdict: string | undefined;
  readonly phase: string | undefined;
  readonly startedAt: number | undefined;
  readonly now: number;
  readonly readyAt: number | undefined;
  readonly progress: number | undefined;
  readonly bytesFraction: number | undefined;
  readonly etaAt: number | undefined;
  readonly etaBasis: string | undefined;
  /** Phase name -> when it began, in load order. */
  readonly phases: readonly { readonly phase: string; readonly at: number }[];
  readonly series: readonly SeriesPoint[];
  /** Whole-load durations of past loads (min..max ms) and how many. */
  readonly historyBand: { readonly minMs: number; readonly maxMs: number; readonly loads: number } | undefined;
  readonly facts: readonly string[];
  readonly warning: string | undefined;
  readonly verification: string | undefined;
  /** The last load that reached ready, per phase against the loads before it (bars on one scale). */
  readonly breakdown: DashboardBreakdown | undefined;
}

export interface DashboardBreakdown {
  /** "Last load (10:31)" while another load runs, else "This load". */
  readonly heading: string;
  readonly line: string;
  readonly rows: readonly PhaseRow[];
  /** The longest bar (this load's or a previous one's), ms. */
  readonly scaleMs: number;
  readonly previousLoads: number;
}

export interface DashboardInput {
  readonly server?: string;
  readonly state: LoadState | undefined;
  readonly lastLoad?: LoadBreakdown;
  readonly series: readonly SeriesPoint[];
  readonly verification?: string;
  readonly now: number;
}

export function dashboardModel(input: DashboardInput): DashboardModel {
  const s = input.state;
  const facts: string[] = [];
  if (s?.shards) facts.push(`Shards ${s.shards.done}/${s.shards.total}`);
  if (s?.io)
    facts.push(
      `Read ${(s.io.readBytes / 1e9).toFixed(2)} GB${s.io.totalBytes ? ` of ${(s.io.totalBytes / 1e9).toFixed(2)} GB` : ''}`,
    );
  // the read rate is a loading figure: once ready it is only the last reading of the weights
  if (s?.readRate !== undefined && s.verdict !== 'ready' && s.phase !== 'ready')
    facts.push(`${(s.readRate / 1e6).toFixed(1)} MB/s`);
  if (s?.gpu)
    facts.push(
      `GPU ${(s.gpu.usedMiB / 1024).toFixed(1)} / ${(s.gpu.totalMiB / 1024).toFixed(0)} GiB (${s.gpu.perGpu.length} GPUs)`,
    );
  if (s?.cudaGraphBatches) facts.push(`CUDA graphs ${s.cudaGraphBatches.done}/${s.cudaGraphBatches.total}`);
  const range = s?.prior?.totalMsRange;
  return {
    title: input.server ? `Kimi load · ${input.server}` : 'Kimi load',
    verdict: s?.verdict,
    phase: s?.phase,
    startedAt: s ? (s.restartRequestedAt ?? s.processStartedAt ?? s.watchStartedAt) : undefined,
    now: input.now,
    readyAt: s?.readyAt,
    progress: s?.progress,
    bytesFraction: s ? bytesFraction(s) : undefined,
    etaAt: s?.eta?.readyAt,
    etaBasis: s?.eta?.basis,
    phases: s
      ? LOAD_PHASES.filter((p) => s.phaseTimes[p] !== undefined).map((p) => ({ phase: p, at: s.phaseTimes[p]! }))
      : [],
    series: input.series,
    historyBand: range ? { minMs: range[0], maxMs: range[1], loads: s?.prior?.loads ?? 0 } : undefined,
    facts,
    warning: s?.witnessWarning ?? (s?.stalled ? 'stalled: no witness has moved' : undefined),
    verification: input.verification,
    breakdown: input.lastLoad ? dashboardBreakdown(input.lastLoad, s) : undefined,
  };
}

function dashboardBreakdown(b: LoadBreakdown, state: LoadState | undefined): DashboardBreakdown {
  const rows = phaseRows(b);
  const scaleMs = Math.max(1, ...rows.flatMap((r) => [r.ms, ...r.previousMs.map((ms) => ms ?? 0)]));
  const current = state?.readyAt !== undefined && b.startedAt + b.totalMs >= (state.processStartedAt ?? 0);
  return {
    heading: !current
      ? 'The last load that reached ready'
      : b.previous.length
        ? 'This load against the previous ones'
        : 'This load',
    line: breakdownLine(b),
    rows,
    scaleMs,
    previousLoads: b.previous.length,
  };
}
