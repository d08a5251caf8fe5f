/**
 * What an agent's tools say to the user: the restart confirmation (VS Code's Continue/Cancel, MCP
 * elicitation), and when a restart or a check failed for another reason than the connection.
 */
import * as l10n from '@vscode/l10n';

export function notRestarted(unit: string, server: string, why: string): string {
  return l10n.t('{0} on {1} was not restarted: {2}', unit, server, why);
}

export function notVerified(server: string, why: string): string {
  return l10n.t('{0}: not verified ({1}). Is it ready? kimi_status says; kimi_wait waits for it.', server, why);
}

export function restartTitle(unit: string, server: string): string {
  return l10n.t('Restart {0} on {1}?', unit, server);
}

export function restartStops(unit: string, server: string, hosts: string): string {
  return l10n.t(
    'The model server {0} on {1} ({2}) stops now and is unavailable until it has loaded again.',
    unit,
    server,
    hosts,
  );
}

export function expectedLoadTime(expected: string): string {
  return l10n.t('Expected load time: {0}.', expected);
}

export function forceCutsLoad(): string {
  return l10n.t('force: a load already under way is cut short and started again.');
}

export function loadUnderWayFollowed(): string {
  return l10n.t(
    'If a load is already under way (someone else restarted it moments ago), it is followed instead of restarted again.',
  );
}

export function noForecastWithin(seconds: number): string {
  return l10n.t('no forecast within {0} s', seconds);
}
