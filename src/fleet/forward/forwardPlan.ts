/**
 * What a port forward is and says, decided without touching a socket: where it leads on the
 * GPU host, which local port to try, the base URL to hand to a client, and the wording of its
 * refusals. Pure; portForward.ts does the I/O.
 */
import type { ServerProfile } from '../../config/config';
import { gatewayError } from '../../present/words/fleetWords';
import * as words from '../../present/words/forwardWords';

/** Where forwarded connections go, as seen from the GPU host. */
export interface ForwardTarget {
  readonly host: string;
  readonly port: number;
  /** The url's path prefix ('' when none), kept in the base URL. */
  readonly path: string;
}

/** What an open forward is, for every front. */
export interface ForwardInfo {
  readonly server: string;
  /** The port on 127.0.0.1 of this machine. */
  readonly localPort: number;
  /** host:port on the GPU host that connections reach. */
  readonly remote: string;
  /** What an OpenAI client takes: `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  /** Why the port differs from the server's own one, when it does. */
  readonly portNote?: string;
}

export type ForwardErrorKind = 'local' | 'prohibited' | 'port-in-use' | 'bind' | 'bad-port' | 'node';

/** A forward that cannot be opened, with the reason a user can act on. */
export class ForwardError extends Error {
  constructor(
    readonly kind: ForwardErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ForwardError';
  }
}

/**
 * The server's url as a target. A server bound to every address (0.0.0.0, ::) is reached on
 * the host's loopback, as the configured url of such a server means "this host".
 */
export function forwardTarget(server: Pick<ServerProfile, 'url' | 'urlHost' | 'urlPort'>): ForwardTarget {
  const host = server.urlHost === '0.0.0.0' ? '127.0.0.1' : server.urlHost === '::' ? '::1' : server.urlHost;
  let path = '';
  try {
    path = new URL(server.url).pathname.replace(/\/+$/, '');
  } catch {
    // config.ts only lets valid URLs through
  }
  return { host, port: server.urlPort, path };
}

/** "host:port", IPv6 hosts bracketed. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A loopback address or name: this machine. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return (
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    h === '::1' ||
    /^::ffff:127\./.test(h)
  );
}

/**
 * The local ports to try, in order. A port asked for is that port or nothing (a script that
 * names one relies on it). Otherwise the server's own port, so the forwarded URL reads like the
 * server's, then any free port the system picks (0). Not the server's port when the SSH host is
 * this very machine: that port is the server's own, and a forward holding it while the server
 * is down would keep it from starting (and forward to itself).
 */
export function localPortCandidates(
  remotePort: number,
  requested: number | undefined,
  sshHostIsThisMachine = false,
): number[] {
  if (requested !== undefined) return [requested];
  return remotePort >= 1 && remotePort <= 65535 && !sshHostIsThisMachine ? [remotePort, 0] : [0];
}

/** Why the forward's port is not the server's, when the port was not asked for. */
export function portNote(target: ForwardTarget, localPort: number, sshHostIsThisMachine: boolean): string | undefined {
  if (localPort === target.port) return undefined;
  return sshHostIsThisMachine
    ? words.serverOwnPortHere(target.port, localPort)
    : words.portTakenHere(target.port, localPort);
}

/** A port asked for that would forward the server's own port on this machine to itself. */
export function selfForwardError(
  target: ForwardTarget,
  requested: number | undefined,
  sshHostIsThisMachine: boolean,
): ForwardError | undefined {
  if (requested === undefined || !sshHostIsThisMachine || requested !== target.port || !isLoopback(target.host))
    return undefined;
  return new ForwardError('bad-port', words.selfForward(target.port));
}

/** Why a port could not be bound, in words. */
export function bindFailure(port: number, code: string | undefined, detail: string): ForwardError {
  if (code === 'EADDRINUSE') return new ForwardError('port-in-use', words.portInUse(port));
  if (code === 'EACCES') return new ForwardError('bind', words.portNeedsPrivileges(port));
  return new ForwardError('bind', words.cannotListen(port, detail));
}

export function baseUrl(localPort: number, path: string): string {
  return `http://127.0.0.1:${localPort}${path}/v1`;
}

export function forwardInfo(serverName: string, target: ForwardTarget, localPort: number, note?: string): ForwardInfo {
  return {
    server: serverName,
    localPort,
    remote: hostPort(target.host, target.port),
    baseUrl: baseUrl(localPort, target.path),
    ...(note !== undefined ? { portNote: note } : {}),
  };
}

/** For `host: "local"`: the server is on this machine already. */
export function localServerError(server: Pick<ServerProfile, 'name' | 'url'>): ForwardError {
  return new ForwardError('local', words.nothingToForward(server.name, server.url));
}

/** When sshd refuses direct-tcpip channels. */
export function prohibitedError(server: Pick<ServerProfile, 'name' | 'host'>): ForwardError {
  return new ForwardError('prohibited', words.forwardingProhibited(server.name, server.host));
}

/** One line for the log and the CLI once a forward is open. */
export function openedLine(info: ForwardInfo): string {
  return words.forwardOpened(info.localPort, info.remote, info.server, info.baseUrl, info.portNote);
}

/**
 * What a local client receives when its connection cannot be carried to the server (SSH down,
 * forwarding refused): an HTTP answer an OpenAI client shows as its error, then the end of the
 * connection. The server speaks plain HTTP (config.ts allows only http://), so the client does too.
 */
export function gatewayErrorResponse(message: string): string {
  const body = JSON.stringify({
    error: { message: gatewayError(message), type: 'forward_error', code: 502 },
  });
  return (
    'HTTP/1.1 502 Bad Gateway\r\n' +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n' +
    '\r\n' +
    body
  );
}
