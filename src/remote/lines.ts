import { StringDecoder } from 'node:string_decoder';

/**
 * Splits a byte stream into lines on "\n" only ("\r" stays inside the line: progress bars
 * use it). UTF-8 sequences cut across chunks are decoded whole.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer | string): void {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + 1);
      this.onLine(line);
    }
  }

  /** Flushes a last line that had no trailing newline. */
  end(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') {
      const line = this.pending;
      this.pending = '';
      this.onLine(line);
    }
  }
}

/** Collects up to `maxBytes` of a stream; notes whether anything was dropped. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const room = this.maxBytes - this.size;
    if (room <= 0) {
      if (buf.length > 0) this.truncated = true;
      return;
    }
    const part = buf.length > room ? buf.subarray(0, room) : buf;
    if (part.length < buf.length) this.truncated = true;
    this.chunks.push(part);
    this.size += part.length;
  }

  /** Decoded text; a UTF-8 sequence cut by the cap is dropped rather than mangled. */
  text(): string {
    const decoder = new StringDecoder('utf8');
    return decoder.write(Buffer.concat(this.chunks));
  }
}

export const DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

/** Applies the ExecOptions.maxOutputBytes contract: the note about truncation goes to stderr. */
export function finishOutput(stdout: CappedBuffer, stderr: CappedBuffer): { stdout: string; stderr: string } {
  let err = stderr.text();
  if (stdout.truncated) err += `${err === '' || err.endsWith('\n') ? '' : '\n'}[kimi: stdout truncated]\n`;
  return { stdout: stdout.text(), stderr: err };
}

/**
 * Splits off the first line of a stream (a wrapper's "$$" announcement) and passes every
 * later byte through untouched.
 */
export class FirstLineTap {
  private head: Buffer | undefined = Buffer.alloc(0);

  constructor(
    private readonly onFirstLine: (line: string) => void,
    private readonly onRest: (chunk: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.head === undefined) {
      this.onRest(chunk);
      return;
    }
    const buf = Buffer.concat([this.head, chunk]);
    const nl = buf.indexOf(0x0a);
    if (nl < 0) {
      this.head = buf;
      return;
    }
    this.head = undefined;
    this.onFirstLine(buf.toString('utf8', 0, nl));
    if (nl + 1 < buf.length) this.onRest(buf.subarray(nl + 1));
  }
}
