/**
 * A rolling restart in words, in the display language: each step's progress, why it stopped at a
 * server, and the notification's summary.
 */
import * as l10n from '@vscode/l10n';

export function restartingStep(server: string): string {
  return l10n.t('restarting {0}', server);
}

export function waitingStep(server: string): string {
  return l10n.t('waiting for {0} to be ready', server);
}

export function verifyingStep(server: string): string {
  return l10n.t('verifying the parsers of {0}', server);
}

/** `summary`: the parser checks' summary ("3/3 checks passed"). */
export function readyStep(server: string, summary: string): string {
  return l10n.t('{0} ready, {1}', server, summary);
}

/** Why a roll stopped at a server. `lastError`: the load's last error, when it said one. */
export function itFailed(lastError: string | null | undefined): string {
  return lastError ? l10n.t('it failed: {0}', lastError) : l10n.t('it failed');
}

export function itIsStopped(): string {
  return l10n.t('it is stopped (the unit is not running after the restart)');
}

export function notReadyInTime(state: string): string {
  return l10n.t('it was not ready in time (still {0})', state);
}

export function cannotBeWatched(why: string): string {
  return l10n.t('it cannot be watched: {0}', why);
}

/** `how`: the load's end by its kind's name. */
export function loadEnded(how: string): string {
  return l10n.t('its load ended {0}', how);
}

export function cancelledByUser(): string {
  return l10n.t('cancelled by the user');
}

export function cancelledLoadGoesOn(): string {
  return l10n.t('cancelled by the user (its load goes on)');
}

export function parsersNotVerified(summary: string): string {
  return l10n.t('its parsers were not verified: {0}', summary);
}

/** The notification once every server was restarted, ready and verified. */
export function rollDone(restarted: readonly string[]): string {
  return restarted.length > 0
    ? l10n.t('Rolling restart done: {0} restarted, ready and verified.', restarted.join(', '))
    : l10n.t('Rolling restart done: nothing restarted.');
}

/** The notification when the roll stopped at `server`: why, what was done before, what was not touched. */
export function rollStopped(
  cancelled: boolean,
  server: string,
  reason: string,
  restarted: readonly string[],
  skipped: readonly string[],
): string {
  const head = cancelled
    ? l10n.t('Rolling restart cancelled at {0}: {1}.', server, reason)
    : l10n.t('Rolling restart stopped at {0}: {1}.', server, reason);
  const list = restarted.join(', ');
  const done =
    restarted.length > 0
      ? l10n.t('{0} restarted, ready and verified.', `${list[0]!.toUpperCase()}${list.slice(1)}`)
      : l10n.t('Nothing restarted.');
  const notTouched = skipped.length > 0 ? ` ${l10n.t('Not restarted: {0}.', skipped.join(', '))}` : '';
  return `${head} ${done}${notTouched}`;
}
