/**
 * ssh_config(5) `ProxyCommand`: the command is run locally (through /bin/sh with `exec`, as
 * OpenSSH does; cmd.exe on Windows) and its stdin/stdout become the socket ssh2 speaks SSH
 * over (`sock`). Its stderr goes to the log. It is killed when the connection ends.
 * `proxyCommandSpawn` and `proxyExitError` are pure; `spawnProxyCommand` is the thin shell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Duplex } from 'node:stream';
import type { TransportErrorKind } from '../transport';
import { ProxyCommandGoneError } from '../errors';
import { PROXY_COMMAND_GONE } from '../../present/words/sshWords';
import { proxyCommandEnded } from '../../present/words/transportWords';

export interface SpawnSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly windowsVerbatimArguments?: boolean;
}

/** How to start the (already token-expanded) command on this platform. */
export function proxyCommandSpawn(
  command: string,
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>> = {},
): SpawnSpec {
  if (platform === 'win32') {
    return {
      file: env.ComSpec ?? env.COMSPEC ?? 'cmd.exe',
      args: ['/d', '/s', '/c', `"${command}"`],
      windowsVerbatimArguments: true,
    };
  }
  // `exec` so the command itself (not a shell around it) is the process we kill.
  return { file: '/bin/sh', args: ['-c', `exec ${command}`] };
}

export interface ProxyExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** The last lines it wrote to stderr. */
  readonly stderr: string;
}

/** Why the connection could not be made, when the proxy command ended before it was. */
export function proxyExitError(command: string, exit: ProxyExit): { kind: TransportErrorKind; message: string } {
  const said = exit.stderr.trim();
  const kind: TransportErrorKind = /refused/i.test(said)
    ? 'refused'
    : /could not resolve|name or service not known|not known|no address associated/i.test(said)
      ? 'dns'
      : /timed out|timeout/i.test(said)
        ? 'timeout'
        : /host key verification failed|remote host identification has changed/i.test(said)
          ? 'host-key-rejected'
          : /permission denied/i.test(said)
            ? 'auth'
            : 'other';
  return {
    kind,
    message: proxyCommandEnded(command, exit, said),
  };
}

export interface ProxyProcess {
  /** The child's stdout (reads) and stdin (writes) as one stream, for ssh2's `sock`. */
  readonly sock: Duplex;
  readonly pid?: number;
  /** Settles once the command has exited (never rejects). */
  readonly exited: Promise<ProxyExit>;
  /** The exit, once it happened. */
  readonly exit: ProxyExit | undefined;
  /** SIGTERM, then SIGKILL after 2 s. */
  kill(): void;
}

class ChildSocket extends Duplex {
  constructor(private readonly child: ChildProcess) {
    super();
    const out = child.stdout!;
    out.on('data', (d: Buffer) => {
      if (!this.push(d)) out.pause();
    });
    out.on('end', () => this.push(null));
    out.on('error', (err) => this.destroy(err));
    child.stdin!.on('error', (err) => this.destroy(err)); // EPIPE once the command is gone
  }

  override _read(): void {
    this.child.stdout!.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.child.stdin!.destroyed) return cb(new ProxyCommandGoneError(PROXY_COMMAND_GONE));
    this.child.stdin!.write(chunk, (err) => cb(err ?? null));
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.child.stdin!.end();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.child.stdin!.destroyed) this.child.stdin!.destroy();
    cb(err);
  }
}

const STDERR_KEEP = 2000;

/** Starts the command; `log` receives each stderr line. */
export function spawnProxyCommand(
  command: string,
  options: { platform?: NodeJS.Platform; log?: (line: string) => void } = {},
): ProxyProcess {
  const spec = proxyCommandSpawn(command, options.platform ?? process.platform, process.env);
  const child = spawn(spec.file, [...spec.args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
    windowsVerbatimArguments: spec.windowsVerbatimArguments,
  });
  let stderr = '';
  let partial = '';
  child.stderr!.on('data', (d: Buffer) => {
    const text = d.toString('utf8');
    stderr = (stderr + text).slice(-STDERR_KEEP);
    const lines = (partial + text).split(/\r?\n/);
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) options.log?.(l);
  });
  let exit: ProxyExit | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const exited = new Promise<ProxyExit>((resolve) => {
    const done = (code: number | null, signal: string | null) => {
      if (exit) return;
      if (partial.trim()) options.log?.(partial);
      exit = { code, signal, stderr };
      if (killTimer) clearTimeout(killTimer);
      resolve(exit);
    };
    child.on('error', (err) => {
      stderr = (stderr + err.message).slice(-STDERR_KEEP);
      done(null, null);
    });
    child.on('close', (code, signal) => done(code, signal));
  });
  const sock = new ChildSocket(child);
  return {
    sock,
    pid: child.pid,
    exited,
    get exit() {
      return exit;
    },
    kill: () => {
      if (exit || child.exitCode !== null || child.signalCode !== null) return;
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
      killTimer ??= setTimeout(() => {
        try {
          child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }, 2000);
      killTimer.unref();
    },
  };
}
