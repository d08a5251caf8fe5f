/** A command's end that was not its own exit, and a host's limits, in words. */
import * as l10n from '@vscode/l10n';

function tenths(ms: number): number {
  return Math.round(ms / 100) / 10;
}

export const REMOTE_COMMAND_ABORTED = 'Remote command aborted';
export const COMMAND_ABORTED = 'Command aborted';

export function remoteCommandTimedOut(ms: number): string {
  return `Remote command timed out after ${tenths(ms)} s`;
}

/** A command that could not start: every channel the connection allows stayed busy. */
export function noFreeChannel(ms: number, max: number): string {
  return `Remote command timed out after ${tenths(ms)} s waiting for a free SSH channel (all ${max} were held by other commands or streams)`;
}

export function commandTimedOut(ms: number): string {
  return `Command timed out after ${tenths(ms)} s`;
}

export function cannotRunShell(reason: string): string {
  return `Cannot run /bin/sh: ${reason}`;
}

export const LOCAL_TRANSPORT_DISPOSED = 'The local transport was disposed';

/** Neither a tunnel nor curl can reach the server's port on the host. */
/** The host forbids TCP forwarding: the HTTP requests go through curl on the host instead. */
export function forwardingProhibitedHere(): string {
  return l10n.t('the host forbids TCP forwarding (AllowTcpForwarding no: "administratively prohibited")');
}

/** The host forbids TCP forwarding and has no curl either: no HTTP reaches the server. */
export function noCurl(): string {
  return l10n.t('the host forbids TCP forwarding (AllowTcpForwarding no) and has no curl');
}

/** How curl on the host failed; `said` is its stderr, `exit` its exit status (or signal). */
export type CurlFailure =
  /** curl ran and said why (or not: then only its exit status is known). */
  | { readonly kind: 'curl'; readonly said: string; readonly exit: string | number }
  /** curl's exit status is known and tells nothing more. */
  | { readonly kind: 'exit'; readonly said: string; readonly exit: string | number }
  /** The shell around curl failed before curl could tell its status. */
  | { readonly kind: 'command'; readonly said: string; readonly exit: string | number };

export function curlFailed(failure: CurlFailure): string {
  const detail = failure.said || l10n.t('exit status {0}', failure.exit);
  switch (failure.kind) {
    case 'curl':
      return l10n.t('curl on the host: {0}', detail);
    case 'exit':
      return l10n.t('curl on the host failed (exit status {0}): {1}', failure.exit, detail);
    case 'command':
      return l10n.t(
        'the curl command on the host failed (exit status {0}): {1}',
        failure.exit,
        failure.said || l10n.t('no output'),
      );
  }
}

/** A ProxyCommand that ended before the SSH connection was made; `said`: its last stderr lines. */
export function proxyCommandEnded(
  command: string,
  exit: { code: number | null; signal: string | null },
  said: string,
): string {
  const how = exit.signal
    ? l10n.t('was killed by {0}', exit.signal)
    : l10n.t('exited with code {0}', String(exit.code));
  return said
    ? l10n.t('ProxyCommand "{0}" {1} before the SSH connection was made: {2}', command, how, said)
    : l10n.t('ProxyCommand "{0}" {1} before the SSH connection was made', command, how);
}
