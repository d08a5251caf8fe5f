/** Turning ssh2 / socket errors into TransportErrors a user understands. Pure. */
import { TransportError } from '../transport';
import {
  AuthError,
  ChannelOpenError,
  ConnectionClosedError,
  ConnectionRefusedError,
  ConnectTimeoutError,
  DnsError,
} from '../errors';
import {
  authFailed,
  authFailedSsh2Set,
  connectionClosed,
  connectionFailed,
  connectionRefused,
  connectTimedOut,
  dnsFailed,
  forwardFailed,
  hostUnreachable,
  sshWhere,
} from '../../present/words/sshWords';

export interface ErrorContext {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** What authentication offered, e.g. "/root/.ssh/id_ed25519 (rejected)". */
  readonly authTried: readonly string[];
  /** What the host's config asks that ssh2 cannot do, ssh2 being set by hand (ClientChoice.ssh2Gaps). */
  readonly ssh2Gaps?: readonly string[];
  /** Set when the connection goes through jump hosts: "via bastion:22". */
  readonly via?: string;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_NODATA', 'EAI_FAIL']);

export function classifySshError(err: unknown, ctx: ErrorContext): TransportError {
  if (err instanceof TransportError) return err;
  const e = (err ?? {}) as { code?: unknown; level?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const level = typeof e.level === 'string' ? e.level : undefined;
  const message = typeof e.message === 'string' ? e.message : String(err);
  const where = sshWhere(ctx.host, ctx.port, ctx.via);

  if ((code && DNS_CODES.has(code)) || level === 'client-dns') {
    return new DnsError(dnsFailed(ctx.host, code === 'EAI_AGAIN'));
  }
  if (code === 'ECONNREFUSED') {
    return new ConnectionRefusedError(connectionRefused(where));
  }
  if (code === 'ETIMEDOUT' || level === 'client-timeout') {
    return new ConnectTimeoutError(connectTimedOut(where, /keepalive/i.test(message)));
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN') {
    return new ConnectTimeoutError(hostUnreachable(where, code));
  }
  if (level === 'client-authentication') {
    return new AuthError(
      ctx.ssh2Gaps && ctx.ssh2Gaps.length > 0
        ? authFailedSsh2Set(`${ctx.username}@${where}`, ctx.authTried, ctx.ssh2Gaps)
        : authFailed(`${ctx.username}@${where}`, ctx.authTried),
    );
  }
  if (code === 'ECONNRESET' || code === 'EPIPE' || /connection lost|closed/i.test(message)) {
    return new ConnectionClosedError(connectionClosed(where, message));
  }
  return new TransportError('other', connectionFailed(where, message));
}

/** Auth and host-key failures need the user; retrying them on a timer would only repeat them. */
export function isFatal(err: TransportError): boolean {
  return err.kind === 'auth' || err.kind.startsWith('host-key') || err.kind === 'config';
}

/** 1, 2, 4, ... capped: the delay before reconnect attempt `n` (0-based). */
export function backoffDelay(n: number, initialMs = 1000, maxMs = 30_000): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(n, 30));
}

/**
 * ssh2's forwardOut failure ("(SSH) Channel open failure: Connection refused") as an Error whose
 * `code` follows Node's socket errors, so HTTP callers tell a closed port from a broken tunnel.
 */
export function channelOpenError(err: unknown, host: string, port: number): ChannelOpenError {
  const e = (err ?? {}) as { message?: unknown; reason?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  return new ChannelOpenError(forwardFailed(host, port, message), channelCode(message));
}

/** ssh2 gives the server's reason as text only. */
function channelCode(message: string): ChannelOpenError['code'] {
  if (/refused/i.test(message)) return 'ECONNREFUSED';
  if (/timed? ?out/i.test(message)) return 'ETIMEDOUT';
  if (/no route|unreachable/i.test(message)) return 'EHOSTUNREACH';
  if (/name|resolve|not known/i.test(message)) return 'ENOTFOUND';
  if (/prohibited/i.test(message)) return 'EACCES';
  return 'ECONNRESET';
}
