/**
 * What the user is told when the GPU host refuses the connection (or cannot be reached): one
 * wording for the notification and the status bar. Pure.
 */
import type { HostKeyChange, TransportErrorKind } from '../transport/transport';

export interface Refusal {
  readonly kind: TransportErrorKind;
  readonly message: string;
  readonly hostKeyChange?: HostKeyChange;
}

/** The status bar's word for a refusal. */
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
      text:
        `Kimi on ${serverName}: the host key of ${change.host} has CHANGED. It offered ${change.offered}; ` +
        `${change.file} line ${lines} records ${known}. Nothing was run. If the host was reinstalled, remove the old ` +
        `entry (ssh-keygen -R '${change.host}' -f '${change.file}') and connect again; otherwise someone may be intercepting the connection.`,
      openKnownHosts: { file: change.file, ...(change.lines[0] !== undefined ? { line: change.lines[0] } : {}) },
    };
  }
  const what: Partial<Record<TransportErrorKind, string>> = {
    'host-key-unknown': 'the host key was not trusted',
    'host-key-rejected': 'the host key was refused',
    auth: 'the SSH login was refused',
    dns: 'the host name does not resolve',
    refused: 'the SSH port refused the connection',
    timeout: 'the host did not answer in time',
    'sudo-password': 'sudo asks for a password',
    config: 'the SSH settings are not usable',
  };
  const why = what[refusal.kind] ?? 'cannot connect';
  return { text: `Kimi on ${serverName}: ${why}. ${refusal.message}` };
}
