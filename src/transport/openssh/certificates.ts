/**
 * OpenSSH user certificates as `ssh-keygen -L` describes them, and what makes a server refuse
 * one (expired, not yet valid, not for this user). Pure apart from `describeCertificate`.
 */
import { execFile } from 'node:child_process';
import {
  certificateExpired,
  certificateNotYetValid,
  certificateOtherPrincipals,
} from '../../present/words/opensshWords';

export interface CertificateInfo {
  readonly file: string;
  readonly keyId: string;
  /** "ED25519 SHA256:..." */
  readonly signingCa: string;
  /** Undefined bound = open ("forever", "after X", "before Y"). */
  readonly validFrom?: Date;
  readonly validTo?: Date;
  /** Empty = any principal (OpenSSH's meaning of an empty list). */
  readonly principals: readonly string[];
}

/** `ssh-keygen -L` output; undefined when it is not a certificate's. */
export function parseCertificateListing(file: string, text: string): CertificateInfo | undefined {
  const lines = text.split('\n');
  const field = (name: string) => {
    const l = lines.find((x) => x.trimStart().startsWith(`${name}:`));
    return l === undefined ? undefined : l.slice(l.indexOf(':') + 1).trim();
  };
  if (field('Type') === undefined || !/certificate/.test(field('Type') ?? '')) return undefined;
  const valid = field('Valid') ?? 'forever';
  const from = /from (\S+)/.exec(valid)?.[1] ?? /after (\S+)/.exec(valid)?.[1];
  const to = /to (\S+)/.exec(valid)?.[1] ?? /before (\S+)/.exec(valid)?.[1];
  const principals: string[] = [];
  const at = lines.findIndex((x) => x.trimStart().startsWith('Principals:'));
  if (at >= 0 && field('Principals') === '') {
    for (const l of lines.slice(at + 1)) {
      if (!/^\s{9,}\S/.test(l) || /^\s*\S+:/.test(l)) break;
      principals.push(l.trim());
    }
  }
  // ssh-keygen prints local time without a zone; Date reads such a string as local time too.
  const date = (s: string | undefined) => (s === undefined ? undefined : new Date(s));
  return {
    file,
    keyId: (field('Key ID') ?? '').replace(/^"|"$/g, ''),
    signingCa: (field('Signing CA') ?? '').replace(/\s*\(using .*\)$/, ''),
    ...(from !== undefined ? { validFrom: date(from) } : {}),
    ...(to !== undefined ? { validTo: date(to) } : {}),
    principals,
  };
}

/** Why a server must refuse the certificate for `user` at `now`; undefined when nothing on its face. */
export function certificateProblem(c: CertificateInfo, user: string, now: Date): string | undefined {
  if (c.validTo !== undefined && c.validTo.getTime() <= now.getTime())
    return certificateExpired(c.file, c.keyId, c.validTo.toISOString());
  if (c.validFrom !== undefined && c.validFrom.getTime() > now.getTime())
    return certificateNotYetValid(c.file, c.keyId, c.validFrom.toISOString());
  if (c.principals.length > 0 && !c.principals.includes(user))
    return certificateOtherPrincipals(c.file, c.keyId, c.principals, user);
  return undefined;
}

/** `ssh-keygen -L -f FILE`, parsed; undefined when it is unreadable or not a certificate. */
export function describeCertificate(file: string, keygen = 'ssh-keygen'): Promise<CertificateInfo | undefined> {
  return new Promise((resolve) => {
    execFile(keygen, ['-L', '-f', file], { timeout: 10_000, encoding: 'utf8' }, (err, stdout) =>
      resolve(err ? undefined : parseCertificateListing(file, stdout)),
    );
  });
}
