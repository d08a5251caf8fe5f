/**
 * TCP streams from the GPU host without a local process each: the master itself listens on a unix
 * socket in the transport's own folder (`ssh -O forward -L SOCKET:host:port`, one per host:port)
 * and opens a channel for every connection made to it, as ssh2's forwardOut does in process.
 * The folder is 0700 and the socket 0600 (OpenSSH's StreamLocalBindMask), so no other local user
 * can reach it, unlike a 127.0.0.1 port. A forward no stream has used for `idleMs` is cancelled
 * (`-O cancel`); one made for a master that has since died is forgotten and made again over the
 * next. When the master will not make one (an old OpenSSH, a path too long for a socket), that
 * host:port goes on with an `ssh -W` process per stream.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Duplex } from 'node:stream';
import { channelOpenError } from '../ssh/sshErrors';
import { ConnectionClosedError } from '../errors';
import { masterGone } from '../../present/words/sshWords';
import { forwardRefused, forwardSocketUnusable } from '../../present/words/connectionWords';
import { isAlive } from './controlMaster';
import { muxForwardControl, openFailure, openMuxStream, streamTarget, type MuxContext } from './muxProcess';

/** How long a forward outlives its last stream: a watch polls far more often than this. */
export const FORWARD_IDLE_MS = 30_000;
/** The longest unix socket path Linux and macOS accept (sun_path less its NUL). */
const MAX_SOCKET_PATH = 103;

export interface ForwardsContext {
  readonly mux: MuxContext;
  /** The transport's own folder, where the sockets are made. */
  readonly dir: string;
  /** The master's pid now: forwards belong to one master. */
  masterPid(): number | undefined;
  readonly idleMs?: number;
  readonly log: (message: string) => void;
}

interface Forward {
  readonly spec: string;
  readonly socket: string;
  /** Resolves once the master listens (true), or false when it would not: streams go through -W. */
  readonly made: Promise<boolean>;
  streams: number;
  idle?: unknown;
}

export class LocalForwards {
  private readonly forwards = new Map<string, Forward>();
  private readonly open = new Set<ForwardedStream>();
  private master: number | undefined;
  private made = 0;
  private disposed = false;

  constructor(private readonly ctx: ForwardsContext) {}

  /** Streams carried by a forward now. */
  get streams(): number {
    return this.open.size;
  }

  /** Forwards the master holds now (tests, benchmarks). */
  get sockets(): string[] {
    return [...this.forwards.values()].map((f) => f.socket);
  }

  async openStream(host: string, port: number): Promise<Duplex> {
    const target = streamTarget(host, port);
    this.forgetIfMasterChanged();
    for (let attempt = 1; ; attempt++) {
      const f = this.forwardTo(target);
      f.streams++;
      this.stopIdle(f);
      let stream: ForwardedStream | undefined;
      try {
        if (!(await f.made)) return this.counted(f, openMuxStream(this.ctx.mux, host, port));
        stream = await ForwardedStream.connect(f.socket, this.ctx.mux, host, port);
      } catch (err) {
        this.release(f);
        throw err;
      }
      if (stream) {
        this.open.add(stream);
        stream.once('close', () => this.open.delete(stream));
        return this.counted(f, stream);
      }
      // Nobody listens on the socket: the master is gone, or no longer holds the forward (made once more).
      this.drop(f);
      this.release(f);
      this.ctx.mux.masterUnreachable();
      if (attempt > 1 || this.master === undefined || !isAlive(this.master))
        throw new ConnectionClosedError(masterGone(this.ctx.mux.description));
    }
  }

  /** Timers stopped and streams ended; the forwards themselves end with the master (`-O exit`). */
  dispose(): void {
    this.disposed = true;
    for (const f of this.forwards.values()) this.stopIdle(f);
    this.forwards.clear();
    for (const s of this.open) s.destroy();
    this.open.clear();
  }

  private counted(f: Forward, stream: Duplex): Duplex {
    stream.once('close', () => this.release(f));
    return stream;
  }

  private release(f: Forward): void {
    f.streams--;
    if (f.streams > 0 || this.disposed || this.forwards.get(targetOf(f)) !== f) return;
    f.idle = this.ctx.mux.timers.setTimeout(() => {
      f.idle = undefined;
      if (f.streams === 0 && this.forwards.get(targetOf(f)) === f) void this.cancel(f);
    }, this.ctx.idleMs ?? FORWARD_IDLE_MS);
  }

