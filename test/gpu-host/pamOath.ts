/**
 * One-time codes on the simulated GPU host: sshd with `UsePAM yes` and a PAM service of its own
 * (pam_oath from Debian's libpam-oath), so the chosen login users must pass
 * `AuthenticationMethods publickey,keyboard-interactive`: their key, then a TOTP code (RFC 6238,
 * 30 s steps, 6 digits) of a known secret. ns-init.sh bind-mounts the service file over the
 * namespace's /etc/pam.d/sshd (sshd's PAM service name is its program name), so this machine's
 * own PAM configuration is not touched. pam_oath rewrites the users file on every accepted code
 * (the last code and its time), which the tests read to count what the server accepted.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';

export interface OneTimeCodeOptions {
  /** Login users (of GpuHostOptions.users) who must give a code after their key. */
  readonly users: readonly string[];
  /** The TOTP secret, hex (oathtool's form). */
  readonly secretHex: string;
  /**
   * What follows the key: keyboard-interactive (default; PAM asks its own question), or
   * password (`PasswordAuthentication yes`: sshd hands the password to PAM, so the code is the password).
   */
  readonly then?: 'keyboard-interactive' | 'password';
  /** sshd's LoginGraceTime: how long a login may take before sshd drops it (default 120 s). */
  readonly loginGraceTimeSeconds?: number;
}

const PAM_OATH = ['/lib/x86_64-linux-gnu/security/pam_oath.so', '/usr/lib/x86_64-linux-gnu/security/pam_oath.so'];

/** Where the users file of a host's codes lives (root-only, in the fixture). */
export function oathUsersFile(fixtureDir: string): string {
  return path.join(fixtureDir, 'ssh', 'oath', 'users.oath');
}

/** The PAM service file's path in the fixture; ns-init.sh mounts it over /etc/pam.d/sshd. */
export function pamServiceFile(fixtureDir: string): string {
  return path.join(fixtureDir, 'ns', 'pam-sshd');
}

/**
 * Writes the users file and the PAM service; returns the sshd_config lines (global ones, and
 * those to add to each user's `Match User` block).
 */
export async function setUpOneTimeCodes(
  fixtureDir: string,
  o: OneTimeCodeOptions,
): Promise<{ global: string[]; perUser: (user: string) => string[] }> {
  const module = PAM_OATH.find((p) => fs.existsSync(p));
  if (!module) throw new Error('pam_oath.so is missing: install libpam-oath (scripts/ensure-system-packages.sh)');
  if (!/^([0-9a-f]{2})+$/i.test(o.secretHex)) throw new Error('secretHex: an even number of hex digits');
  const usersFile = oathUsersFile(fixtureDir);
  await fsp.mkdir(path.dirname(usersFile), { recursive: true, mode: 0o700 });
  // pam_oath's format: TYPE USER PIN SECRET; "HOTP/T30" is TOTP with 30-second steps, "-" no PIN.
  await fsp.writeFile(usersFile, o.users.map((u) => `HOTP/T30 ${u} - ${o.secretHex}\n`).join(''), { mode: 0o600 });
  await fsp.writeFile(
    pamServiceFile(fixtureDir),
    [
      "# PAM service of the simulated GPU host's sshd (test/gpu-host/pamOath.ts)",
      // window=1: the previous and the next 30-s step are accepted too (clock skew, as real setups allow).
      `auth required ${module} usersfile=${usersFile} window=1 digits=6`,
      'account required pam_permit.so',
      'session required pam_permit.so',
      'password required pam_deny.so',
      '',
    ].join('\n'),
  );
  const coded = new Set(o.users);
  const then = o.then ?? 'keyboard-interactive';
  return {
    global: [
      'UsePAM yes',
      'KbdInteractiveAuthentication yes',
      ...(o.loginGraceTimeSeconds !== undefined ? [`LoginGraceTime ${o.loginGraceTimeSeconds}`] : []),
    ],
    perUser: (u) =>
      coded.has(u)
        ? [
            ...(then === 'password' ? ['  PasswordAuthentication yes'] : []),
            `  AuthenticationMethods publickey,${then}`,
          ]
        : [],
  };
}

/** The TOTP code (RFC 6238: HMAC-SHA1, 30 s, 6 digits) of `secretHex` at `atMs`. */
export function totpCode(secretHex: string, atMs: number = Date.now()): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / 30)));
  const mac = crypto.createHmac('sha1', Buffer.from(secretHex, 'hex')).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, '0');
}

/** The users file's line for `user` (pam_oath appends the last accepted code and its time). */
export async function oathLine(fixtureDir: string, user: string): Promise<string | undefined> {
  const text = await fsp.readFile(oathUsersFile(fixtureDir), 'utf8');
  return text.split('\n').find((l) => l.split(/\s+/)[1] === user);
}
