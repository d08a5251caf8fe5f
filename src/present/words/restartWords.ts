/** Why a restart follows a load already under way instead of restarting again (the restart rule's words). */
import * as l10n from '@vscode/l10n';

/** This fleet follows a load of the server already. */
export function followedHere(): string {
  return l10n.t('this server is already loading (a restart asked moments ago is followed, not repeated)');
}

/** `unit`: the unit's name, or undefined when the host did not say it. */
export function beingStopped(unit: string | undefined): string {
  return l10n.t('{0} is being stopped or restarted right now', unit ?? l10n.t('the unit'));
}

export function beingStarted(unit: string | undefined): string {
  return l10n.t('{0} is being started right now (no main process yet)', unit ?? l10n.t('the unit'));
}

export function stillLoading(unit: string | undefined, seconds: number): string {
  return l10n.t(
    '{0} was started {1} s ago and is still loading: following that load instead of restarting it',
    unit ?? l10n.t('the unit'),
    seconds,
  );
}

/** The user chose to follow, and the load had ended meanwhile: its state is watched. */
export function followingAsAsked(): string {
  return l10n.t('following the load as asked');
}
