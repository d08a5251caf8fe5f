/**
 * What a connection says in the output channel as it goes: its attempts, the login's rounds, the
 * host keys it adds, and what ~/.ssh/config decided for each hop, in the display language. Pure
 * functions of the facts; the names, directives, prompts and words the host says stay as they are
 * (a line of only those, as the ProxyCommand's and the agent's, has nothing to translate).
 */
import * as l10n from '@vscode/l10n';

// The connection's life.

export function connecting(description: string, attempt: number): string {
  return l10n.t('Connecting to {0} (attempt {1})', description, attempt);
}

/** Connected; `note` says how (the client, the hops), if anything. */
export function connected(description: string, note: string | undefined): string {
  return note ? l10n.t('Connected to {0} {1}', description, note) : l10n.t('Connected to {0}', description);
}

export function connectionFailed(description: string, error: string): string {
  return l10n.t('Connection to {0} failed: {1}', description, error);
}

export function connectionLost(description: string, why: string): string {
  return l10n.t('Connection to {0} lost: {1}', description, why);
}

// The login.

export function proxyCommandSays(alias: string, line: string): string {
  return `ProxyCommand (${alias}): ${line}`;
}

export function loginRound(alias: string, method: string, accepted: boolean): string {
  return accepted ? l10n.t('{0}: {1} accepted', alias, method) : l10n.t('{0}: {1} refused', alias, method);
}

export function serverAsks(alias: string, method: string, prompts: readonly string[]): string {
  return l10n.t('{0}: {1}: the server asks {2}', alias, method, prompts.map((p) => JSON.stringify(p)).join(', '));
}

export function agentKeyTried(alias: string, summary: string | undefined): string {
  return `${alias}: agent: ${summary}`;
}

/** A host key the user trusted, written to known_hosts (`hashed`: as HashKnownHosts asks). */
export function hostKeyAdded(keyType: string, host: string, fingerprint: string, file: string, hashed = false): string {
  return hashed
    ? l10n.t(
        'Added the {0} host key of {1} ({2}) to {3} (hashed: HashKnownHosts yes)',
        keyType,
        host,
        fingerprint,
        file,
      )
    : l10n.t('Added the {0} host key of {1} ({2}) to {3}', keyType, host, fingerprint, file);
}

// What ~/.ssh/config decided, hop by hop.

export function hopProxyCommand(hop: string, command: string): string {
  return `${hop}: ProxyCommand ${command}`;
}

export function hopKnownHosts(hop: string, files: readonly string[]): string {
  return l10n.t('{0}: known hosts from UserKnownHostsFile {1}', hop, files.join(' '));
}

export function hopIdentitiesOnly(hop: string, files: readonly string[]): string {
  return l10n.t('{0}: IdentitiesOnly yes (only {1})', hop, files.join(', '));
}

export function hopNotApplied(hop: string, notes: readonly string[]): string {
  return l10n.t('{0}: ~/.ssh/config directives not applied: {1}', hop, notes.join('; '));
}

// The OpenSSH client and its askpass helper.

export function opensshConnects(description: string, reason: string): string {
  return l10n.t('{0}: the OpenSSH client connects ({1})', description, reason);
}

/** `prompts`: whether prompts reach the user through SSH_ASKPASS (else BatchMode). */
export function opensshConfig(name: string, knownHosts: readonly string[], prompts: boolean): string {
  return prompts
    ? l10n.t(
        '{0}: known hosts from {1}; StrictHostKeyChecking yes, prompts (passphrase, PIN, code, password) asked through SSH_ASKPASS',
        name,
        knownHosts.join(' '),
      )
    : l10n.t(
        '{0}: known hosts from {1}; StrictHostKeyChecking yes, BatchMode yes (no prompts: keys that need a passphrase or PIN must be in ssh-agent)',
        name,
        knownHosts.join(' '),
      );
}

export function askpassWithoutToken(host: string): string {
  return l10n.t("{0}: an askpass request without this login's token was refused", host);
}

export function opensshSays(host: string, text: string): string {
  return l10n.t('{0}: OpenSSH says: {1}', host, text);
}

export function askpassAsks(host: string, text: string): string {
  return l10n.t('{0} asks: {1}', host, JSON.stringify(text));
}

export function askpassRefused(host: string, text: string, why: string): string {
  return `${host}: ${JSON.stringify(text)} ${why}`;
}

export function tooManyQuestions(max: number): string {
  return l10n.t('more than {0} questions in one login: stopped', max);
}

export function notAnswered(): string {
  return l10n.t('not answered: the login stops');
}

export function askpassHelperMissing(host: string, helper: string): string {
  return l10n.t('{0}: the askpass helper {1} is missing: OpenSSH runs without prompts (BatchMode yes)', host, helper);
}

export function askpassCannotListen(host: string, error: string): string {
  return l10n.t('{0}: cannot listen for askpass questions ({1}): OpenSSH runs without prompts', host, error);
}

/** A forward's socket path that ssh cannot take (too long, a colon or a space): one `ssh -W` per stream instead. */
export function forwardSocketUnusable(description: string, target: string, socket: string): string {
  return l10n.t('{0}: streams to {1} each go through ssh -W ({2} cannot be a socket)', description, target, socket);
}

/** The master refused a forward: one `ssh -W` per stream instead. */
export function forwardRefused(description: string, target: string, why: string): string {
  return l10n.t(
    '{0}: the OpenSSH master made no forward to {1} ({2}); streams to it each go through ssh -W',
    description,
    target,
    why,
  );
}
