/**
 * The one authenticated OpenSSH connection to a host: a ControlMaster whose control socket sits in
 * a folder of this transport's own (0700, never ~/.ssh), and the arguments of the clients that
 * share it. The master backgrounds itself once logged in (ControlPersist); its log goes to a file
 * beside the socket (`-E`), read when it fails.
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A transport's own folder: the control socket, the master's log, the askpass socket, certificates read from the agent. */
export interface ControlDir {
  readonly dir: string;
  readonly socket: string;
  readonly log: string;
  /** Where the askpass helper asks, while a master logs in. */
  readonly askpassSocket: string;
}

export function makeControlDir(parent: string): ControlDir {
  // mkdtemp creates the folder 0700, owned by us, under a name nobody could have prepared.
  const dir = fs.mkdtempSync(path.join(parent, 'kimi-ssh-'));
  return {
    dir,
    socket: path.join(dir, 'm'),
    log: path.join(dir, 'master.log'),
    askpassSocket: path.join(dir, 'a'),
  };
}

/** How long an idle master outlives the transport when the extension dies without disposing it. */
export const CONTROL_PERSIST_SECONDS = 600;

/**
 * A client of the master only: `-F none` (nothing of the config applies to a multiplexed
 * session), and a ProxyCommand that fails, so a client that finds no master never logs in on its own.
 */
export function muxClientArgs(c: ControlDir): string[] {
  return [
    '-F',
    'none',
    '-S',
    c.socket,
    '-o',
    'ControlMaster=no',
    '-o',
    'ProxyCommand=/bin/false',
    '-o',
    'BatchMode=yes',
    '-q',
  ];
}

/**
 * The master's own options: multiplexing, host keys always checked. `prompts`: questions go to
 * SSH_ASKPASS (the environment names it); without, none is ever asked (BatchMode).
 */
export function masterArgs(
  c: ControlDir,
  o: { knownHostsOverride?: string; keepaliveSeconds?: number; connectTimeoutSeconds?: number; prompts?: boolean },
): string[] {
  const opt = (s: string) => ['-o', s];
  return [
    '-N',
    '-E',
    c.log,
    ...opt('ControlMaster=yes'),
    ...opt(`ControlPath=${c.socket}`),
    ...opt(`ControlPersist=${CONTROL_PERSIST_SECONDS}`),
    // An unknown key is refused and asked about by the transport (kimiService.hostKeyPolicy); never "no".
    ...opt('StrictHostKeyChecking=yes'),
    ...opt(o.prompts ? 'BatchMode=no' : 'BatchMode=yes'),
    ...(o.knownHostsOverride !== undefined ? opt(`UserKnownHostsFile=${quoteOption(o.knownHostsOverride)}`) : []),
    ...(o.keepaliveSeconds !== undefined
      ? [...opt(`ServerAliveInterval=${o.keepaliveSeconds}`), ...opt('ServerAliveCountMax=3')]
      : []),
    ...(o.connectTimeoutSeconds !== undefined ? opt(`ConnectTimeout=${o.connectTimeoutSeconds}`) : []),
  ];
}

/** A path as the value of `-o KEY=VALUE` (OpenSSH splits the value on spaces unless quoted). */
export function quoteOption(value: string): string {
  if (/["\n\r\0]/.test(value))
    throw new Error(`A path with a double quote or a newline cannot be given to ssh: ${value}`);
  return /\s/.test(value) ? `"${value}"` : value;
}

/** Runs ssh until it has logged in and backgrounded (exit 0) or given up (its log says why). */
export function startMaster(
  sshPath: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  onSpawn: (kill: () => void) => () => void,
): Promise<{ ok: boolean; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(sshPath, [...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
    const forget = onSpawn(() => child.kill('SIGTERM'));
    child.stderr.on('data', () => undefined);
    child.on('error', () => {
      forget();
      resolve({ ok: false, code: null });
    });
    child.on('exit', (code) => {
      forget();
      resolve({ ok: code === 0, code });
    });
  });
}

/** `ssh -O check`: the master's pid, or undefined when none answers on the socket. */
export function masterPid(sshPath: string, c: ControlDir): Promise<number | undefined> {
  return new Promise((resolve) => {
    execFile(
      sshPath,
      [...muxClientArgs(c), '-O', 'check', 'kimi-mux'],
      { timeout: 10_000, encoding: 'utf8' },
      (err, _o, stderr) => {
        const m = /pid=(\d+)/.exec(stderr);
        resolve(err || !m ? undefined : Number(m[1]));
      },
    );
  });
}

/** `ssh -O exit`: the master ends its sessions and the connection. Never rejects. */
export function stopMaster(sshPath: string, c: ControlDir): Promise<void> {
  return new Promise((resolve) => {
    execFile(sshPath, [...muxClientArgs(c), '-O', 'exit', 'kimi-mux'], { timeout: 10_000 }, () => resolve());
  });
}

/** The master's log from byte `from` on ('' when unreadable). */
export function readLog(c: ControlDir, from = 0): string {
  try {
    const buf = fs.readFileSync(c.log);
    return buf.subarray(Math.min(from, buf.length)).toString('utf8');
  } catch {
    return '';
  }
}

export function logSize(c: ControlDir): number {
  try {
    return fs.statSync(c.log).size;
  } catch {
    return 0;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
