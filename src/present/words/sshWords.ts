/**
 * The SSH connection's failures in words (the ssh2 client, and what both clients share): what went
 * wrong, where, and what the user can do about it. Pure functions of the facts the transport gathers.
 * What a user reads as the cause of a refusal or of a lost connection (a notification, the status
 * bar's tooltip, the servers view) is in the display language; the errors of a command that could
 * not run and of ~/.ssh/config's parsing stay English (they end in the log and in bug reports).
 */
import * as l10n from '@vscode/l10n';

/** The endpoint as the messages name it: "host:port", with the jump hosts it goes through. */
export function sshWhere(host: string, port: number, via?: string): string {
  return `${host}:${port}${via ? ` (${via})` : ''}`;
}

export function dnsFailed(host: string, temporary: boolean): string {
  return temporary
    ? l10n.t('Cannot resolve host name {0} (DNS temporarily unavailable)', host)
    : l10n.t('Cannot resolve host name {0}', host);
}

export function connectionRefused(where: string): string {
  return l10n.t('Connection refused by {0} — is sshd running?', where);
}

export function connectTimedOut(where: string, keepalive: boolean): string {
  return keepalive
    ? l10n.t('The SSH connection stopped answering (keepalive timeout) connecting to {0}', where)
    : l10n.t('Timed out connecting to {0}', where);
}

export function handshakeTimedOut(seconds: number, where: string, fromSshConfig: boolean): string {
  return fromSshConfig
    ? l10n.t('Timed out after {0} s connecting to {1} (ConnectTimeout in ~/.ssh/config)', seconds, where)
    : l10n.t('Timed out after {0} s connecting to {1}', seconds, where);
}

export function hostUnreachable(where: string, code: string): string {
  return l10n.t('Host {0} is unreachable ({1})', where, code);
}

export function authFailed(userAtWhere: string, tried: readonly string[]): string {
  const list = tried.length > 0 ? tried.join(', ') : l10n.t('no key and no ssh-agent');
  return l10n.t(
    'Authentication failed for {0}; tried: {1}. Check the user name and that the public key is in ~/.ssh/authorized_keys on the host, or set "identityFile".',
    userAtWhere,
    list,
  );
}

/** ssh2 set by hand for a host whose config asks for what it cannot do (`gaps`): that is the likely cause, not authorized_keys. */
export function authFailedSsh2Set(userAtWhere: string, tried: readonly string[], gaps: readonly string[]): string {
  const list = tried.length > 0 ? tried.join(', ') : l10n.t('no key and no ssh-agent');
  return l10n.t(
    'Authentication failed for {0}; tried: {1}. The SSH client is set to ssh2, but this host\'s SSH configuration asks for what ssh2 cannot do: {2}. Set the SSH client to "auto" or "openssh" (kimiService.ssh.client, or the server\'s ssh.client).',
    userAtWhere,
    list,
    gaps.join('; '),
  );
}

export function tooManyKeys(userAtWhere: string, tried: readonly string[]): string {
  return l10n.t(
    'Authentication failed for {0}: the server closed the connection after too many keys (Too many authentication failures); tried: {1}. With an agent that holds many keys, set "IdentitiesOnly yes" and this host\'s IdentityFile in ~/.ssh/config.',
    userAtWhere,
    tried.join(', '),
  );
}

export function closedWhileAsking(userAtWhere: string): string {
  return l10n.t(
    "Login refused: {0} closed the connection while its question was open (sshd's LoginGraceTime, 2 minutes by default); connect again and answer sooner.",
    userAtWhere,
  );
}

export function passwordExpired(userAtWhere: string): string {
  return l10n.t('Login refused: {0} requires a new password; change it with ssh on a terminal first.', userAtWhere);
}

export function tooManyQuestions(asker: string, max: number): string {
  return l10n.t('Login refused: {0} asked more than {1} questions in one login; stopped.', asker, max);
}

export function closedDuringHandshake(where: string): string {
  return l10n.t('Connection to {0} closed during the handshake', where);
}

export const PROXY_COMMAND_EXITED = 'ProxyCommand exited';
export const PROXY_COMMAND_GONE = 'ProxyCommand is not running';
export const NO_AGENT = 'No ssh-agent answered';

export function connectionClosed(where: string, reason: string): string {
  return l10n.t('Connection to {0} was closed: {1}', where, reason);
}

export function connectionFailed(where: string, reason: string): string {
  return l10n.t('SSH connection to {0} failed: {1}', where, reason);
}

export function forwardFailed(host: string, port: number, reason: string): string {
  return `connect to ${host}:${port} from the SSH host failed: ${reason}`;
}

/** The connection is down: with its reason, and when it is retried when it is. */
export function connectionDown(description: string, reason?: string, retryInMs?: number): string {
  if (reason === undefined) return l10n.t('SSH connection to {0} is down', description);
  return retryInMs === undefined
    ? l10n.t('SSH connection to {0} is down: {1}', description, reason)
    : l10n.t(
        'SSH connection to {0} is down: {1} (retrying in {2} s)',
        description,
        reason,
        Math.ceil(retryInMs / 1000),
      );
}

