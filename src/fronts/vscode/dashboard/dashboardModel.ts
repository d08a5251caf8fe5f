/**
 * What the load dashboard shows, built from LoadState: the time series (kept in a ring buffer)
 * and one serialisable model posted to the webview. Pure, no VS Code.
 */
import * as l10n from '@vscode/l10n';
import { visibleEta } from '../../../present/etaText';
import { LOAD_PHASES } from '../../../engine/events';
import { bytesFraction } from '../../../monitor/state/loadProgress';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { RingBuffer } from '../../../util/ringBuffer';
import type { LoadBreakdown } from '../../../monitor/history/loadBreakdown';
import { breakdownLine, phaseRows, type PhaseRow } from '../../../present/loadSummary';
import { phaseWord, verdictWord } from '../../../present/stateWords';
import { dashboardWords, etaBasisWord, type DashboardWords } from './dashboardWords';

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
  /** The page's fixed words and the templates its script fills, in the display language. */
  readonly words: DashboardWords;
  readonly title: string;
  /** The verdict as the code names it (the badge's style), and as the user reads it. */
  readonly verdict: string | undefined;
  readonly verdictText: string;
  readonly phase: string | undefined;
  readonly startedAt: number | undefined;
  readonly now: number;
  readonly readyAt: number | undefined;
  readonly progress: number | undefined;
  readonly bytesFraction: number | undefined;
  readonly etaAt: number | undefined;
  readonly etaBasis: string | undefined;
  /** Phase name (and its words) -> when it began, in load order. */
  readonly phases: readonly { readonly phase: string; readonly label: string; readonly at: number }[];
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
  if (s?.shards) facts.push(l10n.t('Shards {0}/{1}', s.shards.done, s.shards.total));
  if (s?.io)
    facts.push(
      s.io.totalBytes
        ? l10n.t('Read {0} GB of {1} GB', (s.io.readBytes / 1e9).toFixed(2), (s.io.totalBytes / 1e9).toFixed(2))
        : l10n.t('Read {0} GB', (s.io.readBytes / 1e9).toFixed(2)),
    );
  // the read rate is a loading figure: once ready it is only the last reading of the weights
  if (s?.readRate !== undefined && s.verdict !== 'ready' && s.phase !== 'ready')
    facts.push(`${(s.readRate / 1e6).toFixed(1)} MB/s`);
  if (s?.gpu)
    facts.push(
      l10n.t(
        'GPU {0} / {1} GiB ({2} GPUs)',
        (s.gpu.usedMiB / 1024).toFixed(1),
        (s.gpu.totalMiB / 1024).toFixed(0),
        s.gpu.perGpu.length,
      ),
    );
  if (s?.cudaGraphBatches) facts.push(l10n.t('CUDA graphs {0}/{1}', s.cudaGraphBatches.done, s.cudaGraphBatches.total));
  const range = s?.prior?.totalMsRange;
  return {
    words: dashboardWords(),
    title: input.server ? l10n.t('Kimi load · {0}', input.server) : l10n.t('Kimi load'),
    verdict: s?.verdict,
    verdictText: verdictWord(s?.verdict ?? 'not watched'),
    phase: s?.phase,
    startedAt: s ? (s.restartRequestedAt ?? s.processStartedAt ?? s.watchStartedAt) : undefined,
    now: input.now,
    readyAt: s?.readyAt,
    progress: s?.progress,
    bytesFraction: s ? bytesFraction(s) : undefined,
    etaAt: s?.eta?.readyAt,
    etaBasis: s?.eta ? etaBasisWord(s.eta.basis) : undefined,
    phases: s
      ? LOAD_PHASES.filter((p) => s.phaseTimes[p] !== undefined).map((p) => ({
          phase: p,
          label: phaseWord(p),
          at: s.phaseTimes[p]!,
        }))
      : [],
    series: input.series,
    historyBand: range ? { minMs: range[0], maxMs: range[1], loads: s?.prior?.loads ?? 0 } : undefined,
    facts,
    warning: s?.witnessWarning ?? (s?.stalled ? l10n.t('stalled: no witness has moved') : undefined),
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
      ? l10n.t('The last load that reached ready')
      : b.previous.length
        ? l10n.t('This load against the previous ones')
        : l10n.t('This load'),
    line: breakdownLine(b),
    rows,
    scaleMs,
    previousLoads: b.previous.length,
  };
}
