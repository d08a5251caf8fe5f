/**
 * A throwaway MIT Kerberos realm on loopback (Debian's krb5-kdc, krb5-admin-server, krb5-user):
 * its database, stash, keytabs and log in a folder of the test's own, krb5kdc in the foreground
 * on a free 127.0.0.1 port. Nothing of this machine's Kerberos set-up (/etc/krb5.conf) is read
 * or written: every program gets KRB5_CONFIG and KRB5_KDC_PROFILE of the folder.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../util/freePort';
import { waitFor } from '../util/waitFor';

const PROGRAMS = [
  '/usr/sbin/krb5kdc',
  '/usr/sbin/kdb5_util',
  '/usr/sbin/kadmin.local',
  '/usr/bin/kinit',
  '/usr/bin/klist',
];

/** Why this machine cannot run the realm (a missing program), or undefined. */
export function kerberosMissing(): string | undefined {
  for (const p of PROGRAMS)
    if (!fs.existsSync(p))
      return `${p} is missing: apt-get install -y krb5-kdc krb5-admin-server krb5-user (scripts/ensure-system-packages.sh)`;
  return undefined;
}

export interface Kdc {
  readonly realm: string;
  /** KRB5_CONFIG (clients, sshd) and KRB5_KDC_PROFILE (the KDC's own programs). */
  readonly env: { readonly KRB5_CONFIG: string; readonly KRB5_KDC_PROFILE: string };
  /** A principal with a random key, written to `keytab` (sshd's host key, a user's key for kinit -k). */
  addToKeytab(principal: string, keytab: string): void;
  /** `kinit -k -t keytab principal` into the credentials cache `ccache` (a file). */
  kinit(principal: string, keytab: string, ccache: string): void;
  /** The KDC's log (one line per ticket issued or refused). */
  log(): string;
  stop(): Promise<void>;
}

export async function startKdc(dir: string, realm = 'KIMI.TEST'): Promise<Kdc> {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const f = (n: string) => path.join(dir, n);
  const realmFiles = [
    `    database_name = ${f('principal')}`,
    `    key_stash_file = ${f('stash')}`,
    `    acl_file = ${f('kadm5.acl')}`,
    `    kdc_listen = 127.0.0.1:${port}`,
    `    kdc_tcp_listen = 127.0.0.1:${port}`,
  ];
  fs.writeFileSync(
    f('krb5.conf'),
    [
      '[libdefaults]',
      `  default_realm = ${realm}`,
      '  dns_lookup_realm = false',
      '  dns_lookup_kdc = false',
      // The service principal is host/<HostName as written>: no reverse lookup, no canonical name.
      '  rdns = false',
      '  dns_canonicalize_hostname = false',
      '  udp_preference_limit = 1',
      // An expired ticket is refused 1 s after its end, not within the default 5 min of clock skew
      // that the KDC and the libraries allow (the test of an expired ticket waits seconds, not minutes).
      '  clockskew = 1',
      '[realms]',
      `  ${realm} = {`,
      `    kdc = 127.0.0.1:${port}`,
      ...realmFiles,
      '  }',
      '[logging]',
      `  kdc = FILE:${f('kdc.log')}`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    f('kdc.conf'),
    [
      '[kdcdefaults]',
      `  kdc_listen = 127.0.0.1:${port}`,
      `  kdc_tcp_listen = 127.0.0.1:${port}`,
      '[realms]',
      `  ${realm} = {`,
      ...realmFiles,
      '  }',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(f('kadm5.acl'), '');
  const env = { KRB5_CONFIG: f('krb5.conf'), KRB5_KDC_PROFILE: f('kdc.conf') };
  const run = (file: string, args: string[]) =>
    execFileSync(file, args, { env: { ...process.env, ...env }, stdio: 'pipe', timeout: 30_000 });
  // A random master password: the stash file (-s) is what the KDC opens the database with.
  run('kdb5_util', ['create', '-s', '-r', realm, '-P', `m-${process.pid}-${Date.now()}`]);
  const kdc = spawn('krb5kdc', ['-n', '-r', realm, '-P', f('kdc.pid')], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => kdc.once('exit', () => resolve()));
  const log = () => (fs.existsSync(f('kdc.log')) ? fs.readFileSync(f('kdc.log'), 'utf8') : '');
  await waitFor(() => /commencing operation/.test(log()) || kdc.exitCode !== null, {
    message: 'krb5kdc serves the realm',
  });
  if (kdc.exitCode !== null) throw new Error(`krb5kdc exited (${kdc.exitCode}): ${log()}`);
  return {
    realm,
    env,
    addToKeytab: (principal, keytab) => {
      run('kadmin.local', ['-r', realm, '-q', `addprinc -randkey ${principal}`]);
      run('kadmin.local', ['-r', realm, '-q', `ktadd -k ${keytab} ${principal}`]);
    },
    kinit: (principal, keytab, ccache) => {
      execFileSync('kinit', ['-k', '-t', keytab, principal], {
        env: { ...process.env, KRB5_CONFIG: env.KRB5_CONFIG, KRB5CCNAME: `FILE:${ccache}` },
        stdio: 'pipe',
        timeout: 30_000,
      });
    },
    log,
    stop: async () => {
      if (kdc.exitCode === null && kdc.signalCode === null) kdc.kill('SIGTERM');
      await exited;
    },
  };
}
