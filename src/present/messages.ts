import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../config/config';
import { formatDuration } from '../util/duration';
import type { LoadState } from '../monitor/state/loadStateTypes';
import type { WatchOutcome } from '../monitor/watch/watchTypes';
import { causeText, formatCause, rootCause } from '../engine/rootCause';
import { activityText, phaseWord, verdictWord } from './stateWords';
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
    return l10n.t('Kimi on {0} is ready ({1})', server.name, breakdownLine(lastLoad));
  const duration = state.readyAt !== undefined ? formatDuration(state.readyAt - loadStartedAt(state)) : undefined;
  return duration
    ? l10n.t('Kimi on {0} is ready (loaded in {1})', server.name, duration)
    : l10n.t('Kimi on {0} is ready', server.name);
}

/**
 * "Kimi on gpu1 failed: the service exited with status 1. Cause: TypeError: ... Then: Received sigquit ...":
 * how it ended, the root cause (engine/rootCause), then the lines that only echo the end.
 */
export function failureMessage(server: ServerProfile, outcome: WatchOutcome): string {
  const state = outcome.state;
  const summary = state.failure?.summary ?? outcome.message ?? l10n.t('unknown cause');
  const lines = state.failure?.lines ?? state.recentErrors;
  const cause = rootCause(lines);
  if (cause) {
    const then = cause.after.slice(0, 2);
    // The port the server could not bind: who holds it, when the sampler saw that.
    const holder = cause.kind === 'address-in-use' && state.standIn ? ` (${standInText(state.standIn)})` : '';
    const failed = l10n.t(
      'Kimi on {0} failed: {1}. Cause: {2}',
      server.name,
      summary,
      `${formatCause(cause)}${holder}`,
    );
    return then.length ? l10n.t('{0}. Then: {1}', failed, then.join(' | ')) : failed;
  }
  const last = lines
    .slice(-3)
    .map((l) => l.trim())
    .filter(Boolean);
  return last.length
    ? l10n.t('Kimi on {0} failed: {1}. Last errors: {2}', server.name, summary, last.join(' | '))
    : l10n.t('Kimi on {0} failed: {1}', server.name, summary);
}

/** The failure's root cause in one line, for the tooltip and the reports; undefined when no line tells it. */
export function failureCause(state: LoadState): string | undefined {
  return state.failure ? causeText(state.failure.lines) : undefined;
}

export function endMessage(server: ServerProfile, outcome: WatchOutcome): string | undefined {
  switch (outcome.end) {
    case 'timeout':
      return l10n.t(
        'Stopped watching Kimi on {0}: {1} (last: {2}).',
        server.name,
        outcome.message ?? l10n.t('timed out'),
        describe(outcome.state),
      );
    case 'unreachable':
      return l10n
        .t(
          'Stopped watching Kimi on {0}: {1}. {2}',
          server.name,
          outcome.message ?? l10n.t('host unreachable'),
          outcome.state.connectionError ?? '',
        )
        .trim();
    case 'stopped':
      return l10n.t('Kimi on {0} is stopped (unit {1} is not running).', server.name, server.unit);
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
  if (state.phase && state.phase !== state.verdict) details.push(phaseWord(state.phase));
  if (state.phase === 'loading weights' && state.shards)
    details.push(l10n.t('{0}/{1} shards', state.shards.done, state.shards.total));
  if (state.phase === 'capturing CUDA graphs' && state.cudaGraphBatches) {
    details.push(l10n.t('{0}/{1} batches', state.cudaGraphBatches.done, state.cudaGraphBatches.total));
  }
  // The step under way inside the phase, in the extension's words (a JIT compile is not "capturing CUDA graphs").
  if (state.activity && state.readyAt === undefined && state.failure === undefined)
    details.push(activityText(state.activity));
  return `${verdictWord(state.verdict)}${percent}${details.length ? ` (${details.join(l10n.t(', '))})` : ''}`;
}
