import { targetIo, type Target } from '../../target/target';
import type { Transport } from '../../transport/transport';
import { getFlag, modelPathOf } from '../../engine/execStart';
import { dropCacheWarning } from '../../host/pageCache';
import { predictionText } from '../../present/words/pageCacheWords';
import { predictLoad } from '../history/loadPrediction';
import type { LoadPrior } from '../eta/eta';
import { LoadHistoryStore, priorFrom, recordOf, type MementoLike } from '../history/history';
import { latestBreakdown, trackSteps, type LoadBreakdown, type StepTrack } from '../history/loadBreakdown';
import type { LoadState } from '../state/loadStateTypes';
import { measureResidency } from './warmCache';
import { readCompileForecast } from './compileRead';
import type { CompileForecast, ForeseenStep } from '../eta/compileForecast';
import type { WatchOutcome } from '../watch/watchTypes';

/** What is known about the next load before the restart. */
export interface LoadForecast {
  readonly modelPath: string | undefined;
  readonly residentBytes: number | undefined;
  readonly totalBytes: number | undefined;
  /** "~9 min: 41% of the weights are cached", and a compile an empty kernel cache adds. */
  readonly text: string | undefined;
  readonly warning: string | undefined;
  /** How to keep (or fill ahead) a kernel cache found empty. */
  readonly advice?: string;
  readonly prior: LoadPrior;
}

/**
 * What the forecast read, before its words: the load time in words (host/pageCache.ts), and the
 * compiles an empty kernel cache adds (present/forecast.ts words them into a LoadForecast).
 */
export interface LoadFacts extends Omit<LoadForecast, 'text' | 'advice'> {
  /** "~9 min: 41% of the weights are cached". */
  readonly loadText: string | undefined;
  readonly compiles: CompileForecast;
}

/** What a forecast read before a restart: the page cache's share of the weights, the command line's `--cuda-graph-max-bs`. */
interface AtRestart {
  readonly residentBytes?: number;
  readonly cudaGraphMaxBs?: number;
  readonly foreseenSteps?: readonly ForeseenStep[];
}

/**
 * This host's load history and what it predicts: the restart confirmation's forecast, the ETA
 * prior, and a record of each load when it ends. Knows nothing of VS Code.
 */
export class LoadInsights {
  private readonly history: LoadHistoryStore;
  /** What the forecast read before each server's restart, kept for the prior and the load's record. */
  private readonly atRestart = new Map<string, AtRestart>();
  /** The named quiet steps of each server's load under way (the state keeps only the current one). */
  private readonly steps = new Map<string, StepTrack>();

  constructor(memento: MementoLike) {
    this.history = new LoadHistoryStore(memento);
  }

  /** Reads the target's model path and the page-cache residency of its weights. Never throws. */
  /** `foreseeCompiles: false` leaves the kernel caches unread (bench:eta's --no-foresee: the forecast of before). */
  async forecast(
    transport: Transport,
    server: string,
    unit: string,
    target: Target,
    foreseeCompiles = true,
  ): Promise<LoadFacts> {
    const records = this.history.list(server, unit);
    let modelPath: string | undefined;
    let warning: string | undefined;
    let cudaGraphMaxBs: number | undefined;
    let argv: readonly string[] = [];
    let pid: number | undefined;
    let givenModelPath: string | undefined;
    try {
      // The target's command line (a container's, with its path on the host through its volume).
      const state = await target.readState(targetIo(transport));
      argv = state.argv;
      if (foreseeCompiles) pid = state.unit.mainPid;
      givenModelPath = modelPathOf(argv);
      modelPath = givenModelPath?.startsWith('/') ? state.hostPath(givenModelPath) : givenModelPath;
      warning = dropCacheWarning(argv);
      const bound = getFlag(argv, '--cuda-graph-max-bs');
      cudaGraphMaxBs = bound !== undefined && /^\d+$/.test(bound) ? Number(bound) : undefined;
    } catch {
      // No forecast is better than a guess.
    }
    let residentBytes: number | undefined;
    let totalBytes: number | undefined;
    const [residency, compiles] = await Promise.all([
      modelPath?.startsWith('/') ? measureResidency(transport, modelPath).catch(() => undefined) : undefined,
      readCompileForecast(transport, pid, argv, givenModelPath, records),
    ]);
    if (residency) {
      residentBytes = residency.residency.residentBytes;
      totalBytes = residency.residency.totalBytes;
    }
    const foreseenSteps = compiles.steps.length ? compiles.steps : undefined;
    const residentKept = residentBytes ?? this.atRestart.get(server)?.residentBytes;
    this.atRestart.set(server, {
      ...(residentKept !== undefined ? { residentBytes: residentKept } : {}),
      ...(cudaGraphMaxBs !== undefined ? { cudaGraphMaxBs } : {}),
      ...(foreseenSteps ? { foreseenSteps } : {}),
    });
    // (a step the previous loads timed is in their load time already)
    const compileMs = (foreseenSteps ?? []).reduce((sum, s) => sum + (s.from === 'history' ? 0 : s.ms), 0);
    const loadText = totalBytes
      ? predictionText(predictLoad(records, residentBytes ?? 0, totalBytes) + compileMs, residentBytes, totalBytes)
      : undefined;
    return {
      modelPath,
      residentBytes,
      totalBytes,
      loadText,
      warning,
      compiles,
      prior: {
        ...priorFrom(records, {
          residentBytes,
          totalBytes,
          ...(cudaGraphMaxBs !== undefined ? { cudaGraphMaxBs } : {}),
        }),
        ...(foreseenSteps ? { foreseenSteps } : {}),
      },
    };
  }

  prior(server: string, unit: string): LoadPrior {
    const atRestart = this.atRestart.get(server);
    const prior = priorFrom(this.history.list(server, unit), atRestart);
    return atRestart?.foreseenSteps ? { ...prior, foreseenSteps: atRestart.foreseenSteps } : prior;
  }

  /** Each state of a server's watch: the steps it names are kept for the load's record. */
  observe(server: string, state: LoadState, at: number = Date.now()): void {
    const before = this.steps.get(server);
    const after = trackSteps(before, state, at);
    if (after !== before) this.steps.set(server, after);
  }

  /** Keeps a finished load (one that got anywhere) for the next predictions. */
  async record(server: string, unit: string, outcome: WatchOutcome): Promise<void> {
    if (outcome.end === 'cancelled' && outcome.state.phase === undefined) return;
    const state: LoadState = outcome.state;
    const now = Date.now();
    const steps = trackSteps(this.steps.get(server), state, now).steps;
    const record = recordOf(
      state,
      outcome.end,
      now,
      this.atRestart.get(server)?.residentBytes,
      steps,
      this.atRestart.get(server)?.cudaGraphMaxBs,
    );
    await this.history.add(server, unit, record);
    this.atRestart.delete(server);
    this.steps.delete(server);
  }

  /** The last load that reached ready, explained against the ones before it; undefined when it cannot be. */
  breakdown(server: string, unit: string): LoadBreakdown | undefined {
    return latestBreakdown(this.history.list(server, unit));
  }
}
