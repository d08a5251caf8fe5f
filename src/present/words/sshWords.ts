/**
 * The SSH connection's failures in words (the ssh2 client, and what both clients share): what went
 * wrong, where, and what the user can do about it. Pure functions of the facts the transport gathers.
 */

/** The endpoint as the messages name it: "host:port", with the jump hosts it goes through. */
export function sshWhere(host: string, port: number, via?: string): string {
  return `${host}:${port}${via ? ` (${via})` : ''}`;
}

export function dnsFailed(host: string, temporary: boolean): string {
  return `Cannot resolve host name ${host}${temporary ? ' (DNS temporarily unavailable)' : ''}`;
}

export function connectionRefused(where: string): string {
  return `Connection refused by ${where} — is sshd running?`;
}

export function connectTimedOut(where: string, keepalive: boolean): string {
  const what = keepalive ? 'The SSH connection stopped answering (keepalive timeout)' : 'Timed out';
  return `${what} connecting to ${where}`;
}

export function handshakeTimedOut(seconds: number, where: string, fromSshConfig: boolean): string {
  return (
    `Timed out after ${seconds} s connecting to ${where}` + (fromSshConfig ? ' (ConnectTimeout in ~/.ssh/config)' : '')
  );
}

export function hostUnreachable(where: string, code: string): string {
  return `Host ${where} is unreachable (${code})`;
}

export function authFailed(userAtWhere: string, tried: readonly string[]): string {
  const list = tried.length > 0 ? tried.join(', ') : 'no key and no ssh-agent';
  return (
    `Authentication failed for ${userAtWhere}; tried: ${list}. ` +
    'Check the user name and that the public key is in ~/.ssh/authorized_keys on the host, or set "identityFile".'
  );
}

export function tooManyKeys(userAtWhere: string, tried: readonly string[]): string {
  return (
    `Authentication failed for ${userAtWhere}: the server closed the ` +
    `connection after too many keys (Too many authentication failures); tried: ${tried.join(', ')}. ` +
    'With an agent that holds many keys, set "IdentitiesOnly yes" and this host\'s IdentityFile in ~/.ssh/config.'
  );
}

export function closedWhileAsking(userAtWhere: string): string {
  return (
    `Login refused: ${userAtWhere} closed the connection while its question was open ` +
    "(sshd's LoginGraceTime, 2 minutes by default); connect again and answer sooner."
  );
}

export function passwordExpired(userAtWhere: string): string {
  return `Login refused: ${userAtWhere} requires a new password; change it with ssh on a terminal first.`;
}

export function tooManyQuestions(asker: string, max: number): string {
  return `Login refused: ${asker} asked more than ${max} questions in one login; stopped.`;
}

export function closedDuringHandshake(where: string): string {
  return `Connection to ${where} closed during the handshake`;
}

export const PROXY_COMMAND_EXITED = 'ProxyCommand exited';
export const PROXY_COMMAND_GONE = 'ProxyCommand is not running';
export const NO_AGENT = 'No ssh-agent answered';

export function connectionClosed(where: string, reason: string): string {
  return `Connection to ${where} was closed: ${reason}`;
}

export function connectionFailed(where: string, reason: string): string {
  return `SSH connection to ${where} failed: ${reason}`;
}

export function forwardFailed(host: string, port: number, reason: string): string {
  return `connect to ${host}:${port} from the SSH host failed: ${reason}`;
}

/** The connection is down: with its reason, and when it is retried when it is. */
export function connectionDown(description: string, reason?: string, retryInMs?: number): string {
  const detail =
    reason !== undefined
      ? `: ${reason}${retryInMs !== undefined ? ` (retrying in ${Math.ceil(retryInMs / 1000)} s)` : ''}`
      : '';
  return `SSH connection to ${description} is down${detail}`;
}

export function masterGone(description: string): string {
  return `SSH connection to ${description} is down (its OpenSSH master is gone)`;
}

