/**
 * The transport's errors as classes, so callers match on the class (or TransportError's `kind`)
 * instead of the message. Each TransportError subclass fixes its kind; `transportError` picks the
 * class for a kind known only at run time. Names stay those of the base classes (a message
 * printed as `String(error)` reads as before).
 */
import { TransportError, type HostKeyChange, type TransportErrorKind } from './transport';

/** The host name did not resolve. */
export class DnsError extends TransportError {
  constructor(message: string) {
    super('dns', message);
  }
}

/** Nothing listens on the SSH port (or a proxy said so). */
export class ConnectionRefusedError extends TransportError {
  constructor(message: string) {
    super('refused', message);
  }
}

/** The connection could not be made in time, or the host is unreachable, or keepalives went unanswered. */
export class ConnectTimeoutError extends TransportError {
  constructor(message: string) {
    super('timeout', message);
  }
}

/** One remote command ran too long: the connection itself may be fine. */
export class CommandTimeoutError extends TransportError {
  constructor(message: string) {
    super('command-timeout', message);
  }
}

/** The login was refused (keys, password, keyboard-interactive). */
export class AuthError extends TransportError {
  constructor(message: string) {
    super('auth', message);
  }
}

/** The host key is unknown, changed or rejected. */
export class HostKeyError extends TransportError {
  constructor(kind: Extract<TransportErrorKind, `host-key-${string}`>, message: string, hostKeyChange?: HostKeyChange) {
    super(kind, message, hostKeyChange);
  }
}

/** The connection was closed, lost or disposed. */
export class ConnectionClosedError extends TransportError {
  constructor(message: string) {
    super('closed', message);
  }
}

/** The user's settings or ~/.ssh/config cannot be used as written. */
export class ConfigError extends TransportError {
  constructor(message: string) {
    super('config', message);
  }
}

/** The TransportError subclass for `kind`. */
export function transportError(
  kind: TransportErrorKind,
  message: string,
  hostKeyChange?: HostKeyChange,
): TransportError {
  switch (kind) {
    case 'dns':
      return new DnsError(message);
    case 'refused':
      return new ConnectionRefusedError(message);
    case 'timeout':
      return new ConnectTimeoutError(message);
    case 'command-timeout':
      return new CommandTimeoutError(message);
    case 'auth':
      return new AuthError(message);
    case 'host-key-unknown':
    case 'host-key-changed':
    case 'host-key-rejected':
      return new HostKeyError(kind, message, hostKeyChange);
    case 'closed':
      return new ConnectionClosedError(message);
    case 'config':
      return new ConfigError(message);
    default:
      return new TransportError(kind, message, hostKeyChange);
  }
}

/** A line of ~/.ssh/config (or a path, token or ProxyJump in it) that cannot be used; the caller adds the file. */
export class SshConfigSyntaxError extends Error {}

/**
 * A TCP channel the SSH host would not open (forwardOut): `code` follows Node's socket errors,
 * so HTTP callers tell a closed port (ECONNREFUSED) from a broken tunnel.
 */
export class ChannelOpenError extends Error {
  constructor(
    message: string,
    readonly code: 'ECONNREFUSED' | 'ETIMEDOUT' | 'EHOSTUNREACH' | 'ENOTFOUND' | 'EACCES' | 'ECONNRESET',
  ) {
    super(message);
  }
}

/** A remote command stopped by its AbortSignal (named AbortError, as fetch's). */
export class CommandAbortedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbortError';
  }
}

/** A string that must not reach a remote shell or curl (NUL, newline, not absolute...). */
export class UnsafeArgumentError extends Error {}

/** A remote command (curl on the host) ended without the answer; `code` as Node's socket errors when it says why. */
export class RemoteExitError extends Error {
  declare readonly code?: 'ECONNREFUSED' | 'ETIMEDOUT' | 'EHOSTUNREACH';
  constructor(message: string, code?: 'ECONNREFUSED' | 'ETIMEDOUT' | 'EHOSTUNREACH') {
    super(message);
    if (code) Object.assign(this, { code });
  }
}

/** The local ProxyCommand process is gone: the stream it carried cannot be written. */
export class ProxyCommandGoneError extends Error {}

/** No ssh-agent answered a signing request. */
export class NoAgentError extends Error {}