export function masterGone(description: string): string {
  return l10n.t('SSH connection to {0} is down (its OpenSSH master is gone)', description);
}

export function connectionReconnecting(description: string): string {
  return l10n.t('SSH connection to {0} is down (reconnecting)', description);
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
  return l10n.t('The host key offered by {0} could not be parsed', name);
}

export function hostKeyRevoked(name: string, key: string, file: string, line: number): string {
  return l10n.t(
    'The host key of {0} ({1}) is marked @revoked in {2} line {3}; refusing to connect.',
    name,
    key,
    file,
    line,
  );
}

/** A host key that differs from the one recorded: `recordedAt` is "FILE line N[, M]". */
export function hostKeyChanged(
  name: string,
  offered: string,
  recordedAt: string,
  known: readonly string[],
  file: string,
): string {
  return l10n.t(
    "HOST KEY CHANGED for {0}: the server offered {1}, but {2} records {3}. Someone could be intercepting the connection, or the host was reinstalled. If the change is expected, remove the old entry (ssh-keygen -R '{0}' -f '{4}') and connect again.",
    name,
    offered,
    recordedAt,
    known.join(', '),
    file,
  );
}

export function hostCertificateUncheckable(where: string, name: string, offered: string, file: string): string {
  return l10n.t(
    '{0} trusts a certificate authority (@cert-authority) for {1}, but host certificates cannot be checked here (ssh2 only receives the plain host key), and the key the server offered ({2}) is not in the known-hosts file as a plain key; refusing to connect. If that fingerprint is right (on the host: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), add the host\'s plain public key to {3} as "{1} <key type> <base64>".',
    where,
    name,
    offered,
    file,
  );
}

export function hostKeyNotTrusted(name: string, key: string, file: string): string {
  return l10n.t(
    'The host key of {0} ({1}) is not in {2} and was not trusted (kimiService.hostKeyPolicy).',
    name,
    key,
    file,
  );
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

/**
 * Why a common ~/.ssh/config directive is not applied (the key in lower case), or undefined for
 * those just named.
 */
export function directiveNotApplied(key: string): string | undefined {
  switch (key) {
    case 'stricthostkeychecking':
      return l10n.t('kimiService.hostKeyPolicy decides');
    case 'globalknownhostsfile':
      return l10n.t('only UserKnownHostsFile or kimiService.knownHostsFile is read');
    case 'certificatefile':
      return l10n.t('ssh2 cannot log in with certificates');
    case 'pkcs11provider':
      return l10n.t('ssh2 cannot use PKCS#11; an agent holding the key can');
    case 'securitykeyprovider':
      return l10n.t('ssh2 cannot use FIDO keys; an agent holding the key can');
    case 'controlmaster':
    case 'controlpath':
    case 'controlpersist':
      return l10n.t('one ssh2 connection is kept instead');
    case 'localforward':
    case 'remoteforward':
    case 'dynamicforward':
      return l10n.t('no forwards are opened');
    case 'hostkeyalias':
      return l10n.t('known_hosts is looked up by HostName and Port');
    case 'kexalgorithms':
    case 'ciphers':
    case 'macs':
    case 'hostkeyalgorithms':
    case 'pubkeyacceptedalgorithms':
      return l10n.t("ssh2's algorithms are used");
    default:
      return undefined;
  }
}

/** A `Match` criterion ssh-config cannot evaluate (exec, canonical, ...). */
export function matchNotEvaluated(criterion: string): string {
  return l10n.t('Match {0} (not evaluated: such blocks never apply)', criterion);
}

export function knownHostsNone(): string {
  return l10n.t('UserKnownHostsFile none (kimiService.knownHostsFile is used)');
}

export function includeInMatch(line: string): string {
  return l10n.t('Include inside a Match block is not supported (ignored): {0}', line);
}

/** A jump host's channel to the next hop failed. */
export function jumpCouldNotReach(jump: string, to: string, why: string): string {
  return l10n.t('Jump host {0} could not reach {1}: {2}', jump, to, why);
}

/** The end of the list of what a login tried: the methods the server still allows. */
export function serverOnlyAllows(methods: readonly string[]): string {
  return l10n.t('(the server only allows: {0})', methods.join(', '));
}

export function serverClosedConnection(): string {
  return l10n.t('the server closed the connection');
}

/** A key file in the list of what a login tried, and why it was not offered. */
export function keyNoPassphrase(file: string): string {
  return l10n.t('{0} (no passphrase given)', file);
}

export function keyWrongPassphrase(file: string): string {
  return l10n.t('{0} (wrong passphrase)', file);
}

export function keyPublicOnly(file: string): string {
  return l10n.t('{0} (a public key: it only selects agent keys)', file);
}

export function keyNotFound(file: string): string {
  return l10n.t('{0} (not found)', file);
}

export function keyUnreadable(file: string): string {
  return l10n.t('{0} (unreadable)', file);
}

export function keyUnparsable(file: string, why: string): string {
  return l10n.t('{0} (cannot parse: {1})', file, why);
}

export function knownHostsFileInvalid(why: string): string {
  return l10n.t('kimiService.knownHostsFile: {0}', why);
}
