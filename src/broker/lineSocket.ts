/**
 * One JSON-lines connection: lines in, messages out, one close. Bounded against a peer of the
 * same user that writes too much or reads nothing: a line is cut off at MAX_LINE_BYTES as its
 * bytes arrive (each byte is scanned once), what waits to be sent to a peer that does not read
 * is capped, and once the connection is closed (an invalid line, a limit) nothing more it sent
 * is read, not even the rest of the same write.
 */
import type * as net from 'node:net';
import { MAX_LINE_BYTES } from './protocol';
import { lineOverLimit, peerReadsNothing } from '../present/words/brokerWords';

/** Bytes queued for a peer beyond this: it does not read, and is dropped (two full lines may wait). */
export const MAX_QUEUED_BYTES = 2 * MAX_LINE_BYTES;
/** A peer that has not read what waits for it within this is dropped rather than sent more. */
export const DRAIN_DEADLINE_MS = 5_000;
/** A closed connection's last messages (a refusal) get this long to leave before it is destroyed. */
const CLOSE_GRACE_MS = 2_000;

export class LineSocket {
  /** The current line's bytes so far (before its newline), and their count. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  private closed = false;
  private reason: string | undefined;
  private grace: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: net.Socket,
    private readonly onLine: (line: string) => void,
    onClose: (why: string | undefined) => void,
  ) {
    // A socket paused while its first line was read (owner.ts) flows again here.
    queueMicrotask(() => {
      if (!this.closed) socket.resume();
    });
    let why: string | undefined;
    socket.on('data', (chunk: Buffer | string) => this.receive(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    socket.on('error', (error) => {
      why ??= error.message;
    });
    socket.on('close', () => {
      this.closed = true;
      clearTimeout(this.grace);
      this.parts = [];
      onClose(this.reason ?? why);
    });
  }

  /** Lines are cut at the newline byte, which never occurs inside a UTF-8 sequence. */
  private receive(chunk: Buffer): void {
    let start = 0;
    while (!this.closed) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline < 0 ? chunk.length : newline;
      if (this.partBytes + (end - start) > MAX_LINE_BYTES) return this.drop(lineOverLimit());
      if (newline < 0) {
        if (end > start) {
          this.parts.push(chunk.subarray(start));
          this.partBytes += end - start;
        }
        return;
      }
      const piece = chunk.subarray(start, end);
      const line = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
      this.parts = [];
      this.partBytes = 0;
      start = newline + 1;
      if (line.length > 0) this.onLine(line.toString('utf8'));
    }
  }

  /** Still reading and sending (not closed by either side). */
  get isOpen(): boolean {
    return !this.closed;
  }

  send(text: string): void {
    if (this.closed || this.socket.destroyed) return;
    if (this.socket.writableLength + Buffer.byteLength(text) > MAX_QUEUED_BYTES) return this.drop(peerReadsNothing());
    this.socket.write(text);
  }

  /**
   * Resolves once what was sent has left (true), or with false when the connection is gone: at
   * the deadline a peer that still has not read is dropped. The one waiting caller (owner.ts runs
   * a peer's commands one at a time) holds one listener of each kind.
   */
  drained(deadlineMs = DRAIN_DEADLINE_MS): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.socket.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (open: boolean) => {
        clearTimeout(timer);
        this.socket.removeListener('drain', onDrain);
        this.socket.removeListener('close', onClose);
        resolve(open);
      };
      const onDrain = () => done(!this.closed);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        this.drop(peerReadsNothing());
        done(false);
      }, deadlineMs);
      this.socket.once('drain', onDrain);
      this.socket.once('close', onClose);
    });
  }

  /** Reads nothing more; what was sent leaves (a refusal), then the connection ends. */
  close(reason?: string): void {
    if (this.closed) return;
    this.stopReading(reason);
    this.socket.end();
    this.grace = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
    this.grace.unref();
  }

  /** Reads nothing more, sends nothing more: the connection is gone at once. */
  drop(reason?: string): void {
    if (this.socket.destroyed) return;
    this.stopReading(reason);
    this.socket.destroy();
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private stopReading(reason: string | undefined): void {
    this.reason ??= reason;
    this.closed = true;
    this.parts = [];
    this.partBytes = 0;
    this.socket.pause();
  }
}
