/**
 * The words for a server whose run waits in a scheduler's queue, and for the end its manager
 * sets (a batch job's time limit): "queued · starts ~14:05 (Resources)", "the job ends at 18:40,
 * in 2h 11m: the server stops then". Pure; the clock is the caller's.
 */
import * as l10n from '@vscode/l10n';
import type { LoadState } from '../monitor/state/loadStateTypes';
import { timeLeftBeforeEnd } from '../monitor/state/timeLimit';
import { wholeLoadForecast } from '../monitor/eta/etaLoad';
import { formatDuration, hourMinute } from '../util/duration';
import { sourceText } from './etaTooltip';

/** True while the load waits for its run in a queue: no process yet, and the manager says it is queued. */
export function isQueued(state: LoadState): boolean {
  const unit = state.unit;
  return (
    unit?.queued !== undefined &&
    unit.mainPid === 0 &&
    state.readyAt === undefined &&
    state.failure === undefined &&
    (state.verdict === 'restarting' || state.verdict === 'loading')
  );
}

/** "queued · starts ~14:05 (Resources)", "queued (Priority)", "queued"; undefined when the load is not queued. */
export function queuedWord(state: LoadState, now: number): string | undefined {
  if (!isQueued(state)) return undefined;
  const queued = state.unit?.queued;
  const start = queued?.estimatedStartAt;
  const word =
    start !== undefined && start > now ? l10n.t('queued · starts ~{0}', hourMinute(start)) : l10n.t('queued');
  return queued?.reason ? l10n.t('{0} ({1})', word, queued.reason) : word;
}

/** The tooltip's line for the queue: why it waits and the scheduler's estimate. */
export function queueLine(state: LoadState, now: number): string | undefined {
  const text = queueText(state, now);
  return text === undefined ? undefined : l10n.t('Queue: {0}', text);
}

/** "waiting for Resources; the scheduler expects to start it at 14:05 (in 1h 5m)". */
export function queueText(state: LoadState, now: number): string | undefined {
  if (!isQueued(state)) return undefined;
  const queued = state.unit?.queued;
  const reason = queued?.reason ? l10n.t('waiting for {0}', queued.reason) : l10n.t('waiting');
  const start = queued?.estimatedStartAt;
  return start !== undefined && start > now
    ? l10n.t(
        '{0}; the scheduler expects to start it at {1} (in {2})',
        reason,
        hourMinute(start),
        formatDuration(start - now),
      )
    : l10n.t('{0}; the scheduler has no estimate of its start yet', reason);
}

/**
 * The ready estimate of a queued run: the scheduler's estimated start, then the load as this
 * server's history (else the defaults) has it. `start` alone when the load cannot be foreseen;
 * `unknown` when the scheduler gives no start (the wait is not guessed); undefined when not queued.
 */
export type QueuedEta =
  | {
      readonly kind: 'estimate';
      readonly startAt: number;
      readonly loadMs: number;
      readonly readyAt: number;
      readonly lowAt: number;
      readonly highAt: number;
      /** Where the load's part comes from, in words ("from this server's 3 previous loads"). */
      readonly source: string;
    }
  | { readonly kind: 'start'; readonly startAt: number }
  | { readonly kind: 'unknown'; readonly loadMs?: number };

export function queuedEta(state: LoadState, now: number): QueuedEta | undefined {
  if (!isQueued(state)) return undefined;
  const start = state.unit?.queued?.estimatedStartAt;
  const load = wholeLoadForecast(state);
  if (start === undefined || start <= now) return { kind: 'unknown', ...(load ? { loadMs: load.midMs } : {}) };
  if (!load) return { kind: 'start', startAt: start };
  return {
    kind: 'estimate',
    startAt: start,
    loadMs: load.midMs,
    readyAt: start + load.midMs,
    lowAt: start + load.lowMs,
    highAt: start + load.highMs,
    source: sourceText(state, load.source),
  };
}

/**
 * The tooltip's ETA line for a queued run, saying that the wait counts: "ETA: ready ~15:12 (in
 * 1h 12m), counting the wait in the queue: the scheduler's start at 14:05 (in 1h 5m), then a load
 * of about 7m 0s (from ...)". Without the scheduler's estimate the wait is said to be unknown.
 */
export function queuedEtaLine(state: LoadState, now: number): string | undefined {
  const eta = queuedEta(state, now);
  if (eta === undefined) return undefined;
  if (eta.kind === 'unknown')
    return eta.loadMs !== undefined
      ? l10n.t(
          'ETA: unknown: the wait in the queue is not known (the scheduler has no estimate of the start yet); once it starts, the load takes about {0}',
          formatDuration(eta.loadMs),
        )
      : l10n.t('ETA: unknown: the wait in the queue is not known (the scheduler has no estimate of the start yet)');
  const start = l10n.t(
    "the scheduler's start at {0} (in {1})",
    hourMinute(eta.startAt),
    formatDuration(eta.startAt - now),
  );
  if (eta.kind === 'start') return l10n.t('ETA: not before {0}; how long the load then takes is not known yet', start);
  return l10n.t(
    'ETA: ready ~{0} (in {1}), counting the wait in the queue: {2}, then a load of about {3} ({4})',
    hourMinute(eta.readyAt),
    formatDuration(eta.readyAt - now),
    start,
    formatDuration(eta.loadMs),
    eta.source,
  );
}

/** "The job ends at 18:40, in 2h 11m: the server stops then"; undefined without a set end or once it passed. */
export function endLine(state: LoadState, now: number): string | undefined {
  const endsAt = state.unit?.endsAt;
  if (endsAt === undefined || endsAt <= now || state.unit?.mainPid === 0) return undefined;
  return l10n.t(
    'Time limit: the job ends at {0}, in {1}: the server stops then',
    hourMinute(endsAt),
    formatDuration(endsAt - now),
  );
}

/** "ends in 14m 59s" once the set end is within the warning time (the status bar says it beside the state). */
export function endSoonWord(state: LoadState, now: number): string | undefined {
  const left = timeLeftBeforeEnd(state, now);
  return left === undefined ? undefined : l10n.t('ends in {0}', formatDuration(left));
}
