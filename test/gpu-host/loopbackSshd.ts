/**
 * A bare OpenSSH sshd on 127.0.0.1 for login tests that need no simulated GPU host: its own host
 * key, config and environment (KRB5_KTNAME for Kerberos), LogLevel VERBOSE on stderr, so a test
 * proves a login by sshd's own "Accepted <method> for <user>" line.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../util/freePort';
import { waitFor } from '../util/waitFor';

export interface LoopbackSshd {
  readonly port: number;
  /** `[127.0.0.1]:PORT <host key>` for a known_hosts file. */
  readonly knownHostsLine: string;
  /** sshd's log lines so far. */
  log(): string[];
  /** Log lines that match `re`, counted. */
  count(re: RegExp): number;
  stop(): Promise<void>;
}

export interface LoopbackSshdOptions {
  /** A folder of this sshd's own (created). */
  readonly dir: string;
  /** sshd_config lines for the login under test (authentication methods, keys...). */
  readonly lines: readonly string[];
  /** Added to sshd's environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** The port to listen on (a host reinstalled under the same address); default a free one. */
  readonly port?: number;
}

export async function startLoopbackSshd(o: LoopbackSshdOptions): Promise<LoopbackSshd> {
  fs.mkdirSync(o.dir, { recursive: true });
  fs.mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation directory
  const hostKey = path.join(o.dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey], { stdio: 'pipe' });
  const port = o.port ?? (await freePort());
  const config = path.join(o.dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      ...o.lines, // sshd keeps the first value of a keyword: the test's come first
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      `PidFile ${path.join(o.dir, 'sshd.pid')}`,
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  const lines: string[] = [];
  const child: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...o.env },
  });
  let partial = '';
  child.stderr!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split(/\r?\n/);
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(() => lines.some((l) => l.includes('Server listening on')) || child.exitCode !== null, {
    message: 'sshd listening',
  });
  if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${lines.join('\n')}`);
  const hostPub = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  return {
    port,
    knownHostsLine: `[127.0.0.1]:${port} ${hostPub}`,
    log: () => lines.slice(),
    count: (re) => lines.filter((l) => re.test(l)).length,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
