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
import type { SshPromptKind } from './askpass/promptKind';
import { defaultNoLoginHint, needsInteractiveLogin } from '../../present/words/loginWords';
import {
  answersRefused,
  authRefusal,
  notGivenWords,
  opensshFailure,
  promptRefusal as promptRefusalWords,
  type RefusalContext,
} from '../../present/words/opensshWords';

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

/** A login stopped because the user did not answer OpenSSH's question ("passphrase not given"). */
export function promptRefusal(who: string, unanswered: { kind: SshPromptKind; text: string }): string {
  return promptRefusalWords(who, notGivenWords(unanswered.kind), unanswered.text);
}

/**
 * The methods a refusal left when all of them want an answer from the user (a one-time code, a
 * password): the key was taken (`publickey,keyboard-interactive` half done) or the host takes no
 * key. Undefined when a key, a certificate or Kerberos could still have done it.
 */
export function interactiveOnly(methods: string): string[] | undefined {
  const list = methods.split(',').map((m) => m.trim());
  const interactive = list.filter((m) => m === 'keyboard-interactive' || m === 'password');
  return interactive.length > 0 && interactive.length === list.length ? interactive : undefined;
}

/** The log of a master that exited without connecting, as a TransportError. */
export function classifyOpenSshFailure(log: string, ctx: RefusalContext): TransportError {
  const text = log.trim();
  const last = text.split('\n').filter(Boolean).slice(-3).join(' ');
  if (/Could not resolve hostname|Name or service not known|nodename nor servname/i.test(text))
    return new DnsError(opensshFailure.dns(ctx.who, last));
  if (/Connection refused/i.test(text) && !/open failed/.test(text))
    return new ConnectionRefusedError(opensshFailure.refused(ctx.who, last));
  if (/timed out|No route to host|Network is unreachable/i.test(text))
    return new ConnectTimeoutError(opensshFailure.unreachable(ctx.who, last));
  if (/Host key verification failed|host key .* revoked|REVOKED HOST KEY/i.test(text))
    return new HostKeyError('host-key-rejected', opensshFailure.hostKey(ctx.who, text));
  const denied = /Permission denied \(([^)]*)\)/.exec(text);
  if (denied) {
    const interactive = interactiveOnly(denied[1]!);
    if (interactive)
      return new AuthError(
        ctx.prompts
          ? answersRefused(ctx.who, denied[1]!)
          : needsInteractiveLogin(ctx.who, interactive, defaultNoLoginHint()),
      );
    return new AuthError(authRefusal(ctx, denied[1]!, /\bpin required\b|need pin entry/i.test(text)));
  }
  if (/Too many authentication failures/i.test(text)) return new AuthError(opensshFailure.tooManyKeys(ctx.who));
  if (/Connection closed|Connection reset|kex_exchange_identification/i.test(text))
    return new ConnectionClosedError(opensshFailure.closed(ctx.who, last));
  return new BaseError('other', opensshFailure.other(ctx.who, last));
}
