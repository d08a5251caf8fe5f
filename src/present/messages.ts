import type { ServerProfile } from '../config/config';
import { formatDuration } from '../util/duration';
import type { LoadState } from '../monitor/state/loadStateTypes';
import type { WatchOutcome } from '../monitor/watch/watchTypes';
import { causeText, formatCause, rootCause } from '../engine/rootCause';
import { activityLabel } from '../engine/activity';
import type { LoadBreakdown } from '../monitor/history/loadBreakdown';
import { breakdownLine } from './loadSummary';
import { standInText } from '../host/portOwner';

/** The moment a load's clock starts: the restart we asked for, else the process start. */
export function loadStartedAt(state: LoadState): number {
  return state.restartRequestedAt ?? state.processStartedAt ?? state.watchStartedAt;
}

/** "Kimi on gpu1 is ready (loaded in 9m 12s: weights ...; 2m 10s slower than last time: ...)" when `lastLoad` is this load. */
export function readyMessage(server: ServerProfile, state: LoadState, lastLoad?: LoadBreakdown): string {
  if (lastLoad && lastLoad.startedAt === loadStartedAt(state))
    return `Kimi on ${server.name} is ready (${breakdownLine(lastLoad)})`;
  const duration = state.readyAt !== undefined ? formatDuration(state.readyAt - loadStartedAt(state)) : undefined;
  return `Kimi on ${server.name} is ready${duration ? ` (loaded in ${duration})` : ''}`;
}

/**
 * "Kimi on gpu1 failed: the service exited with status 1. Cause: TypeError: ... Then: Received sigquit ...":
 * how it ended, the root cause (engine/rootCause), then the lines that only echo the end.
 */
export function failureMessage(server: ServerProfile, outcome: WatchOutcome): string {
  const state = outcome.state;
  const summary = state.failure?.summary ?? outcome.message ?? 'unknown cause';
  const lines = state.failure?.lines ?? state.recentErrors;
  const cause = rootCause(lines);
  if (cause) {
    const then = cause.after.slice(0, 2);
    // The port the server could not bind: who holds it, when the sampler saw that.
    const holder = cause.kind === 'address-in-use' && state.standIn ? ` (${standInText(state.standIn)})` : '';
    return `Kimi on ${server.name} failed: ${summary}. Cause: ${formatCause(cause)}${holder}${then.length ? `. Then: ${then.join(' | ')}` : ''}`;
  }
  const last = lines
    .slice(-3)
    .map((l) => l.trim())
    .filter(Boolean);
  return `Kimi on ${server.name} failed: ${summary}${last.length ? `. Last errors: ${last.join(' | ')}` : ''}`;
}

/** The failure's root cause in one line, for the tooltip and the reports; undefined when no line tells it. */
export function failureCause(state: LoadState): string | undefined {
  return state.failure ? causeText(state.failure.lines) : undefined;
}

export function endMessage(server: ServerProfile, outcome: WatchOutcome): string | undefined {
  switch (outcome.end) {
    case 'timeout':
      return `Stopped watching Kimi on ${server.name}: ${outcome.message ?? 'timed out'} (last: ${describe(outcome.state)}).`;
    case 'unreachable':
      return `Stopped watching Kimi on ${server.name}: ${outcome.message ?? 'host unreachable'}. ${outcome.state.connectionError ?? ''}`.trim();
    case 'stopped':
      return `Kimi on ${server.name} is stopped (unit ${server.unit} is not running).`;
    default:
      return undefined;
  }
}

/** " 42%" while loading with a known progress, else "". */
export function loadingPercent(state: LoadState): string {
  return state.verdict === 'loading' && state.progress !== undefined ? ` ${Math.floor(state.progress * 100)}%` : '';
}

/** "loading 42% (loading weights, 27/64 shards)". */
export function describe(state: LoadState): string {
  const percent = loadingPercent(state);
  const details: string[] = [];
  if (state.phase && state.phase !== state.verdict) details.push(state.phase);
  if (state.phase === 'loading weights' && state.shards)
    details.push(`${state.shards.done}/${state.shards.total} shards`);
  if (state.phase === 'capturing CUDA graphs' && state.cudaGraphBatches) {
    details.push(`${state.cudaGraphBatches.done}/${state.cudaGraphBatches.total} batches`);
  }
  // The step under way inside the phase, in the extension's words (a JIT compile is not "capturing CUDA graphs").
  if (state.activity && state.readyAt === undefined && state.failure === undefined)
    details.push(activityLabel(state.activity));
  return `${state.verdict}${percent}${details.length ? ` (${details.join(', ')})` : ''}`;
}
