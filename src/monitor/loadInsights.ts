import { targetIo, type Target } from '../target/target';
import type { Transport } from '../transport/transport';
import { getFlag, modelPathOf } from '../engine/execStart';
import { dropCacheWarning, predictionText } from '../host/pageCache';
import { predictLoad } from './loadPrediction';
import type { LoadPrior } from './eta';
import { LoadHistoryStore, priorFrom, recordOf, type MementoLike } from './history';
import { latestBreakdown, trackSteps, type LoadBreakdown, type StepTrack } from './loadBreakdown';
import type { LoadState } from './loadState';
import { measureResidency } from './warmCache';
import type { WatchOutcome } from './watcher';

/** What is known about the next load before the restart. */
export interface LoadForecast {
  readonly modelPath: string | undefined;
  readonly residentBytes: number | undefined;
  readonly totalBytes: number | undefined;
  /** "~9 min: 41% of the weights are cached". */
  readonly text: string | undefined;
  readonly warning: string | undefined;
  readonly prior: LoadPrior;
}

/** What a forecast read before a restart: the page cache's share of the weights, the command line's `--cuda-graph-max-bs`. */
interface AtRestart {
  readonly residentBytes?: number;
  readonly cudaGraphMaxBs?: number;
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
  async forecast(transport: Transport, server: string, unit: string, target: Target): Promise<LoadForecast> {
    const records = this.history.list(server, unit);
    let modelPath: string | undefined;
    let warning: string | undefined;
    let cudaGraphMaxBs: number | undefined;
    try {
      // The target's command line (a container's, with its path on the host through its volume).
      const state = await target.readState(targetIo(transport));
      const argv = state.argv;
      const given = modelPathOf(argv);
      modelPath = given?.startsWith('/') ? state.hostPath(given) : given;
      warning = dropCacheWarning(argv);
      const bound = getFlag(argv, '--cuda-graph-max-bs');
      cudaGraphMaxBs = bound !== undefined && /^\d+$/.test(bound) ? Number(bound) : undefined;
    } catch {
      // No forecast is better than a guess.
    }
    let residentBytes: number | undefined;
    let totalBytes: number | undefined;
    if (modelPath?.startsWith('/')) {
      try {
        const { residency } = await measureResidency(transport, modelPath);
        residentBytes = residency.residentBytes;
        totalBytes = residency.totalBytes;
      } catch {
        // Residency unknown: the forecast says so.
      }
    }
    const residentKept = residentBytes ?? this.atRestart.get(server)?.residentBytes;
    this.atRestart.set(server, {
      ...(residentKept !== undefined ? { residentBytes: residentKept } : {}),
      ...(cudaGraphMaxBs !== undefined ? { cudaGraphMaxBs } : {}),
    });
    const text = totalBytes
      ? predictionText(predictLoad(records, residentBytes ?? 0, totalBytes), residentBytes, totalBytes)
      : undefined;
    return {
      modelPath,
      residentBytes,
      totalBytes,
      text,
      warning,
      prior: priorFrom(records, {
        residentBytes,
        totalBytes,
        ...(cudaGraphMaxBs !== undefined ? { cudaGraphMaxBs } : {}),
      }),
    };
  }

  prior(server: string, unit: string): LoadPrior {
    return priorFrom(this.history.list(server, unit), this.atRestart.get(server));
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
