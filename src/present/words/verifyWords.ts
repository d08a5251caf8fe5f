/** A request to a server that got no answer, in words. */
import * as l10n from '@vscode/l10n';

export function noAnswerWithin(seconds: number): string {
  return l10n.t('no answer within {0} s', seconds);
}

export function connectionRefused(): string {
  return l10n.t('connection refused');
}
