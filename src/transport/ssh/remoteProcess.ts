/**
 * Commands on the GPU host over the live connection: run to completion (exec), followed line by
 * line (stream), and stopped by their process group where sshd ignores signals.
 */
import type { Client, ClientChannel } from 'ssh2';
import { CappedBuffer, DEFAULT_MAX_OUTPUT_BYTES, finishOutput, AnnouncedOutput, LineSplitter } from '../lines';
import { announcePid, announcePidEndingWithStdin, killGroupCommand } from '../shell';
import { noop, type Timers } from './sshOptions';
import { type ChannelHeld, type ExecOptions, type ExecResult, type RemoteProcess } from '../transport';
import { ConnectionClosedError } from '../errors';
import { commandDeadline } from '../commandDeadline';
import { cannotRun, connectionDown, lostWhileRunning } from '../../present/words/sshWords';

/** How long a stream stopped by EOF may take to end before its process group is killed. */
const STDIN_STOP_GRACE_MS = 3000;

/** The transport's state that its commands read and add to. */
export interface RemoteContext {
  readonly description: string;
  readonly timers: Timers;
  /** Open channels (closed on dispose). */
  readonly channels: Set<ClientChannel>;
  /** Killable commands still running (see startRemote). */
  readonly runs: Set<RemoteRun>;
  /** The GPU host's client of the live connection, if any: a command on another one was cut off. */
  currentClient(): Client | undefined;
}

export interface RemoteRun {
  readonly channel: ClientChannel;
  /** The channel has closed. */
  readonly closed: boolean;
  /** Receives stdout (without the pid announcement); set once, before data flows. */
  onStdout(fn: (d: Buffer) => void): void;
  /** Ends the command (process group kill, then channel close); resolves once that is done. */
  stop(signal: 'TERM' | 'KILL'): Promise<void>;
}

/** Runs a command to completion on `client`; a timeout or an abort stops its process group. */
export async function execRemote(
  ctx: RemoteContext,
  client: Client,
  command: string,
  options: ExecOptions = {},
): Promise<ExecResult> {
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const killable = options.timeoutMs !== undefined || options.signal !== undefined;
  const run = await startRemote(ctx, client, command, killable ? 'killable' : 'plain');
  return new Promise<ExecResult>((resolve, reject) => {
    const stdout = new CappedBuffer(maxBytes);
    const stderr = new CappedBuffer(maxBytes);
    let exit: { code: number | null; signal?: string } | undefined;
    // Reject at once: a wedged channel must not hold the caller past its deadline. The channel
    // stays open until the kill is done: the error says when it has closed (channelLimit.ts).
    const end = commandDeadline(ctx.timers, options, (err) => {
      const closed = new Promise<void>((resolve) => {
        if (run.closed) resolve();
        else run.channel.once('close', () => resolve());
      });
      void run.stop('KILL');
      reject(Object.assign(err, { channelClosed: closed } satisfies ChannelHeld));
    });
    run.onStdout((d) => stdout.push(d));
    run.channel.stderr.on('data', (d: Buffer) => stderr.push(d));
    run.channel.on('exit', (code: number | null, signal?: string) => {
      exit = { code: typeof code === 'number' ? code : null, signal: signal ?? undefined };
    });
    // The text, then EOF on the command's stdin; without the option the channel's stdin stays
    // open as before (a command that reads it waits, as under `ssh host cmd`).
    if (options.stdin !== undefined && !end.settled) run.channel.end(options.stdin);
    // ssh2 also hands the exit status to 'close': a status read with the channel's opening
    // (before the 'exit' listener above existed) is not lost.
    run.channel.on('close', (code?: number | null, signal?: string) => {
      if (!exit && code !== undefined)
        exit = { code: typeof code === 'number' ? code : null, signal: signal ?? undefined };
      if (!end.finish()) return;
      if (!exit && ctx.currentClient() !== client) {
        return reject(new ConnectionClosedError(lostWhileRunning(ctx.description)));
      }
      resolve({
        ...finishOutput(stdout, stderr),
        code: exit?.code ?? null,
        ...(exit?.signal ? { signal: exit.signal } : {}),
      });
    });
  });
}

