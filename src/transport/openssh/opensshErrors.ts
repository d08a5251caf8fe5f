/**
 * What the OpenSSH client said when it would not connect (its log: `ssh -E`), as a TransportError
 * a user can act on. Pure: the caller gathers what a refusal needs (certificates, a Kerberos
 * ticket, the known fingerprints) and passes it in.
 */
import type { TransportError } from '../transport';
import {
  AuthError,
  ConnectionClosedError,
  ConnectionRefusedError,
  ConnectTimeoutError,
  DnsError,
  HostKeyError,
} from '../errors';
import { TransportError as BaseError } from '../transport';
import { notGivenWords, type SshPromptKind } from './askpass/promptKind';

/** The refusal of an unknown host key under StrictHostKeyChecking yes: its key type and the known-hosts name. */
export function unknownHostKeyRefusal(log: string): { keyType: string; name: string } | undefined {
  const m = /No (\S+) host key is known for (\S+) and you have requested strict checking/.exec(log);
  return m ? { keyType: m[1]!, name: m[2]! } : undefined;
}

/** A changed host key: the offered fingerprint and the offending known_hosts lines (file, 1-based line). */
export function changedHostKey(
  log: string,
): { offered: string; offending: { file: string; line: number }[]; name: string } | undefined {
  if (!/REMOTE HOST IDENTIFICATION HAS CHANGED/.test(log)) return undefined;
  const offered = /key sent by the remote host is\s*\n?\s*(SHA256:[A-Za-z0-9+/=]+)/.exec(log)?.[1] ?? 'unknown';
  const offending = [...log.matchAll(/Offending \S+ key in (.+):(\d+)\s*$/gm)].map((m) => ({
    file: m[1]!,
    line: Number(m[2]),
  }));
  const name = /Host key for (\S+) has changed/.exec(log)?.[1] ?? '';
  return { offered, offending, name };
}

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

/** A login stopped because the user did not answer OpenSSH's question ("passphrase not given"). */
export function promptRefusal(who: string, unanswered: { kind: SshPromptKind; text: string }): string {
  return `Login to ${who} stopped: ${notGivenWords(unanswered.kind)} (${JSON.stringify(unanswered.text.trim())} was cancelled). Connect again to be asked again.`;
}

const BATCH_NOTE =
  'The OpenSSH client runs here without prompts (BatchMode yes): a key that needs a passphrase or a PIN must be loaded into ssh-agent first (ssh-add; for a token ssh-add -s PROVIDER).';

const PROMPTED_NOTE = 'It was asked for: the passphrase given was not accepted.';

/** The log of a master that exited without connecting, as a TransportError. */
export function classifyOpenSshFailure(log: string, ctx: RefusalContext): TransportError {
  const text = log.trim();
  const last = text.split('\n').filter(Boolean).slice(-3).join(' ');
  if (/Could not resolve hostname|Name or service not known|nodename nor servname/i.test(text))
    return new DnsError(`Cannot resolve the host name of ${ctx.who}: ${last}`);
  if (/Connection refused/i.test(text) && !/open failed/.test(text))
    return new ConnectionRefusedError(`Connection refused by ${ctx.who} — is sshd running? (${last})`);
  if (/timed out|No route to host|Network is unreachable/i.test(text))
    return new ConnectTimeoutError(`Could not reach ${ctx.who}: ${last}`);
  if (/Host key verification failed|host key .* revoked|REVOKED HOST KEY/i.test(text))
    return new HostKeyError('host-key-rejected', `OpenSSH refused the host key of ${ctx.who}: ${text}`);
  const denied = /Permission denied \(([^)]*)\)/.exec(text);
  if (denied) return new AuthError(authRefusal(ctx, denied[1]!, /\bpin required\b|need pin entry/i.test(text)));
  if (/Too many authentication failures/i.test(text))
    return new AuthError(
      `Login refused by ${ctx.who}: too many keys offered (Too many authentication failures). Set "IdentitiesOnly yes" and this host's IdentityFile in ~/.ssh/config.`,
    );
  if (/Connection closed|Connection reset|kex_exchange_identification/i.test(text))
    return new ConnectionClosedError(`Connection to ${ctx.who} was closed: ${last}`);
  return new BaseError('other', `OpenSSH could not connect to ${ctx.who}: ${last || 'no reason given'}`);
}

/**
 * The words of a refused login: the certificate's own problem first, never authorized_keys for a
 * certificate user. `pinRequired`: OpenSSH said a PKCS#11 token wanted its PIN ("pin required").
 */
export function authRefusal(ctx: RefusalContext, methods: string, pinRequired = false): string {
  const d = ctx.diagnosis;
  const head = `Login refused by ${ctx.who} (it allows: ${methods})`;
  if (d && d.certificateProblems.length > 0) return `${head}: ${d.certificateProblems.join('; ')}.`;
  if (d?.gssapi && !d.gssapi.hasTicket && /gssapi/.test(methods))
    return `${head}: GSSAPIAuthentication is on but there is no valid Kerberos ticket: run kinit (klist shows the tickets).`;
  const locked =
    d && d.lockedKeys.length > 0
      ? ` ${d.lockedKeys.join(', ')} needs a passphrase. ${ctx.prompts ? PROMPTED_NOTE : BATCH_NOTE}`
      : '';
  if (d?.pkcs11Provider !== undefined && pinRequired && !d.tokenKeysInAgent && !ctx.prompts)
    return `${head}: ${tokenPinNeeded(d.pkcs11Provider, d.agentSocket)}${locked}`;
  if (d && d.certificates.length > 0)
    return (
      `${head}: it did not accept the certificate ${d.certificates.join(', ')}, which is valid for this user and time; ` +
      `the host may not trust its certificate authority (sshd TrustedUserCAKeys) or may limit its principals (AuthorizedPrincipalsFile).${locked}`
    );
  if (d?.gssapi && /gssapi/.test(methods))
    return `${head}: the Kerberos ticket was not accepted (klist: is it for the host's realm?), and no key was accepted either.${locked}`;
  const token =
    d?.pkcs11Provider !== undefined ? ` The token's public key is printed by: ssh-keygen -D ${d.pkcs11Provider}.` : '';
  return `${head}: no key was accepted. Check the user name and that the public key is in ~/.ssh/authorized_keys on the host, or set "identityFile".${token}${locked}`;
}

function tokenPinNeeded(provider: string, agentSocket: string | undefined): string {
  const agent =
    agentSocket === undefined
      ? " This host's SSH config names no agent (IdentityAgent none, or no SSH_AUTH_SOCK where VS Code runs): set IdentityAgent to that agent's socket."
      : ` The agent this host uses: ${agentSocket}.`;
  return (
    `the PKCS#11 token of PKCS11Provider ${provider} needs its PIN, which cannot be asked here (nobody to answer: the OpenSSH client runs with BatchMode yes). ` +
    `Put the token's key into ssh-agent once, in a terminal: ssh-add -s ${provider} (it asks the PIN), then connect again.${agent}`
  );
}