export function connectionReconnecting(description: string): string {
  return `SSH connection to ${description} is down (reconnecting)`;
}

export function connectionDisposed(description: string): string {
  return `Connection to ${description} was disposed`;
}

export function lostWhileRunning(description: string): string {
  return `Connection to ${description} was lost while a command ran`;
}

export function cannotRun(description: string, reason: string): string {
  return `Cannot run a command on ${description}: ${reason}`;
}

export function linkDown(description: string, reason: string): string {
  return `Connection to ${description} is down: ${reason}`;
}

// ------------------------------------------------------------------ host keys

export function hostKeyUnparsable(name: string): string {
  return `The host key offered by ${name} could not be parsed`;
}

export function hostKeyRevoked(name: string, key: string, file: string, line: number): string {
  return `The host key of ${name} (${key}) is marked @revoked in ${file} line ${line}; refusing to connect.`;
}

/** A host key that differs from the one recorded: `recordedAt` is "FILE line N[, M]". */
export function hostKeyChanged(
  name: string,
  offered: string,
  recordedAt: string,
  known: readonly string[],
  file: string,
): string {
  return (
    `HOST KEY CHANGED for ${name}: the server offered ${offered}, but ${recordedAt} records ${known.join(', ')}. ` +
    'Someone could be intercepting the connection, or the host was reinstalled. If the change is expected, ' +
    `remove the old entry (ssh-keygen -R '${name}' -f '${file}') and connect again.`
  );
}

export function hostCertificateUncheckable(where: string, name: string, offered: string, file: string): string {
  return (
    `${where} trusts a certificate authority (@cert-authority) for ${name}, but host certificates cannot be ` +
    `checked here (ssh2 only receives the plain host key), and the key the server offered (${offered}) ` +
    `is not in the known-hosts file as a plain key; refusing to connect. If that fingerprint is right (on the host: ` +
    `ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), add the host's plain public key to ${file} as "${name} <key type> <base64>".`
  );
}

export function hostKeyNotTrusted(name: string, key: string, file: string): string {
  return `The host key of ${name} (${key}) is not in ${file} and was not trusted (kimiService.hostKeyPolicy).`;
}

// ------------------------------------------------------------------ ~/.ssh/config

export function sshConfigUnreadable(configPath: string, reason: string): string {
  return `${configPath}: ${reason}`;
}

export function jumpChainTooLong(max: number): string {
  return `ProxyJump chain too long (more than ${max} hops)`;
}

export function jumpLoop(host: string): string {
  return `ProxyJump loop through ${host}`;
}

export function invalidJumpHop(spec: string): string {
  return `Invalid ProxyJump hop: ${JSON.stringify(spec)}`;
}

export function invalidJumpHopPort(spec: string): string {
  return `Invalid port in ProxyJump hop: ${JSON.stringify(spec)}`;
}

/** A directive of the host's block with a value OpenSSH would refuse too (ConnectTimeout, Port, ...). */
export function invalidDirective(name: string, value: string | undefined, alias: string): string {
  return `Invalid ${name} ${JSON.stringify(value)} for ${alias} in ~/.ssh/config`;
}

export function tildeUserOnWindows(user: string, path: string): string {
  return `~${user} paths are not supported on Windows (only ~): ${JSON.stringify(path)}`;
}

export function noSuchUser(user: string, path: string): string {
  return `No such user "${user}" in ${JSON.stringify(path)}`;
}

export function unsetVariable(directive: string, name: string): string {
  return `${directive}: environment variable \${${name}} is not set`;
}

export function unsupportedToken(directive: string, token: string, value: string): string {
  return `${directive}: token %${token} is not supported in ${JSON.stringify(value)}`;
}

export function includeTooDeep(max: number, from: string, line: string): string {
  return `Include nested more than ${max} levels deep (a loop?) at ${from}: ${line}`;
}
