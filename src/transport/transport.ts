import type { Readable } from 'node:stream';
import type { ClientChoice } from './openssh/chooseClient';

/** Output of one remote command. `code` is null when the command was ended by a signal. */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  readonly signal?: string;
}

export interface ExecOptions {
  /** Kill the remote command and reject after this long. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Cap on captured stdout bytes; the rest is dropped (and `truncated` noted in stderr). */
  readonly maxOutputBytes?: number;
  /**
   * Written to the command's standard input, which is then closed (end of file). Without it the
   * command's stdin stays as it always was (an SSH channel's stays open, a local one reads nothing).
   * Use it for file contents, so they never appear on a command line (`sudo -n tee -- FILE`).
   */
  readonly stdin?: string;
}

/**
 * On the error of a command that timed out or was aborted: its result is given up at once, but
 * its channel stays open until the command is killed; this resolves once the channel has closed.
 */
export interface ChannelHeld {
  readonly channelClosed?: Promise<void>;
}

/** A long-running remote command (journalctl -f). Lines arrive without their trailing "\n". */
export interface RemoteProcess {
  /** Resolves with the exit code (null when killed or the connection dropped). */
  readonly exited: Promise<number | null>;
  kill(): void;
}

export type ConnectionState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'connecting'; readonly attempt: number }
  | { readonly kind: 'connected' }
  | {
      readonly kind: 'down';
      readonly error: string;
      readonly errorKind?: TransportErrorKind;
      readonly retryInMs?: number;
    }
  | { readonly kind: 'closed' };

/** One kind of fault a user must be told apart from the others. */
export type TransportErrorKind =
  | 'dns'
  | 'refused'
  | 'timeout'
  /** One remote command ran too long: the connection itself may be fine. */
  | 'command-timeout'
  | 'auth'
  | 'host-key-unknown'
  | 'host-key-changed'
  | 'host-key-rejected'
  | 'sudo-password'
  | 'closed'
  | 'config'
  | 'other';

/** What a refused, changed host key was, for a message that lets the user act on it. */
export interface HostKeyChange {
  readonly host: string;
  /** SHA256 fingerprint the server offered. */
  readonly offered: string;
  /** SHA256 fingerprints recorded for the host in the known-hosts file. */
  readonly known: readonly string[];
  readonly file: string;
  /** 1-based line numbers of those records. */
  readonly lines: readonly number[];
}

export class TransportError extends Error {
  constructor(
    readonly kind: TransportErrorKind,
    message: string,
    readonly hostKeyChange?: HostKeyChange,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** Something that opens a TCP stream to host:port as seen from the GPU host. */
export type StreamOpener = (host: string, port: number) => Promise<NodeJS.ReadWriteStream & Readable>;

/**
 * How the extension reaches the GPU host: one SSH connection (reused, reconnected with
 * backoff) or, for `host: "local"`, this machine's own processes and sockets.
 * Transports know nothing of VS Code.
 */
export interface Transport {
  readonly description: string;
  readonly state: ConnectionState;
  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void };
  /** Connects if needed; rejects with a TransportError. Concurrent calls share one attempt. */
  connect(): Promise<void>;
  /** Runs `command` in the remote shell. The command must already be quoted (see shell.ts). */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Runs a long-lived command and hands each stdout line to `onLine`. */
  stream(command: string, onLine: (line: string) => void, onStderr?: (line: string) => void): Promise<RemoteProcess>;
  /** Opens a TCP stream to host:port from the GPU host (ssh2 forwardOut, or a local socket). */
  openStream: StreamOpener;
  /** Number of SSH handshakes completed so far (benchmarks). */
  readonly handshakes: number;
  /** SSH channels open now, of every kind (benchmarks: bench:soak); absent where there are none. */
  readonly openChannels?: number;
  /** Which SSH client carries the connection and why it was chosen; absent for local processes. */
  readonly client?: ClientChoice;
  dispose(): void;
}