/** Follows a command's output line by line; kill() ends it (EOF on its stdin, then its process group). */
export async function streamRemote(
  ctx: RemoteContext,
  client: Client,
  command: string,
  onLine: (line: string) => void,
  onStderr?: (line: string) => void,
): Promise<RemoteProcess> {
  const run = await startRemote(ctx, client, command, 'ends with stdin');
  const out = new LineSplitter(onLine);
  const err = new LineSplitter(onStderr ?? noop);
  let code: number | null = null;
  let killed = false;
  run.onStdout((d) => out.push(d));
  run.channel.stderr.on('data', (d: Buffer) => err.push(d));
  run.channel.on('exit', (c: number | null) => {
    code = typeof c === 'number' && !killed ? c : null;
  });
  const exited = new Promise<number | null>((resolve) => {
    run.channel.on('close', (c?: number | null) => {
      if (code === null && typeof c === 'number' && !killed) code = c;
      out.end();
      err.end();
      resolve(killed ? null : code);
    });
  });
  return {
    exited,
    kill: () => {
      if (killed) return;
      killed = true;
      void run.stop('TERM');
    },
  };
}

/**
 * Starts a command. When `killable`, it announces its process group first (see announcePid)
 * so `stop` can end it even where sshd ignores signal requests (root sessions). A command that
 * `ends with stdin` is stopped by EOF on its stdin, with no second command; the group kill is
 * only the fallback when it has not ended after STDIN_STOP_GRACE_MS.
 */
async function startRemote(
  ctx: RemoteContext,
  client: Client,
  command: string,
  kind: 'plain' | 'killable' | 'ends with stdin',
): Promise<RemoteRun> {
  const killable = kind !== 'plain';
  const wrapped =
    kind === 'plain' ? command : kind === 'killable' ? announcePid(command) : announcePidEndingWithStdin(command);
  const channel = await openExec(ctx, client, wrapped);
  let closed = false;
  let stopping: Promise<void> | undefined;
  const out = new AnnouncedOutput(killable);
  channel.on('data', (d: Buffer) => out.push(d));

  const run: RemoteRun = {
    channel,
    get closed() {
      return closed;
    },
    onStdout: (fn) => out.read(fn),
    stop: (signal) => {
      if (closed) return Promise.resolve();
      try {
        channel.signal(signal);
      } catch {
        // not open any more
      }
      if (!killable || ctx.currentClient() !== client) {
        channel.close();
        return Promise.resolve();
      }
      if (kind === 'ends with stdin') {
        stopping ??= new Promise<void>((resolve) => {
          let fallback: unknown;
          channel.once('close', () => {
            if (fallback !== undefined) ctx.timers.clearTimeout(fallback);
            resolve();
          });
          try {
            channel.end();
          } catch {
            // not open any more
          }
          fallback = ctx.timers.setTimeout(() => {
            if (out.pgid === undefined) channel.close();
            else void execQuietly(client, killGroupCommand(out.pgid, signal)).then(() => channel.close());
          }, STDIN_STOP_GRACE_MS);
        });
        return stopping;
      }
      stopping ??= new Promise<void>((resolve) => {
        const killAndClose = (group: number) => {
          out.onPgid = undefined;
          void execQuietly(client, killGroupCommand(group, signal)).then(() => {
            channel.close();
            resolve();
          });
        };
        // Stopped before the command announced itself: kill as soon as it does, or give up
        // waiting and just close the channel.
        let fallback: unknown;
        channel.once('close', () => {
          if (fallback !== undefined) ctx.timers.clearTimeout(fallback);
          resolve();
        });
        if (out.pgid !== undefined) killAndClose(out.pgid);
        else {
          out.onPgid = killAndClose;
          fallback = ctx.timers.setTimeout(() => channel.close(), 5000);
        }
      });
      return stopping;
    },
  };
  if (killable) ctx.runs.add(run);
  channel.on('close', () => {
    closed = true;
    ctx.runs.delete(run);
  });
  return run;
}

/** Runs a fire-and-forget helper command; resolves when it is over, never rejects. */
function execQuietly(client: Client, command: string): Promise<void> {
  return new Promise((resolve) => {
    try {
      client.exec(command, (err, ch) => {
        if (err) return resolve();
        ch.on('data', noop).on('close', () => resolve());
        ch.stderr.on('data', noop);
      });
    } catch {
      resolve();
    }
  });
}

function openExec(ctx: RemoteContext, client: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      client.exec(command, (err, channel) => {
        if (err) return reject(new ConnectionClosedError(cannotRun(ctx.description, err.message)));
        ctx.channels.add(channel);
        channel.once('close', () => ctx.channels.delete(channel));
        resolve(channel);
      });
    } catch (err) {
      reject(new ConnectionClosedError(connectionDown(ctx.description, (err as Error).message)));
    }
  });
}
