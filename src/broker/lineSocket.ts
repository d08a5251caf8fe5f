/** One JSON-lines connection: lines in (size-bounded), messages out, one close. */
import type * as net from 'node:net';
import { MAX_LINE_BYTES } from './protocol';

export class LineSocket {
  private buffered = '';
  private closed = false;

  constructor(
    private readonly socket: net.Socket,
    onLine: (line: string) => void,
    onClose: (why: string | undefined) => void,
  ) {
    socket.setEncoding('utf8');
    // A socket paused while its first line was read (owner.ts) flows again here.
    queueMicrotask(() => socket.resume());
    let why: string | undefined;
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      let newline = this.buffered.indexOf('\n');
      while (newline >= 0 && !this.closed) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        if (line.length > 0) onLine(line);
        newline = this.buffered.indexOf('\n');
      }
      if (Buffer.byteLength(this.buffered) > MAX_LINE_BYTES) this.close('a line over the size limit');
    });
    socket.on('error', (error) => {
      why ??= error.message;
    });
    socket.on('close', () => {
      this.closed = true;
      onClose(why ?? this.reason);
    });
  }

  private reason: string | undefined;

  send(text: string): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(text);
  }

  close(reason?: string): void {
    this.reason ??= reason;
    this.socket.end();
    this.socket.destroySoon();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
