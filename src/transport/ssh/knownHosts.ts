/**
 * OpenSSH known_hosts: a pure parser/checker (see sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT")
 * plus a tiny fs wrapper at the bottom.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export type HostKeyCheck =
  | { readonly status: 'known'; readonly line: number }
  /** `otherKeyTypes`: keys of other types are known for this host (OpenSSH warns about this). */
  | { readonly status: 'unknown'; readonly otherKeyTypes: readonly string[] }
  | { readonly status: 'changed'; readonly knownFingerprints: readonly string[]; readonly lines: readonly number[] }
  | { readonly status: 'revoked'; readonly line: number };

export interface KnownHostEntry {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly marker?: 'revoked' | 'cert-authority';
  /** The raw host field: a comma-separated pattern list or one `|1|salt|hash` entry. */
  readonly hosts: string;
  readonly keyType: string;
  readonly keyBlob: Buffer;
}

/** `SHA256:...` exactly as `ssh-keygen -lf` prints it (base64 without padding). */
export function fingerprintSha256(keyBlob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
}

/** The key type named inside an SSH wire-format public key blob (its first string). */
export function keyTypeOfBlob(keyBlob: Buffer): string | undefined {
  if (keyBlob.length < 4) return undefined;
  const len = keyBlob.readUInt32BE(0);
  if (len === 0 || len > 64 || 4 + len > keyBlob.length) return undefined;
  const type = keyBlob.toString('latin1', 4, 4 + len);
  return /^[\x21-\x7e]+$/.test(type) ? type : undefined;
}

/** The string OpenSSH looks up: `host` on port 22, else `[host]:port`. */
export function hostLookupName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

/**
 * A known_hosts line for host:port. `hash: true` (HashKnownHosts yes) writes the host field as
 * `|1|salt|hash` of the lookup name, as ssh does; `salt` only for tests.
 */
export function formatKnownHostsLine(
  host: string,
  port: number,
  keyType: string,
  keyBlob: Buffer,
  options: { readonly hash?: boolean; readonly salt?: Buffer } = {},
): string {
  const name = hostLookupName(host, port);
  const field = options.hash ? hashHostName(name, options.salt) : name;
  return `${field} ${keyType} ${keyBlob.toString('base64')}`;
}

/** A hashed host field as `ssh-keygen -H` writes it: `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`. */
export function hashHostName(name: string, salt: Buffer = randomBytes(20)): string {
  const mac = createHmac('sha1', salt).update(name).digest();
  return `|1|${salt.toString('base64')}|${mac.toString('base64')}`;
}

/** Parses every well-formed line; comments, blank lines and garbage are skipped. */
export function parseKnownHosts(text: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/);
    let marker: KnownHostEntry['marker'];
    if (fields[0].startsWith('@')) {
      if (fields[0] === '@revoked') marker = 'revoked';
      else if (fields[0] === '@cert-authority') marker = 'cert-authority';
      else continue; // unknown marker: OpenSSH ignores the line
      fields.shift();
    }
    if (fields.length < 3) continue;
    const [hosts, keyType, b64] = fields;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) continue;
    const keyBlob = Buffer.from(b64, 'base64');
    // The type inside the blob must agree with the type field, else the line is corrupt.
    if (keyTypeOfBlob(keyBlob) !== keyType) continue;
    entries.push({ line: i + 1, marker, hosts, keyType, keyBlob });
  }
  return entries;
}

/** OpenSSH `match_pattern`: `*` any run, `?` one character; case-insensitive. */
export function matchPattern(name: string, pattern: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.') +
      '$',
    'is',
  );
  return re.test(name);
}

function matchHashed(name: string, field: string): boolean {
  const parts = field.split('|'); // ['', '1', salt, hash]
  if (parts.length !== 4 || parts[0] !== '' || parts[1] !== '1') return false;
  const salt = Buffer.from(parts[2], 'base64');
  const expected = Buffer.from(parts[3], 'base64');
  if (salt.length === 0 || expected.length !== 20) return false;
  const mac = createHmac('sha1', salt).update(name).digest();
  return mac.equals(expected);
}

/** Does the host field of an entry match `name` (already `[host]:port` when needed)? */
export function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|')) return matchHashed(name.toLowerCase(), field);
  let matched = false;
  for (const raw of field.split(',')) {
    if (raw === '') continue;
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    if (matchPattern(name, pattern)) {
      if (negated) return false; // a matching negation vetoes the whole line
      matched = true;
    }
  }
  return matched;
}

/**
 * Checks a presented host key. A matching `@revoked` key wins over everything; an exact key
 * match is `known`; a different key of the same type is `changed`.
 */
