/**
 * The life of one connection, whatever carries it (an ssh2 client chain, an OpenSSH master):
 * its state and listeners, one attempt at a time, reconnect with backoff after a drop, the
 * words said on connecting, failing and losing it, and `ready()` failing fast while it is down.
 * A transport holds one and gives it the two things that differ: how to dial a link, and what
 * to do with a link once it is up (watch it for a drop, then call `lost`).
 */
import { Emitter } from '../util/emitter';
import { ConnectionClosedError } from './errors';
import { backoffDelay, isFatal } from './ssh/sshErrors';
import { noop, type Timers } from './ssh/sshOptions';
import { TransportError, type ConnectionState, type TransportErrorKind } from './transport';
import { connectionDisposed, connectionDown, connectionReconnecting } from '../present/words/sshWords';
import { connected, connecting, connectionFailed, connectionLost } from '../present/words/connectionWords';

export interface ConnectionLifeOptions<L> {
  /** Named in every sentence: "user@host:port". */
  readonly description: string;
  readonly timers: Timers;
  readonly log: (message: string) => void;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** Opens a link; `attempt` counts from 1 over the transport's life. */
  dial(attempt: number): Promise<L>;
  /** Said before the first attempt only (what the configuration decided). */
  beforeFirstAttempt?(): void;
  /** The link is up and live: watch it for a drop. */
  onConnected(link: L): void;
  /** Words after "Connected to X" ("(ControlMaster pid 12)"); none by default. */
  connectedNote?(link: L): string;
  /** A link that arrived after dispose: end it. */
  discard?(link: L): void;
}

/** The error `ready()` fails with while the connection is down or being retried. Pure. */
export function downMessage(description: string, state: ConnectionState): string {
  return state.kind === 'down'
    ? connectionDown(description, state.error, state.retryInMs)
    : connectionReconnecting(description);
}

/**
 * Hangs up once the commands' stops are done (their kills go over the connection), a second later
 * at most; at once when there is none.
 */
export function endAfterStops(stops: readonly Promise<void>[], endAll: () => void): void {
  if (stops.length === 0) return endAll();
  const grace = setTimeout(endAll, 1000);
  grace.unref();
  void Promise.all(stops).then(() => {
    clearTimeout(grace);
    endAll();
  });
}

export class ConnectionLife<L> {
  private _state: ConnectionState = { kind: 'idle' };
  // A listener's bug must not break the transport.
  private readonly stateChanged = new Emitter<ConnectionState>(noop);
  private link: L | undefined;
  private attempt?: Promise<void>;
  private attempts = 0;
  private retryHandle: unknown;
  private failuresSinceConnected = 0;
  private everConnected = false;
  private _disposed = false;
  private _handshakes = 0;

  constructor(private readonly options: ConnectionLifeOptions<L>) {}

  get state(): ConnectionState {
    return this._state;
  }

  get handshakes(): number {
    return this._handshakes;
  }

  get disposed(): boolean {
    return this._disposed;
  }

  /** The live link; undefined while not connected. */
  get current(): L | undefined {
    return this.link;
  }

  onStateChange(listener: (state: ConnectionState) => void): { dispose(): void } {
    return this.stateChanged.on(listener);
  }

  connect(): Promise<void> {
    if (this._disposed) return Promise.reject(this.disposedError());
    if (this.link !== undefined) return Promise.resolve();
    if (this.attempt) return this.attempt;
    this.cancelRetry();
    return this.startAttempt();
  }

  /** The live link, connecting first if we never connected; fails fast while down. */
  async ready(): Promise<L> {
    if (this._disposed) throw this.disposedError();
    if (this.link === undefined) {
      if (this.everConnected || this._state.kind === 'down')
        throw new ConnectionClosedError(downMessage(this.options.description, this._state));
      await this.connect();
    }
    const link = this.link;
    if (link === undefined) throw new ConnectionClosedError(connectionDown(this.options.description));
    return link;
  }

  /**
   * `link` is gone: forgotten, said, and retried with backoff. False (nothing done) when it is not
   * the live link: already handled, or disposed.
   */
  lost(link: L, why: string): boolean {
    if (this.link !== link || this.link === undefined) return false;
    this.link = undefined;
    this.options.log(connectionLost(this.options.description, why));
    if (!this._disposed) this.scheduleRetry(`Connection lost: ${why}`);
    return true;
  }

  /**
   * Ends the life: no more retries; `release` gets the live link (if any) to end it and what runs
   * over it; then the state is closed and the listeners are dropped.
   */
  dispose(release: (link: L | undefined) => void): void {
    if (this._disposed) return;
    this._disposed = true;
    this.cancelRetry();
    const link = this.link;
    this.link = undefined;
    release(link);
    this.setState({ kind: 'closed' });
    this.stateChanged.dispose();
  }

  disposedError(): ConnectionClosedError {
    return new ConnectionClosedError(connectionDisposed(this.options.description));
  }

  private setState(state: ConnectionState): void {
    this._state = state;
    this.stateChanged.fire(state);
  }

  private cancelRetry(): void {
    if (this.retryHandle !== undefined) this.options.timers.clearTimeout(this.retryHandle);
    this.retryHandle = undefined;
  }

  private startAttempt(): Promise<void> {
    const o = this.options;
    const n = ++this.attempts;
    this.setState({ kind: 'connecting', attempt: n });
    if (n === 1) o.beforeFirstAttempt?.();
    o.log(connecting(o.description, n));
    const p = o.dial(n).then(
      (link) => {
        if (this._disposed) {
          o.discard?.(link);
          throw this.disposedError();
        }
        this.link = link;
        this._handshakes++;
        this.everConnected = true;
        this.failuresSinceConnected = 0;
        o.onConnected(link);
        const note = o.connectedNote?.(link);
        o.log(connected(o.description, note));
        this.setState({ kind: 'connected' });
      },
      (err: unknown) => {
        const te = err instanceof TransportError ? err : new TransportError('other', String(err));
        o.log(connectionFailed(o.description, te.message));
        if (!this._disposed) {
          if (this.everConnected && !isFatal(te)) this.scheduleRetry(te.message, te.kind);
          else this.setState({ kind: 'down', error: te.message, errorKind: te.kind });
        }
        throw te;
      },
    );
    this.attempt = p.finally(() => {
      if (this.attempt === tracked) this.attempt = undefined;
    });
    const tracked = this.attempt;
    return tracked;
  }

  private scheduleRetry(reason: string, errorKind?: TransportErrorKind): void {
    const delay = backoffDelay(
      this.failuresSinceConnected++,
      this.options.backoffInitialMs ?? 1000,
      this.options.backoffMaxMs ?? 30_000,
    );
    this.setState({ kind: 'down', error: reason, retryInMs: delay, ...(errorKind ? { errorKind } : {}) });
    this.cancelRetry();
    this.retryHandle = this.options.timers.setTimeout(() => {
      this.retryHandle = undefined;
      if (this._disposed || this.attempt || this.link !== undefined) return;
      this.startAttempt().catch(noop);
    }, delay);
  }
}
