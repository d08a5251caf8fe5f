/** What an agent's tools say when a restart or a check failed for another reason than the connection. */
import * as l10n from '@vscode/l10n';

export function notRestarted(unit: string, server: string, why: string): string {
  return l10n.t('{0} on {1} was not restarted: {2}', unit, server, why);
}

export function notVerified(server: string, why: string): string {
  return l10n.t('{0}: not verified ({1}). Is it ready? kimi_status says; kimi_wait waits for it.', server, why);
}
