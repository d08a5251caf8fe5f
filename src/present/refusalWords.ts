/**
 * What the user is told when the GPU host refuses the connection (or cannot be reached): one
 * wording for the notification and the status bar. Pure.
 */
import * as l10n from '@vscode/l10n';
import type { HostKeyChange, TransportErrorKind } from '../transport/transport';

export interface Refusal {
  readonly kind: TransportErrorKind;
  readonly message: string;
  readonly hostKeyChange?: HostKeyChange;
}

/** The state word of a refusal as a value (JSON's `state`, compared in code); English. */
export function refusalWord(refusal: Refusal): string {
  switch (refusal.kind) {
    case 'host-key-changed':
      return 'host key changed';
    case 'host-key-rejected':
    case 'host-key-unknown':
      return 'host key refused';
    case 'auth':
      return 'login refused';
    case 'sudo-password':
      return 'sudo refused';
    case 'config':
      return 'settings';
    default:
      return 'unreachable';
  }
}

/** A refusal's state word as the user reads it, in the display language. */
export function refusalShownWord(refusal: Refusal): string {
  switch (refusal.kind) {
    case 'host-key-changed':
      return l10n.t('host key changed');
    case 'host-key-rejected':
    case 'host-key-unknown':
      return l10n.t('host key refused');
    case 'auth':
      return l10n.t('login refused');
    case 'sudo-password':
      return l10n.t('sudo refused');
    case 'config':
      return l10n.t('settings');
    default:
      return l10n.t('unreachable');
  }
}

/** The notification's text, and the known-hosts line to open when that helps. */
export function refusalMessage(
  serverName: string,
  refusal: Refusal,
): { text: string; openKnownHosts?: { file: string; line?: number } } {
  const change = refusal.hostKeyChange;
  if (refusal.kind === 'host-key-changed' && change) {
    const known = change.known.join(', ');
    const lines = change.lines.join(', ');
    return {
      text: l10n.t(
        "Kimi on {0}: the host key of {1} has CHANGED. It offered {2}; {3} line {4} records {5}. Nothing was run. If the host was reinstalled, remove the old entry (ssh-keygen -R '{1}' -f '{3}') and connect again; otherwise someone may be intercepting the connection.",
        serverName,
        change.host,
        change.offered,
        change.file,
        lines,
        known,
      ),
      openKnownHosts: { file: change.file, ...(change.lines[0] !== undefined ? { line: change.lines[0] } : {}) },
    };
  }
  const what: Partial<Record<TransportErrorKind, string>> = {
    'host-key-unknown': l10n.t('the host key was not trusted'),
    'host-key-rejected': l10n.t('the host key was refused'),
    auth: l10n.t('the SSH login was refused'),
    dns: l10n.t('the host name does not resolve'),
    refused: l10n.t('the SSH port refused the connection'),
    timeout: l10n.t('the host did not answer in time'),
    'sudo-password': l10n.t('sudo asks for a password'),
    config: l10n.t('the SSH settings are not usable'),
  };
  const why = what[refusal.kind] ?? l10n.t('cannot connect');
  return { text: l10n.t('Kimi on {0}: {1}. {2}', serverName, why, refusal.message) };
}
