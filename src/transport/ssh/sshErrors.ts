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

export interface ErrorContext {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** What authentication offered, e.g. "/root/.ssh/id_ed25519 (rejected)". */
  readonly authTried: readonly string[];
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
  const where = `${ctx.host}:${ctx.port}${ctx.via ? ` (${ctx.via})` : ''}`;

  if ((code && DNS_CODES.has(code)) || level === 'client-dns') {
    return new DnsError(
      `Cannot resolve host name ${ctx.host}${code === 'EAI_AGAIN' ? ' (DNS temporarily unavailable)' : ''}`,
    );
  }
  if (code === 'ECONNREFUSED') {
    return new ConnectionRefusedError(`Connection refused by ${where} — is sshd running?`);
  }
  if (code === 'ETIMEDOUT' || level === 'client-timeout') {
    const what = /keepalive/i.test(message) ? 'The SSH connection stopped answering (keepalive timeout)' : 'Timed out';
    return new ConnectTimeoutError(`${what} connecting to ${where}`);
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN') {
    return new ConnectTimeoutError(`Host ${where} is unreachable (${code})`);
  }
  if (level === 'client-authentication') {
    const tried = ctx.authTried.length > 0 ? ctx.authTried.join(', ') : 'no key and no ssh-agent';
    return new AuthError(
      `Authentication failed for ${ctx.username}@${where}; tried: ${tried}. ` +
        'Check the user name and that the public key is in ~/.ssh/authorized_keys on the host, or set "identityFile".',
    );
  }
  if (code === 'ECONNRESET' || code === 'EPIPE' || /connection lost|closed/i.test(message)) {
    return new ConnectionClosedError(`Connection to ${where} was closed: ${message}`);
  }
  return new TransportError('other', `SSH connection to ${where} failed: ${message}`);
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
  return new ChannelOpenError(`connect to ${host}:${port} from the SSH host failed: ${message}`, channelCode(message));
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
