/**
 * The OpenSSH client's failures in words: what its log said, and for a refused login what the
 * facts gathered beside it (certificates, a Kerberos ticket, keys that need a passphrase, a token)
 * say the user can do. A refusal or a failure to connect is in the display language; what is said
 * of the client's own workings (a master that does not answer, ssh -G failing, a host name that
 * starts with "-", the Windows client) stays English, for the log and bug reports.
 */
import * as l10n from '@vscode/l10n';

/** What a refused login needs to be explained. */
export interface AuthDiagnosis {
  /** Problems of the certificates offered (certificates.ts), e.g. expired. */
  readonly certificateProblems: readonly string[];
  /** Certificates offered that look valid: the server may not trust their CA. */
  readonly certificates: readonly string[];
  /** GSSAPIAuthentication yes, and whether a Kerberos ticket is there (`klist -s`). */
  readonly gssapi?: { readonly hasTicket: boolean };
  /** Identity files that need a passphrase (asked through SSH_ASKPASS when a front can answer, else BatchMode). */
  readonly lockedKeys: readonly string[];
  readonly pkcs11Provider?: string;
  /** The agent OpenSSH would ask (IdentityAgent, else SSH_AUTH_SOCK); absent: none. */
  readonly agentSocket?: string;
  /** The agent holds a key of the PKCS11Provider's token (so no PIN is missing). */
  readonly tokenKeysInAgent?: boolean;
}

export interface RefusalContext {
  /** user@host:port */
  readonly who: string;
  readonly diagnosis?: AuthDiagnosis;
  /** OpenSSH could ask the user (SSH_ASKPASS): a locked key or a token was asked about, not skipped. */
  readonly prompts?: boolean;
}

/** Every answer given to the host's questions (one-time codes, passwords) was refused: OpenSSH asked as often as it allows. */
export function answersRefused(who: string, methods: string): string {
  return (
    `Login refused by ${who} (it allows: ${methods}): it did not accept the answers given to its questions ` +
    `(a one-time code or a password), asked as often as OpenSSH's NumberOfPasswordPrompts allows. ` +
    'Each failure counts against the account: check the code or the password, then connect again.'
  );
}

/** A login stopped because the user did not answer OpenSSH's question; `notGiven`: "passphrase not given". */
export function promptRefusal(who: string, notGiven: string, promptText: string): string {
  return l10n.t(
    'Login to {0} stopped: {1} ({2} was cancelled). Connect again to be asked again.',
    who,
    notGiven,
    JSON.stringify(promptText.trim()),
  );
}

function batchNote(): string {
  return l10n.t(
    'The OpenSSH client runs here without prompts (BatchMode yes): a key that needs a passphrase or a PIN must be loaded into ssh-agent first (ssh-add; for a token ssh-add -s PROVIDER).',
  );
}

function promptedNote(): string {
  return l10n.t('It was asked for: the passphrase given was not accepted.');
}

/**
 * The words of a refused login: the certificate's own problem first, never authorized_keys for a
 * certificate user. `pinRequired`: OpenSSH said a PKCS#11 token wanted its PIN ("pin required").
 */
export function authRefusal(ctx: RefusalContext, methods: string, pinRequired = false): string {
  const d = ctx.diagnosis;
  const head = l10n.t('Login refused by {0} (it allows: {1})', ctx.who, methods);
  if (d && d.certificateProblems.length > 0) return l10n.t('{0}: {1}.', head, d.certificateProblems.join('; '));
  if (d?.gssapi && !d.gssapi.hasTicket && /gssapi/.test(methods))
    return l10n.t(
      '{0}: GSSAPIAuthentication is on but there is no valid Kerberos ticket: run kinit (klist shows the tickets).',
      head,
    );
  const locked =
    d && d.lockedKeys.length > 0
      ? ' ' + l10n.t('{0} needs a passphrase. {1}', d.lockedKeys.join(', '), ctx.prompts ? promptedNote() : batchNote())
      : '';
  if (d?.pkcs11Provider !== undefined && pinRequired && !d.tokenKeysInAgent && !ctx.prompts)
    return `${head}: ${tokenPinNeeded(d.pkcs11Provider, d.agentSocket)}${locked}`;
  if (d && d.certificates.length > 0)
    return (
      l10n.t(
        '{0}: it did not accept the certificate {1}, which is valid for this user and time; the host may not trust its certificate authority (sshd TrustedUserCAKeys) or may limit its principals (AuthorizedPrincipalsFile).',
        head,
        d.certificates.join(', '),
      ) + locked
    );
  if (d?.gssapi && /gssapi/.test(methods))
    return (
      l10n.t(
        "{0}: the Kerberos ticket was not accepted (klist: is it for the host's realm?), and no key was accepted either.",
        head,
      ) + locked
    );
  const token =
    d?.pkcs11Provider !== undefined
      ? ' ' + l10n.t("The token's public key is printed by: ssh-keygen -D {0}.", d.pkcs11Provider)
      : '';
  return (
    l10n.t(
      '{0}: no key was accepted. Check the user name and that the public key is in ~/.ssh/authorized_keys on the host, or set "identityFile".',
      head,
    ) +
    token +
    locked
  );
}

