/** A command's end that was not its own exit, and a host's limits, in words. */

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
export const NO_CURL_MESSAGE = 'the host forbids TCP forwarding (AllowTcpForwarding no) and has no curl';
