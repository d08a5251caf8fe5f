/**
 * What a connection says in the output channel as it goes: its attempts, the login's rounds, the
 * host keys it adds, and what ~/.ssh/config decided for each hop. Pure functions of the facts.
 */

// The connection's life.

export function connecting(description: string, attempt: number): string {
  return `Connecting to ${description} (attempt ${attempt})`;
}

/** Connected; `note` says how (the client, the hops), if anything. */
export function connected(description: string, note: string | undefined): string {
  return `Connected to ${description}${note ? ` ${note}` : ''}`;
}

export function connectionFailed(description: string, error: string): string {
  return `Connection to ${description} failed: ${error}`;
}

export function connectionLost(description: string, why: string): string {
  return `Connection to ${description} lost: ${why}`;
}

// The login.

export function proxyCommandSays(alias: string, line: string): string {
  return `ProxyCommand (${alias}): ${line}`;
}

export function loginRound(alias: string, method: string, accepted: boolean): string {
  return `${alias}: ${method} ${accepted ? 'accepted' : 'refused'}`;
}

export function serverAsks(alias: string, method: string, prompts: readonly string[]): string {
  return `${alias}: ${method}: the server asks ${prompts.map((p) => JSON.stringify(p)).join(', ')}`;
}

export function agentKeyTried(alias: string, summary: string | undefined): string {
  return `${alias}: agent: ${summary}`;
}

/** A host key the user trusted, written to known_hosts (`hashed`: as HashKnownHosts asks). */
export function hostKeyAdded(keyType: string, host: string, fingerprint: string, file: string, hashed = false): string {
  return `Added the ${keyType} host key of ${host} (${fingerprint}) to ${file}${hashed ? ' (hashed: HashKnownHosts yes)' : ''}`;
}

// What ~/.ssh/config decided, hop by hop.

export function hopProxyCommand(hop: string, command: string): string {
  return `${hop}: ProxyCommand ${command}`;
}

export function hopKnownHosts(hop: string, files: readonly string[]): string {
  return `${hop}: known hosts from UserKnownHostsFile ${files.join(' ')}`;
}

export function hopIdentitiesOnly(hop: string, files: readonly string[]): string {
  return `${hop}: IdentitiesOnly yes (only ${files.join(', ')})`;
}

export function hopNotApplied(hop: string, notes: readonly string[]): string {
  return `${hop}: ~/.ssh/config directives not applied: ${notes.join('; ')}`;
}

// The OpenSSH client and its askpass helper.

export function opensshConnects(description: string, reason: string): string {
  return `${description}: the OpenSSH client connects (${reason})`;
}

/** `prompts`: whether prompts reach the user through SSH_ASKPASS (else BatchMode). */
export function opensshConfig(name: string, knownHosts: readonly string[], prompts: boolean): string {
  return (
    `${name}: known hosts from ${knownHosts.join(' ')}; StrictHostKeyChecking yes, ` +
    (prompts
      ? 'prompts (passphrase, PIN, code, password) asked through SSH_ASKPASS'
      : 'BatchMode yes (no prompts: keys that need a passphrase or PIN must be in ssh-agent)')
  );
}

export function askpassWithoutToken(host: string): string {
  return `${host}: an askpass request without this login's token was refused`;
}

export function opensshSays(host: string, text: string): string {
  return `${host}: OpenSSH says: ${text}`;
}

export function askpassAsks(host: string, text: string): string {
  return `${host} asks: ${JSON.stringify(text)}`;
}

export function askpassRefused(host: string, text: string, why: string): string {
  return `${host}: ${JSON.stringify(text)} ${why}`;
}

export function tooManyQuestions(max: number): string {
  return `more than ${max} questions in one login: stopped`;
}

export const NOT_ANSWERED = 'not answered: the login stops';

export function askpassHelperMissing(host: string, helper: string): string {
  return `${host}: the askpass helper ${helper} is missing: OpenSSH runs without prompts (BatchMode yes)`;
}

export function askpassCannotListen(host: string, error: string): string {
  return `${host}: cannot listen for askpass questions (${error}): OpenSSH runs without prompts`;
}

/** A forward's socket path that ssh cannot take (too long, a colon or a space): one `ssh -W` per stream instead. */
export function forwardSocketUnusable(description: string, target: string, socket: string): string {
  return `${description}: streams to ${target} each go through ssh -W (${socket} cannot be a socket)`;
}

/** The master refused a forward: one `ssh -W` per stream instead. */
export function forwardRefused(description: string, target: string, why: string): string {
  return `${description}: the OpenSSH master made no forward to ${target} (${why}); streams to it each go through ssh -W`;
}