  private stopIdle(f: Forward): void {
    if (f.idle !== undefined) this.ctx.mux.timers.clearTimeout(f.idle);
    f.idle = undefined;
  }

  private drop(f: Forward): void {
    this.stopIdle(f);
    if (this.forwards.get(targetOf(f)) === f) this.forwards.delete(targetOf(f));
    fs.rmSync(f.socket, { force: true });
  }

  private forgetIfMasterChanged(): void {
    const pid = this.ctx.masterPid();
    if (pid === this.master) return;
    this.master = pid;
    // The old master's listeners died with it: their files go, and new forwards get new names.
    for (const f of this.forwards.values()) {
      this.stopIdle(f);
      fs.rmSync(f.socket, { force: true });
    }
    this.forwards.clear();
  }

  private forwardTo(target: string): Forward {
    const known = this.forwards.get(target);
    if (known) return known;
    const socket = path.join(this.ctx.dir, `f${++this.made}`);
    const spec = `${socket}:${target}`;
    const f: Forward = { spec, socket, made: this.make(spec, socket, target), streams: 0 };
    this.forwards.set(target, f);
    return f;
  }

  private async make(spec: string, socket: string, target: string): Promise<boolean> {
    // ssh splits -L on colons and spaces: a folder with either cannot hold a forward's socket.
    if (socket.length > MAX_SOCKET_PATH || /[:\s]/.test(socket)) {
      this.ctx.log(forwardSocketUnusable(this.ctx.mux.description, target, socket));
      return false;
    }
    const { code, stderr } = await muxForwardControl(this.ctx.mux, 'forward', spec);
    if (code === 0) return true;
    this.ctx.mux.masterUnreachable();
    this.ctx.log(forwardRefused(this.ctx.mux.description, target, stderr.trim() || `exit ${code}`));
    return false;
  }

  private async cancel(f: Forward): Promise<void> {
    this.forwards.delete(targetOf(f));
    if (!(await f.made)) return;
    await muxForwardControl(this.ctx.mux, 'cancel', f.spec);
    fs.rmSync(f.socket, { force: true });
  }
}

function targetOf(f: Forward): string {
  return f.spec.slice(f.socket.length + 1);
}

/**
 * A connection to a forward's socket as the stream to host:port. The master accepts it at once and
 * closes it when the host refuses the channel, having logged why ("open failed: ..."): a stream
 * closed before any byte arrived is that refusal, as an error (ssh2's forwardOut rejects alike).
 */
class ForwardedStream extends Duplex {
  private answered = false;
  private readonly refused: () => Error | undefined;

  /** The stream, or undefined when nothing listens on the socket. */
  static connect(
    socketPath: string,
    mux: MuxContext,
    host: string,
    port: number,
  ): Promise<ForwardedStream | undefined> {
    const from = mux.logSize();
    return new Promise((resolve) => {
      const socket = net.connect(socketPath);
      const failed = () => {
        socket.destroy();
        resolve(undefined);
      };
      socket.once('error', failed);
      socket.once('connect', () => {
        socket.off('error', failed);
        resolve(new ForwardedStream(socket, () => openFailure(mux, from), host, port));
      });
    });
  }

  private constructor(
    private readonly socket: net.Socket,
    refusal: () => string | undefined,
    host: string,
    port: number,
  ) {
    // Ended both ways once the host has ended it, as the connection to the socket is.
    super({ allowHalfOpen: false });
    socket.on('data', (d: Buffer) => {
      this.answered = true;
      if (!this.push(d)) socket.pause();
    });
    // Writing the request can meet the closed connection first (EPIPE): the refusal is said all the same.
    this.refused = () => {
      const why = this.answered ? undefined : refusal();
      return why !== undefined ? channelOpenError({ message: why }, host, port) : undefined;
    };
    socket.on('end', () => {
      const err = this.refused();
      if (err) this.destroy(err);
      else this.push(null);
    });
    socket.on('error', (err) => this.destroy(this.refused() ?? err));
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, (err) => callback(err ? (this.refused() ?? err) : undefined));
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.socket.writableEnded || this.socket.destroyed) callback();
    else this.socket.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }
}