export function checkHostKey(text: string, host: string, port: number, keyType: string, keyBlob: Buffer): HostKeyCheck {
  const name = hostLookupName(host, port);
  const entries = parseKnownHosts(text).filter((e) => e.marker !== 'cert-authority' && hostFieldMatches(e.hosts, name));

  const revoked = entries.find((e) => e.marker === 'revoked' && e.keyBlob.equals(keyBlob));
  if (revoked) return { status: 'revoked', line: revoked.line };

  const plain = entries.filter((e) => e.marker === undefined);
  const exact = plain.find((e) => e.keyBlob.equals(keyBlob));
  if (exact) return { status: 'known', line: exact.line };

  const sameType = plain.filter((e) => e.keyType === keyType);
  if (sameType.length > 0) {
    return {
      status: 'changed',
      knownFingerprints: [...new Set(sameType.map((e) => fingerprintSha256(e.keyBlob)))],
      lines: sameType.map((e) => e.line),
    };
  }
  return { status: 'unknown', otherKeyTypes: [...new Set(plain.map((e) => e.keyType))] };
}

/**
 * Lines of `@cert-authority` entries whose host patterns match host:port. ssh2 cannot check host
 * certificates (it negotiates no `*-cert-v01@openssh.com` host key algorithm and its host key
 * callback gets the plain key only), so such a line cannot vouch for a key: the caller says so.
 */
export function certAuthorityLines(text: string, host: string, port: number): number[] {
  const name = hostLookupName(host, port);
  return parseKnownHosts(text)
    .filter((e) => e.marker === 'cert-authority' && hostFieldMatches(e.hosts, name))
    .map((e) => e.line);
}

/** One known-hosts file's name and text. */
export interface KnownHostsText {
  readonly file: string;
  readonly text: string;
}

export type HostKeyFilesCheck =
  | { readonly status: 'known'; readonly file: string; readonly line: number }
  | {
      readonly status: 'unknown';
      readonly otherKeyTypes: readonly string[];
      /** `@cert-authority` lines that match the host (which ssh2 cannot use). */
      readonly certAuthorities: readonly { readonly file: string; readonly line: number }[];
    }
  | {
      readonly status: 'changed';
      readonly file: string;
      readonly knownFingerprints: readonly string[];
      readonly lines: readonly number[];
    }
  | { readonly status: 'revoked'; readonly file: string; readonly line: number };

/**
 * `checkHostKey` over several files (UserKnownHostsFile may list more than one), as OpenSSH
 * does: a revocation in any file wins, then a match in any file, then a different key of the
 * same type (changed); else unknown.
 */
export function checkHostKeyInFiles(
  files: readonly KnownHostsText[],
  host: string,
  port: number,
  keyType: string,
  keyBlob: Buffer,
): HostKeyFilesCheck {
  const results = files.map((f) => ({
    file: f.file,
    text: f.text,
    r: checkHostKey(f.text, host, port, keyType, keyBlob),
  }));
  for (const { file, r } of results) if (r.status === 'revoked') return { status: 'revoked', file, line: r.line };
  for (const { file, r } of results) if (r.status === 'known') return { status: 'known', file, line: r.line };
  for (const { file, r } of results) {
    if (r.status === 'changed')
      return { status: 'changed', file, knownFingerprints: r.knownFingerprints, lines: r.lines };
  }
  const otherKeyTypes = new Set<string>();
  const certAuthorities: { file: string; line: number }[] = [];
  for (const { file, text, r } of results) {
    if (r.status === 'unknown') r.otherKeyTypes.forEach((t) => otherKeyTypes.add(t));
    for (const line of certAuthorityLines(text, host, port)) certAuthorities.push({ file, line });
  }
  return { status: 'unknown', otherKeyTypes: [...otherKeyTypes], certAuthorities };
}

/** Key types already known for host:port, for ordering the host key algorithms we offer. */
export function knownKeyTypes(text: string, host: string, port: number): string[] {
  const name = hostLookupName(host, port);
  const types = parseKnownHosts(text)
    .filter((e) => e.marker === undefined && hostFieldMatches(e.hosts, name))
    .map((e) => e.keyType);
  return [...new Set(types)];
}

// ---- fs wrapper ----

/** The file's text; a missing file is empty. */
export async function readKnownHostsFile(file: string): Promise<string> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/** Appends one line; creates the folder (0700) and the file (0600) when absent. */
export async function appendKnownHostsLine(file: string, line: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const existing = await readKnownHostsFile(file);
  const prefix = existing.length > 0 && !existing.endsWith('\n') ? '\n' : '';
  await fs.promises.appendFile(file, `${prefix}${line}\n`, { mode: 0o600 });
}
