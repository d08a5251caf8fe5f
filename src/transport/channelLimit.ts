/**
 * At most N channels open at once on one connection (exec sessions, long-lived streams and
 * forwarded HTTP connections alike): a request beyond that waits for a channel to close. A
 * watch holds two (journal, sampler) and leaves one for probes, so it never comes near
 * OpenSSH's MaxSessions (10) and never makes the user's own restart fail for want of a session.
 */
import type { Duplex } from 'node:stream';
import type { ChannelHeld, ExecOptions, ExecResult, RemoteProcess, Transport } from './transport';
import type { ClientChoice } from './openssh/chooseClient';
import { CommandTimeoutError } from './errors';
import { noFreeChannel } from '../present/words/transportWords';

export const MAX_CHANNELS = 3;
/** The longest a timed-out command's slot waits for its channel to close (its kill takes a moment). */
const HELD_SLOT_BOUND_MS = 10_000;

/** A counting semaphore, first come first served. */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  get inUse(): number {
    return this.used;
  }

  /**
   * A slot, once one is free. With `waitMs`: undefined when none came free within that long (the
   * caller gave up; its place in the queue is left, and nothing is held).
   */
  async acquire(): Promise<() => void>;
  async acquire(waitMs: number | undefined): Promise<(() => void) | undefined>;
  async acquire(waitMs?: number): Promise<(() => void) | undefined> {
    if (this.used >= this.max) {
      const turn = await new Promise<boolean>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer =
          waitMs === undefined
            ? undefined
            : setTimeout(() => {
                const at = this.waiting.indexOf(wake);
                if (at >= 0) this.waiting.splice(at, 1);
                resolve(false);
              }, waitMs);
        this.waiting.push(wake);
      });
      if (!turn) return undefined;
    } else this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    };
  }
}

/** The same transport, with at most `max` channels open at once. */
export class ChannelLimitedTransport implements Transport {
  private readonly slots: Slots;

  constructor(
    private readonly inner: Transport,
    private readonly max = MAX_CHANNELS,
  ) {
    this.slots = new Slots(max);
  }

  get description(): string {
    return this.inner.description;
  }

  get state() {
    return this.inner.state;
  }

  get handshakes(): number {
    return this.inner.handshakes;
  }

  get openChannels(): number | undefined {
    return this.inner.openChannels;
  }

  get client(): ClientChoice | undefined {
    return this.inner.client;
  }

  /** Channel slots taken now (at most `max`). */
  get slotsInUse(): number {
    return this.slots.inUse;
  }

  onStateChange(listener: Parameters<Transport['onStateChange']>[0]): { dispose(): void } {
    return this.inner.onStateChange(listener);
  }

  connect(): Promise<void> {
    return this.inner.connect();
  }

  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    // The command's deadline bounds its wait for a channel too: long-lived streams (a log follow,
    // a sampler whose step hangs) may hold every slot, and a caller's round must not wait on them unbounded.
    const wait = options?.timeoutMs;
    const release = await this.slots.acquire(wait);
    if (!release) throw new CommandTimeoutError(noFreeChannel(wait ?? 0, this.max));
    try {
      const result = await this.inner.exec(command, options);
      release();
      return result;
    } catch (error) {
      // A command that timed out keeps its channel until its kill is done: so does its slot,
      // else a burst of timeouts opens more channels than the cap. Bounded, so that a channel
      // that never closes cannot take a slot for good.
      const closed = (error as ChannelHeld | undefined)?.channelClosed;
      if (!closed) release();
      else {
        const bound = setTimeout(release, HELD_SLOT_BOUND_MS);
        bound.unref?.(); // a CLI that is done does not wait for it
        void closed.then(() => {
          clearTimeout(bound);
          release();
        });
      }
      throw error;
    }
  }

  async stream(
    command: string,
    onLine: (line: string) => void,
    onStderr?: (line: string) => void,
  ): Promise<RemoteProcess> {
    const release = await this.slots.acquire();
    try {
      const process = await this.inner.stream(command, onLine, onStderr);
      void process.exited.finally(release);
      return process;
    } catch (error) {
      release();
      throw error;
    }
  }

  openStream = async (host: string, port: number): Promise<NodeJS.ReadWriteStream & Duplex> => {
    const release = await this.slots.acquire();
    try {
      const stream = (await this.inner.openStream(host, port)) as NodeJS.ReadWriteStream & Duplex;
      stream.once('close', release);
      return stream;
    } catch (error) {
      release();
      throw error;
    }
  };

  /**
   * A forwarded TCP stream outside the cap (port forwarding): sshd's MaxSessions counts sessions,
   * not direct-tcpip channels, and a local client's long request must not starve the watch.
   */
  openUncappedStream = (host: string, port: number): Promise<NodeJS.ReadWriteStream & Duplex> =>
    this.inner.openStream(host, port) as Promise<NodeJS.ReadWriteStream & Duplex>;

  dispose(): void {
    this.inner.dispose();
  }
}
