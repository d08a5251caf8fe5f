/**
 * The public half of an identity file, without its passphrase: from `FILE.pub`, from the file
 * itself when it is a public key, or from the unencrypted header of an OpenSSH-format private
 * key. Used to pick agent keys under `IdentitiesOnly` and to skip a key file the agent already
 * offered (so no passphrase is asked for it). Pure, but for the fs wrapper at the bottom.
 */
import * as fs from 'node:fs';
import { utils as ssh2Utils } from 'ssh2';
import { keyTypeOfBlob as typeOfBlob } from './knownHosts';

/** The key blob of a public key line (`ssh-ed25519 AAAA... comment`). */
export function publicKeyFromLine(text: string): Buffer | undefined {
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const m = /^(\S+)\s+([A-Za-z0-9+/]+={0,2})(?:\s|$)/.exec(t);
    if (!m) return undefined;
    const blob = Buffer.from(m[2], 'base64');
    return typeOfBlob(blob) === m[1] ? blob : undefined;
  }
  return undefined;
}

/**
 * The public key stored in clear in an `openssh-key-v1` private key (PROTOCOL.key: magic,
 * cipher, kdf, kdf options, number of keys, then the public keys), encrypted or not.
 */
export function publicKeyFromOpenSshPrivate(text: string): Buffer | undefined {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(text);
  if (!m) return undefined;
  const data = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
  const magic = Buffer.from('openssh-key-v1\0', 'latin1');
  if (data.length < magic.length || !data.subarray(0, magic.length).equals(magic)) return undefined;
  let off = magic.length;
  const readString = (): Buffer | undefined => {
    if (off + 4 > data.length) return undefined;
    const len = data.readUInt32BE(off);
    if (off + 4 + len > data.length) return undefined;
    const s = data.subarray(off + 4, off + 4 + len);
    off += 4 + len;
    return s;
  };
  for (let i = 0; i < 3; i++) if (!readString()) return undefined; // cipher, kdf, kdf options
  if (off + 4 > data.length) return undefined;
  const n = data.readUInt32BE(off);
  off += 4;
  if (n < 1) return undefined;
  const pub = readString();
  return pub && typeOfBlob(pub) ? Buffer.from(pub) : undefined;
}

/** The public key of an identity: `.pub` text first, else what the key file itself tells without a passphrase. */
export function publicKeyOf(keyFile: Buffer | undefined, pubFile: string | undefined): Buffer | undefined {
  if (pubFile !== undefined) {
    const fromPub = publicKeyFromLine(pubFile);
    if (fromPub) return fromPub;
  }
  if (keyFile === undefined) return undefined;
  const text = keyFile.toString('utf8');
  const fromLine = publicKeyFromLine(text);
  if (fromLine) return fromLine;
  const fromHeader = publicKeyFromOpenSshPrivate(text);
  if (fromHeader) return fromHeader;
  const parsed = ssh2Utils.parseKey(keyFile);
  if (parsed instanceof Error) return undefined; // encrypted PEM without a .pub: unknown until unlocked
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return key ? key.getPublicSSH() : undefined;
}

// ---- fs wrapper ----

async function readOrUndefined(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.promises.readFile(file);
  } catch {
    return undefined;
  }
}

/** The public key blob of an identity file (or of FILE.pub); undefined when neither tells it. */
export async function readIdentityPublicKey(file: string): Promise<Buffer | undefined> {
  const [key, pub] = await Promise.all([readOrUndefined(file), readOrUndefined(`${file}.pub`)]);
  return publicKeyOf(key, pub?.toString('utf8'));
}
