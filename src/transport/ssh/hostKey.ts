/** The host key: the algorithms asked for, and the check against known_hosts and kimiService.hostKeyPolicy. */
import type { HandshakeDeadline } from './handshake';
import {
  appendKnownHostsLine,
  checkHostKeyInFiles,
  fingerprintSha256,
  formatKnownHostsLine,
  hostLookupName,
  keyTypeOfBlob,
  readKnownHostsFile,
  type KnownHostsText,
} from './knownHosts';
import type { SshEndpoint } from './sshTargetTypes';
import type { DialContext } from './sshOptions';
import { ConnectionClosedError, HostKeyError } from '../errors';
import {
  connectionDisposed,
  hostCertificateUncheckable,
  hostKeyChanged,
  hostKeyNotTrusted,
  hostKeyRevoked,
  hostKeyUnparsable,
} from '../../present/words/sshWords';
import { hostKeyAdded } from '../../present/words/connectionWords';

/** Host key algorithms ssh2 supports, in its default preference. */
const HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/** Like OpenSSH, prefer the algorithms of keys we already know, so the server shows us one of those. */
export function orderHostKeyAlgorithms(knownTypes: readonly string[]): string[] {
  const preferred = knownTypes.flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t]));
  const first = HOST_KEY_ALGORITHMS.filter((a) => preferred.includes(a));
  return [...first, ...HOST_KEY_ALGORITHMS.filter((a) => !first.includes(a))];
}

/** The known-hosts files of a hop: its UserKnownHostsFile, else kimiService.knownHostsFile. The first is written. */
function knownHostsFiles(ctx: DialContext, ep: SshEndpoint): readonly string[] {
  return ep.knownHostsFiles && ep.knownHostsFiles.length > 0 ? ep.knownHostsFiles : [ctx.options.knownHostsFile];
}

export function readKnownHosts(ctx: DialContext, ep: SshEndpoint): Promise<KnownHostsText[]> {
  return Promise.all(knownHostsFiles(ctx, ep).map(async (file) => ({ file, text: await readKnownHostsFile(file) })));
}

/** Checks the key against known_hosts and the policy; throws a TransportError to refuse. */
export async function checkHostKey(
  ctx: DialContext,
  ep: SshEndpoint,
  key: Buffer,
  deadline: HandshakeDeadline,
): Promise<void> {
  const files = await readKnownHosts(ctx, ep);
  const file = files[0].file; // where a trusted key is written
  const name = hostLookupName(ep.hostName, ep.port);
  const keyType = keyTypeOfBlob(key);
  if (!keyType) throw new HostKeyError('host-key-rejected', hostKeyUnparsable(name));
  const fingerprint = fingerprintSha256(key);
  const result = checkHostKeyInFiles(files, ep.hostName, ep.port, keyType, key);
  switch (result.status) {
    case 'known':
      return;
    case 'revoked':
      throw new HostKeyError(
        'host-key-rejected',
        hostKeyRevoked(name, `${keyType} ${fingerprint}`, result.file, result.line),
      );
    case 'changed':
      throw new HostKeyError(
        'host-key-changed',
        hostKeyChanged(
          name,
          `${keyType} ${fingerprint}`,
          `${result.file} line ${result.lines.join(', ')}`,
          result.knownFingerprints,
          result.file,
        ),
        { host: name, offered: fingerprint, known: result.knownFingerprints, file: result.file, lines: result.lines },
      );
    case 'unknown': {
      if (result.certAuthorities.length > 0) {
        // ssh2 negotiates no certificate host key algorithm and hands us the plain key only:
        // the CA cannot vouch for it here, and trusting it on first use would silently
        // replace the CA check the config asks for. Refuse, and say how to proceed.
        const where = result.certAuthorities.map((c) => `${c.file} line ${c.line}`).join(', ');
        throw new HostKeyError(
          'host-key-rejected',
          hostCertificateUncheckable(where, name, `${keyType} ${fingerprint}`, file),
        );
      }
      deadline.pause();
      let decision: 'trust' | 'reject';
      try {
        decision = await ctx.options.decideUnknownHostKey({
          host: ep.hostName,
          port: ep.port,
          alias: ep.alias,
          keyType,
          fingerprint,
          otherKeyTypes: result.otherKeyTypes,
          knownHostsFile: file,
        });
      } finally {
        deadline.resume();
      }
      if (ctx.isDisposed()) throw new ConnectionClosedError(connectionDisposed(name));
      if (decision !== 'trust') {
        throw new HostKeyError('host-key-unknown', hostKeyNotTrusted(name, `${keyType} ${fingerprint}`, file));
      }
      const hash = ep.hashKnownHosts === true;
      await appendKnownHostsLine(file, formatKnownHostsLine(ep.hostName, ep.port, keyType, key, { hash }));
      ctx.log(hostKeyAdded(keyType, name, fingerprint, file, hash));
      return;
    }
  }
}