function tokenPinNeeded(provider: string, agentSocket: string | undefined): string {
  const agent =
    agentSocket === undefined
      ? l10n.t(
          "This host's SSH config names no agent (IdentityAgent none, or no SSH_AUTH_SOCK where VS Code runs): set IdentityAgent to that agent's socket.",
        )
      : l10n.t('The agent this host uses: {0}.', agentSocket);
  return (
    l10n.t(
      "the PKCS#11 token of PKCS11Provider {0} needs its PIN, which cannot be asked here (nobody to answer: the OpenSSH client runs with BatchMode yes). Put the token's key into ssh-agent once, in a terminal: ssh-add -s {0} (it asks the PIN), then connect again.",
      provider,
    ) +
    ' ' +
    agent
  );
}

/** What the OpenSSH client's log said when it would not connect, by the kind of failure; `last`: its last lines. */
export const opensshFailure = {
  dns: (who: string, last: string): string => l10n.t('Cannot resolve the host name of {0}: {1}', who, last),
  refused: (who: string, last: string): string =>
    l10n.t('Connection refused by {0} — is sshd running? ({1})', who, last),
  unreachable: (who: string, last: string): string => l10n.t('Could not reach {0}: {1}', who, last),
  hostKey: (who: string, log: string): string => l10n.t('OpenSSH refused the host key of {0}: {1}', who, log),
  tooManyKeys: (who: string): string =>
    l10n.t(
      'Login refused by {0}: too many keys offered (Too many authentication failures). Set "IdentitiesOnly yes" and this host\'s IdentityFile in ~/.ssh/config.',
      who,
    ),
  closed: (who: string, last: string): string => l10n.t('Connection to {0} was closed: {1}', who, last),
  other: (who: string, last: string): string =>
    l10n.t('OpenSSH could not connect to {0}: {1}', who, last || l10n.t('no reason given')),
};

export const OPENSSH_ON_WINDOWS =
  'kimiService.ssh.client is "openssh", but the OpenSSH of Windows has no ControlMaster, which this transport needs for one login per host; use "ssh2" (docs/ssh.md).';

export function masterSilent(description: string): string {
  return `The OpenSSH master of ${description} logged in but does not answer on its control socket`;
}

export function noCertificateAuthorityVouches(name: string, offered: string, caLines: readonly string[]): string {
  return l10n.t(
    '{0} offered {1}, which no certificate authority of {2} vouches for (no host certificate, or one signed by another CA, or not for this name), and it is not in known_hosts; refusing to connect.',
    name,
    offered,
    caLines.join(', '),
  );
}

export function unknownHostKeyNotFetched(name: string, knownHostsFile: string, behindProxy: boolean): string {
  return behindProxy
    ? l10n.t(
        'The host key of {0} is not in {1} (the host is reached through a proxy: its key cannot be fetched here); connect once with ssh on a terminal to check and add it.',
        name,
        knownHostsFile,
      )
    : l10n.t(
        'The host key of {0} is not in {1}; connect once with ssh on a terminal to check and add it.',
        name,
        knownHostsFile,
      );
}

/** "a ED25519 key": the refused key's type when its fingerprint could not be fetched. */
export function keyOfType(keyType: string): string {
  return `a ${keyType} key`;
}

export function hostStartsWithDash(host: string): string {
  return `The host "${host}" cannot start with "-"`;
}

export function sshNotInstalled(sshPath: string): string {
  return l10n.t('The OpenSSH client ({0}) is not installed or not on PATH', sshPath);
}

export function sshDashGFailed(host: string, reason: string): string {
  return `ssh -G ${host} failed: ${reason}`;
}

/** What a login prompt left unanswered was (the prompt's kind), for the refusal: "passphrase not given". */
export function notGivenWords(kind: string): string {
  switch (kind) {
    case 'passphrase':
      return l10n.t('passphrase not given');
    case 'pin':
      return l10n.t('PIN not given');
    case 'password':
      return l10n.t('password not given');
    case 'code':
      return l10n.t('one-time code not given');
    case 'confirm':
      return l10n.t('confirmation not given');
    default:
      return l10n.t('answer not given');
  }
}

/** A certificate that has expired: `validTo` as ISO time. */
export function certificateExpired(file: string, keyId: string, validTo: string): string {
  return l10n.t(
    'the certificate {0} (Key ID "{1}") expired at {2} (ssh-keygen -L: Valid); get a new one from your certificate authority (e.g. step ssh login, tsh login, vault write ssh/sign)',
    file,
    keyId,
    validTo,
  );
}

export function certificateNotYetValid(file: string, keyId: string, validFrom: string): string {
  return l10n.t(
    'the certificate {0} (Key ID "{1}") is not valid before {2} (ssh-keygen -L: Valid); check this machine\'s clock',
    file,
    keyId,
    validFrom,
  );
}

export function certificateOtherPrincipals(
  file: string,
  keyId: string,
  principals: readonly string[],
  user: string,
): string {
  return l10n.t(
    'the certificate {0} (Key ID "{1}") is for the principals {2}, not for the user {3} (ssh-keygen -L: Principals); log in as one of them or get a certificate for {3}',
    file,
    keyId,
    principals.join(', '),
    user,
  );
}

/** Why the connection was lost when the master left no line in its log. */
export function masterExited(): string {
  return l10n.t('the OpenSSH master exited');
}
