/**
 * An unknown host key that OpenSSH refused (StrictHostKeyChecking yes): fetched with
 * ssh-keyscan, shown with its SHA256 fingerprint through the host-key policy
 * (kimiService.hostKeyPolicy: ask, strict, accept-new), and written to known_hosts when trusted.
 * OpenSSH then checks the host against that line itself.
 */
import { execFile } from 'node:child_process';
import { appendKnownHostsLine, fingerprintSha256, formatKnownHostsLine, hostLookupName } from '../ssh/knownHosts';
import type { UnknownHostKeyInfo } from '../ssh/sshOptions';
import { first, yes, type EffectiveConfig } from './effectiveConfig';
import { knownHostsName } from './identities';
import { HostKeyError } from '../errors';
import { keyOfType, noCertificateAuthorityVouches, unknownHostKeyNotFetched } from '../../present/words/opensshWords';
import { hostKeyNotTrusted } from '../../present/words/sshWords';
import { hostKeyAdded } from '../../present/words/connectionWords';

/** One `ssh-keyscan` line's key type and blob. */
export function parseKeyscan(text: string): { keyType: string; blob: Buffer } | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [, keyType, b64] = line.trim().split(/\s+/);
    if (keyType && b64) return { keyType, blob: Buffer.from(b64, 'base64') };
  }
  return undefined;
}

function keyscan(hostName: string, port: number, type: string): Promise<{ keyType: string; blob: Buffer } | undefined> {
  return new Promise((resolve) => {
    execFile(
      'ssh-keyscan',
      ['-T', '10', '-p', String(port), '-t', type, '--', hostName],
      { timeout: 15_000, encoding: 'utf8' },
      (err, stdout) => resolve(err ? undefined : parseKeyscan(stdout)),
    );
  });
}

export interface HostKeyDecision {
  readonly decide: (info: UnknownHostKeyInfo) => Promise<'trust' | 'reject'>;
  readonly log: (message: string) => void;
  /** known_hosts lines with @cert-authority for the host: the CA must vouch, the user is not asked. */
  readonly caLines: readonly string[];
}

/** Resolves when the key was trusted and written (connect again); rejects with a HostKeyError otherwise. */
export async function handleUnknownHostKey(
  config: EffectiveConfig,
  refusedType: string,
  knownHostsFile: string,
  d: HostKeyDecision,
): Promise<void> {
  const { host, port, name } = knownHostsName(config);
  const hostName = first(config, 'hostname') ?? host;
  const behindProxy = ['proxyjump', 'proxycommand'].some((k) => {
    const v = first(config, k);
    return v !== undefined && v.toLowerCase() !== 'none';
  });
  const scanned = behindProxy ? undefined : await keyscan(hostName, port, refusedType.toLowerCase());
  const offered = scanned ? `${scanned.keyType} ${fingerprintSha256(scanned.blob)}` : keyOfType(refusedType);
  if (d.caLines.length > 0)
    throw new HostKeyError('host-key-rejected', noCertificateAuthorityVouches(name, offered, d.caLines));
  if (!scanned) throw new HostKeyError('host-key-unknown', unknownHostKeyNotFetched(name, knownHostsFile, behindProxy));
  const fingerprint = fingerprintSha256(scanned.blob);
  const decision = await d.decide({
    host,
    port,
    alias: first(config, 'host') ?? host,
    keyType: scanned.keyType,
    fingerprint,
    otherKeyTypes: [],
    knownHostsFile,
  });
  if (decision !== 'trust')
    throw new HostKeyError(
      'host-key-unknown',
      hostKeyNotTrusted(name, `${scanned.keyType} ${fingerprint}`, knownHostsFile),
    );
  const hash = yes(config, 'hashknownhosts');
  await appendKnownHostsLine(knownHostsFile, formatKnownHostsLine(host, port, scanned.keyType, scanned.blob, { hash }));
  d.log(hostKeyAdded(scanned.keyType, hostLookupName(host, port), fingerprint, knownHostsFile));
}
