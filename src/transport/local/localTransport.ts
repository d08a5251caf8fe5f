/**
 * `host: "local"`: the window already runs on the GPU host. Commands run under /bin/sh in their
 * own process group (killed as a group), streams are plain TCP sockets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { Emitter } from '../../util/emitter';
import { CappedBuffer, DEFAULT_MAX_OUTPUT_BYTES, finishOutput, LineSplitter } from '../lines';
import {
  TransportError,
  type ConnectionState,
  type ExecOptions,
  type ExecResult,
  type RemoteProcess,
  type Transport,
} from '../transport';
import { CommandAbortedError, CommandTimeoutError, ConnectionClosedError } from '../errors';
import {
  cannotRunShell,
  COMMAND_ABORTED,
  commandTimedOut,
  LOCAL_TRANSPORT_DISPOSED,
} from '../../present/words/transportWords';

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

export class LocalTransport implements Transport {
  readonly description = 'local';
  readonly handshakes = 0;
  private _state: ConnectionState = { kind: 'connected' };
  private readonly stateChanged = new Emitter<ConnectionState>();
  private readonly children = new Set<ChildProcess>();
  private readonly sockets = new Set<net.Socket>();

  get state(): ConnectionState {
    return this._state;
  }

  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void } {
    return this.stateChanged.on(listener);
  }

  async connect(): Promise<void> {
    this.assertOpen();
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    const child = this.spawnShell(command, options.stdin !== undefined);
    const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const stdout = new CappedBuffer(maxBytes);
    const stderr = new CappedBuffer(maxBytes);
    return new Promise((resolve, reject) => {
      let failure: Error | undefined;
      let timer: NodeJS.Timeout | undefined;
      const stop = (err: Error) => {
        if (failure) return;
        failure = err;
        killGroup(child, 'SIGKILL');
      };
      const onAbort = () => stop(new CommandAbortedError(COMMAND_ABORTED));
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => stop(new CommandTimeoutError(commandTimedOut(options.timeoutMs!))), options.timeoutMs);
      }
      if (options.signal) {
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }
      child.stdout!.on('data', (d: Buffer) => stdout.push(d));
      child.stderr!.on('data', (d: Buffer) => stderr.push(d));
      if (options.stdin !== undefined) {
        // EPIPE when the command exits without reading it all: its exit status says what happened.
        child.stdin!.on('error', () => undefined);
        child.stdin!.end(options.stdin);
      }
      child.on('error', (err) => stop(new TransportError('other', cannotRunShell(err.message))));
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (failure) return reject(failure);
        resolve({ ...finishOutput(stdout, stderr), code, ...(signal ? { signal: signal.replace(/^SIG/, '') } : {}) });
      });
    });
  }

  async stream(
    command: string,
    onLine: (line: string) => void,
    onStderr?: (line: string) => void,
  ): Promise<RemoteProcess> {
    this.assertOpen();
    const child = this.spawnShell(command);
    const out = new LineSplitter(onLine);
    const err = new LineSplitter(onStderr ?? (() => undefined));
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    const exited = new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('close', (code) => {
        out.end();
        err.end();
        resolve(code);
      });
    });
    return { exited, kill: () => killGroup(child, 'SIGTERM') };
  }

  openStream = (host: string, port: number): Promise<NodeJS.ReadWriteStream & Duplex> => {
    this.assertOpen();
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.once('connect', () => {
        socket.removeListener('error', reject);
        resolve(socket);
      });
      socket.once('error', reject); // carries Node's own code (ECONNREFUSED ...)
    });
  };

  dispose(): void {
    if (this._state.kind === 'closed') return;
    for (const child of this.children) killGroup(child, 'SIGKILL');
    for (const socket of this.sockets) socket.destroy();
    this._state = { kind: 'closed' };
    this.stateChanged.fire(this._state);
    this.stateChanged.dispose();
  }

  private assertOpen(): void {
    if (this._state.kind === 'closed') throw new ConnectionClosedError(LOCAL_TRANSPORT_DISPOSED);
  }

  private spawnShell(command: string, withStdin = false): ChildProcess {
    // detached: its own process group, so a kill reaches the command's children too.
    const child = spawn('/bin/sh', ['-c', command], {
      stdio: [withStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    child.once('error', () => this.children.delete(child));
    return child;
  }
}
