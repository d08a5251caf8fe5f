/**
 * Commands and TCP streams over the master: each one an `ssh` client process of the control
 * socket. A command that must be stoppable announces its process group first (shell.ts), and is
 * stopped by a second command that kills that group, as over ssh2 (sshd sends no signal to a
 * session without a terminal).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Duplex } from 'node:stream';
import { CappedBuffer, DEFAULT_MAX_OUTPUT_BYTES, finishOutput, AnnouncedOutput, LineSplitter } from '../lines';
import { announcePid, announcePidEndingWithStdin, killGroupCommand } from '../shell';
import { channelOpenError } from '../ssh/sshErrors';
import type { Timers } from '../ssh/sshOptions';
import type { ChannelHeld, ExecOptions, ExecResult, RemoteProcess } from '../transport';
import { ChannelOpenError, ConnectionClosedError } from '../errors';
import { commandDeadline } from '../commandDeadline';
import { masterGone } from '../../present/words/sshWords';

const STDIN_STOP_GRACE_MS = 3000;
/** The name the clients give: the master ignores it (every client is `-F none` over its socket). */
const MUX_HOST = 'kimi-mux';

export interface MuxContext {
  readonly description: string;
  readonly sshPath: string;
  readonly timers: Timers;
  /** Arguments that make a client use the master only (controlMaster.ts muxClientArgs). */
  readonly muxArgs: readonly string[];
  /** Client processes alive (killed on dispose). */
  readonly children: Set<ChildProcess>;
  /** Stoppable commands still running. */
  readonly runs: Set<MuxRun>;
  /** A client failed to reach the master: the transport checks whether it is gone. */
  masterUnreachable(): void;
  /** The master's log from a byte offset, and its size now (for a stream's refusal). */
  logSince(offset: number): string;
  logSize(): number;
}

export interface MuxRun {
  readonly child: ChildProcess;
  stop(signal: 'TERM' | 'KILL'): Promise<void>;
}

/** Stderr of a client that never reached the master (its ProxyCommand /bin/false ran instead). */
export function isMuxFailure(code: number | null, stderr: string): boolean {
  return (
    code === 255 &&
    /kex_exchange_identification|Connection closed by UNKNOWN|Control socket connect|mux_client|ControlSocket .* already exists|read from master failed/i.test(
      stderr,
    )
  );
}

function spawnClient(ctx: MuxContext, extra: readonly string[]): ChildProcess {
  const child = spawn(ctx.sshPath, [...ctx.muxArgs, ...extra], { stdio: ['pipe', 'pipe', 'pipe'] });
  ctx.children.add(child);
  child.on('close', () => ctx.children.delete(child));
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  return child;
}

function spawnCommand(ctx: MuxContext, command: string): ChildProcess {
  return spawnClient(ctx, ['-T', '--', MUX_HOST, command]);
}

/** `ssh -O forward|cancel -L SPEC` to the master: its exit code and what it said. Never rejects. */
export function muxForwardControl(
  ctx: MuxContext,
  op: 'forward' | 'cancel',
  spec: string,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnClient(ctx, ['-O', op, '-L', spec, '--', MUX_HOST]);
    let stderr = '';
    child.stdin!.end();
    child.stdout!.resume();
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    child.on('close', (code) => resolve({ code, stderr }));
    child.on('error', (err) => resolve({ code: null, stderr: err.message }));
  });
}

/** Runs a helper command to its end; never rejects. */
function runQuietly(ctx: MuxContext, command: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawnCommand(ctx, command);
    child.stdin!.end();
    child.stdout!.resume();
    child.stderr!.resume();
    child.on('close', () => resolve());
    child.on('error', () => resolve());
  });
}

interface Started {
  readonly child: ChildProcess;
  readonly stderr: CappedBuffer;
  /** Set once the client has exited: its code, and whether it never reached the master. */
  readonly closed: Promise<{ code: number | null; lost: boolean }>;
  readonly run: MuxRun;
  onStdout(fn: (d: Buffer) => void): void;
}

function start(
  ctx: MuxContext,
  command: string,
  kind: 'plain' | 'killable' | 'ends with stdin',
  maxBytes: number,
): Started {
  const killable = kind !== 'plain';
  const wrapped =
    kind === 'plain' ? command : kind === 'killable' ? announcePid(command) : announcePidEndingWithStdin(command);
  const child = spawnCommand(ctx, wrapped);
  const stderr = new CappedBuffer(maxBytes);
  let stderrText = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr.push(d);
    if (stderrText.length < 4096) stderrText += d.toString('utf8');
  });
  const out = new AnnouncedOutput(killable);
  child.stdout!.on('data', (d: Buffer) => out.push(d));
  let exited = false;
  const closed = new Promise<{ code: number | null; lost: boolean }>((resolve) => {
    child.on('close', (code) => {
      exited = true;
      ctx.runs.delete(run);
      const lost = isMuxFailure(code, stderrText);
      if (lost) ctx.masterUnreachable();
      resolve({ code, lost });
    });
    child.on('error', (err) => {
      exited = true;
      ctx.runs.delete(run);
      stderrText += err.message;
      resolve({ code: null, lost: true });
    });
  });
  let stopping: Promise<void> | undefined;
  const killLocal = () => {
    if (!exited) child.kill('SIGTERM');
  };
  const run: MuxRun = {
    child,
    stop: (signal) => {
      if (exited) return Promise.resolve();
      stopping ??= new Promise<void>((resolve) => {
        let fallback: unknown;
        void closed.then(() => {
          if (fallback !== undefined) ctx.timers.clearTimeout(fallback);
          resolve();
        });
        const killGroup = (group: number) => {
          out.onPgid = undefined;
          void runQuietly(ctx, killGroupCommand(group, signal)).then(killLocal);
        };
        if (!killable) return killLocal();
        if (kind === 'ends with stdin') {
          child.stdin!.end();
          fallback = ctx.timers.setTimeout(
            () => (out.pgid === undefined ? killLocal() : killGroup(out.pgid)),
            STDIN_STOP_GRACE_MS,
          );
          return;
        }
        if (out.pgid !== undefined) killGroup(out.pgid);
        else {
          out.onPgid = killGroup;
          fallback = ctx.timers.setTimeout(killLocal, 5000);
        }
      });
      return stopping;
    },
  };
  if (killable) ctx.runs.add(run);
  return {
    child,
    stderr,
    closed,
    run,
    onStdout: (fn) => out.read(fn),
  };
}

