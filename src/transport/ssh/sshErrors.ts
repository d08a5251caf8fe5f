/** Turning ssh2 / socket errors into TransportErrors a user understands. Pure. */
import { TransportError } from '../transport';

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
    return new TransportError(
      'dns',
      `Cannot resolve host name ${ctx.host}${code === 'EAI_AGAIN' ? ' (DNS temporarily unavailable)' : ''}`,
    );
  }
  if (code === 'ECONNREFUSED') {
    return new TransportError('refused', `Connection refused by ${where} — is sshd running?`);
  }
  if (code === 'ETIMEDOUT' || level === 'client-timeout') {
    const what = /keepalive/i.test(message) ? 'The SSH connection stopped answering (keepalive timeout)' : 'Timed out';
    return new TransportError('timeout', `${what} connecting to ${where}`);
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN') {
    return new TransportError('timeout', `Host ${where} is unreachable (${code})`);
  }
  if (level === 'client-authentication') {
    const tried = ctx.authTried.length > 0 ? ctx.authTried.join(', ') : 'no key and no ssh-agent';
    return new TransportError(
      'auth',
      `Authentication failed for ${ctx.username}@${where}; tried: ${tried}. ` +
        'Check the user name and that the public key is in ~/.ssh/authorized_keys on the host, or set "identityFile".',
    );
  }
  if (code === 'ECONNRESET' || code === 'EPIPE' || /connection lost|closed/i.test(message)) {
    return new TransportError('closed', `Connection to ${where} was closed: ${message}`);
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
export function channelOpenError(err: unknown, host: string, port: number): NodeJS.ErrnoException {
  const e = (err ?? {}) as { message?: unknown; reason?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  const out: NodeJS.ErrnoException = new Error(`connect to ${host}:${port} from the SSH host failed: ${message}`);
  if (/refused/i.test(message)) out.code = 'ECONNREFUSED';
  else if (/timed? ?out/i.test(message)) out.code = 'ETIMEDOUT';
  else if (/no route|unreachable/i.test(message)) out.code = 'EHOSTUNREACH';
  else if (/name|resolve|not known/i.test(message)) out.code = 'ENOTFOUND';
  else if (/prohibited/i.test(message)) out.code = 'EACCES';
  else out.code = 'ECONNRESET';
  return out;
}
