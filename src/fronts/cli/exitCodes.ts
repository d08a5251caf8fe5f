/**
 * The exit codes of `kimi-service`, the same for every subcommand. Pure.
 *
 *   0  done: status reported, restart issued (or a load under way watched), logs printed, verify passed, wait: ready
 *   1  failed: wait saw the load fail (or the unit stopped), restart was refused by the host, verify failed
 *      (or was asked of a server that is failed, stopped or unhealthy: nothing was checked)
 *   2  wait timed out, or verify was asked of a server still loading (the load goes on: call wait)
 *   3  host unreachable (DNS, refused, no answer, connection lost)
 *   4  host key refused (changed, unknown under a strict policy, revoked)
 *   5  bad configuration or usage: invalid settings, unknown server, login refused (nothing was run), also when the
 *      host asks for a one-time code or password and there is no terminal to ask it on
 *   6  wait saw the load become stalled: the process lives but no witness moved for kimiService.stallSeconds
 *      (the load goes on; read `logs`, then wait again or restart)
 *   130 / 143  interrupted by SIGINT / SIGTERM (nothing on the host is touched)
 */
import type { TransportErrorKind } from '../../transport/transport';
import type { WaitResult } from '../../fleet/fleetTypes';
import type { Refusal } from '../../present/refusalWords';

export const EXIT = {
  ok: 0,
  failed: 1,
  timeout: 2,
  unreachable: 3,
  hostKey: 4,
  config: 5,
  stalled: 6,
  sigint: 130,
  sigterm: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of a connection that was refused or could not be made. */
export function exitForRefusal(kind: TransportErrorKind | string): ExitCode {
  switch (kind) {
    case 'host-key-changed':
    case 'host-key-rejected':
    case 'host-key-unknown':
      return EXIT.hostKey;
    case 'config':
    case 'auth':
    case 'sudo-password':
      return EXIT.config;
    default:
      return EXIT.unreachable;
  }
}

/** The exit code of a bounded wait. */
export function exitForWait(
  result: {
    readonly kind: WaitResult['kind'];
    readonly snapshot: {
      readonly refusal: Pick<Refusal, 'kind'> | undefined;
      readonly state: { readonly verdict: string } | undefined;
    };
  },
  signal?: 'SIGINT' | 'SIGTERM',
): ExitCode {
  switch (result.kind) {
    case 'ready':
      return EXIT.ok;
    case 'failed':
    case 'stopped':
      return EXIT.failed;
    case 'timeout':
      return EXIT.timeout;
    case 'stalled':
      return EXIT.stalled;
    case 'cancelled':
      return signal === 'SIGTERM' ? EXIT.sigterm : EXIT.sigint;
    case 'not watched':
      // The watch ended without a verdict: the host went away (or refused us), or the load outlived kimiService.loadTimeoutMinutes.
      if (result.snapshot.refusal) return exitForRefusal(result.snapshot.refusal.kind);
      return result.snapshot.state?.verdict === 'unreachable' ? EXIT.unreachable : EXIT.timeout;
  }
}

export function exitForSignal(signal: 'SIGINT' | 'SIGTERM'): ExitCode {
  return signal === 'SIGTERM' ? EXIT.sigterm : EXIT.sigint;
}