export function execMux(ctx: MuxContext, command: string, options: ExecOptions = {}): Promise<ExecResult> {
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const killable = options.timeoutMs !== undefined || options.signal !== undefined;
  const s = start(ctx, command, killable ? 'killable' : 'plain', maxBytes);
  const stdout = new CappedBuffer(maxBytes);
  s.onStdout((d) => stdout.push(d));
  return new Promise<ExecResult>((resolve, reject) => {
    const end = commandDeadline(ctx.timers, options, (err) => {
      const channelClosed = s.closed.then(() => undefined);
      void s.run.stop('KILL');
      reject(Object.assign(err, { channelClosed } satisfies ChannelHeld));
    });
    if (options.stdin !== undefined && !end.settled) s.child.stdin!.end(options.stdin);
    void s.closed.then(({ code, lost }) => {
      if (!end.finish()) return;
      if (lost) return reject(new ConnectionClosedError(masterGone(ctx.description)));
      resolve({ ...finishOutput(stdout, s.stderr), code });
    });
  });
}

export function streamMux(
  ctx: MuxContext,
  command: string,
  onLine: (line: string) => void,
  onStderr?: (line: string) => void,
): RemoteProcess {
  const s = start(ctx, command, 'ends with stdin', DEFAULT_MAX_OUTPUT_BYTES);
  const out = new LineSplitter(onLine);
  const err = new LineSplitter(onStderr ?? (() => undefined));
  s.onStdout((d) => out.push(d));
  s.child.stderr!.on('data', (d: Buffer) => err.push(d));
  let killed = false;
  const exited = s.closed.then(({ code, lost }) => {
    out.end();
    err.end();
    return killed || lost ? null : code;
  });
  return {
    exited,
    kill: () => {
      if (killed) return;
      killed = true;
      void s.run.stop('TERM');
    },
  };
}

/** `host:port` as ssh's -W and -L take it (`[v6]:port`); refuses what is not a host and a port. */
export function streamTarget(host: string, port: number): string {
  if (!/^[A-Za-z0-9.:_-]+$/.test(host) || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new ChannelOpenError(`Not a host and port to connect to: ${host}:${port}`, 'ENOTFOUND');
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The reason the master logged for a channel it could not open, since byte `from` of its log. */
export function openFailure(ctx: Pick<MuxContext, 'logSince'>, from: number): string | undefined {
  return /open failed: ([^\n]*)/.exec(ctx.logSince(from))?.[1];
}

/** A TCP stream to host:port from the GPU host: `ssh -W` over the master. */
export function openMuxStream(ctx: MuxContext, host: string, port: number): Duplex {
  const target = streamTarget(host, port);
  const from = ctx.logSize();
  const child = spawnClient(ctx, ['-W', target, '--', MUX_HOST]);
  let stderrText = '';
  child.stderr!.on('data', (d: Buffer) => {
    if (stderrText.length < 4096) stderrText += d.toString('utf8');
  });
  // The end of the stream waits for the client's exit: a refused channel is an error, not an EOF.
  return new ChildStream(child, (code) => {
    if (code === 0 || code === null) return undefined;
    if (isMuxFailure(code, stderrText)) {
      ctx.masterUnreachable();
      return new ConnectionClosedError(masterGone(ctx.description));
    }
    // The client only says "Session open refused by peer"; the master's log has the reason.
    const why = openFailure(ctx, from) ?? stderrText.trim();
    return channelOpenError({ message: why }, host, port);
  });
}

/** A TCP stream carried by a client's stdin and stdout; destroying it ends the client. */
class ChildStream extends Duplex {
  constructor(
    private readonly child: ChildProcess,
    failure: (code: number | null) => Error | undefined,
  ) {
    super();
    child.stdout!.on('data', (d: Buffer) => {
      if (!this.push(d)) child.stdout!.pause();
    });
    child.on('close', (code) => {
      if (this.destroyed) return;
      const err = failure(code);
      if (err) this.destroy(err);
      else this.push(null);
    });
  }

  override _read(): void {
    this.child.stdout!.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.child.stdin!.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.child.stdin!.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    callback(error);
  }
}
