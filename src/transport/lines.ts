import { StringDecoder } from 'node:string_decoder';

/** A line longer than this is cut there (the rest up to its newline is dropped): memory stays bounded. */
export const MAX_LINE_CHARS = 32 * 1024 * 1024;

/**
 * Splits a byte stream into lines on "\n" only ("\r" stays inside the line: progress bars
 * use it). UTF-8 sequences cut across chunks are decoded whole. Each chunk is scanned once (a
 * long line arriving in many chunks costs linear time), and a line is cut at MAX_LINE_CHARS.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private parts: string[] = [];
  private pendingChars = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineChars = MAX_LINE_CHARS,
  ) {}

  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      this.keep(text.slice(start, nl));
      const line = this.parts.join('');
      this.parts = [];
      this.pendingChars = 0;
      start = nl + 1;
      this.onLine(line);
    }
    if (start < text.length) this.keep(text.slice(start));
  }

  private keep(piece: string): void {
    const room = this.maxLineChars - this.pendingChars;
    if (room <= 0 || piece === '') return;
    const kept = piece.length > room ? piece.slice(0, room) : piece;
    this.parts.push(kept);
    this.pendingChars += kept.length;
  }

  /** Flushes a last line that had no trailing newline. */
  end(): void {
    this.keep(this.decoder.end());
    if (this.pendingChars > 0) {
      const line = this.parts.join('');
      this.parts = [];
      this.pendingChars = 0;
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

/**
 * A command's stdout: when `announced`, the process group the command says on its first line
 * (shell.ts) is taken off and kept; the rest is held until a reader is set.
 */
export class AnnouncedOutput {
  /** The announced process group, once read. */
  pgid: number | undefined;
  /** Called when the process group is read (a stop asked before it was). */
  onPgid: ((pgid: number) => void) | undefined;
  private readonly early: Buffer[] = [];
  private sink: (d: Buffer) => void = (d) => this.early.push(d);
  private readonly tap: FirstLineTap | undefined;

  constructor(announced: boolean) {
    this.tap = announced
      ? new FirstLineTap(
          (line) => {
            const n = Number(line.trim());
            if (!Number.isInteger(n) || n <= 1) return;
            this.pgid = n;
            this.onPgid?.(n);
          },
          (d) => this.sink(d),
        )
      : undefined;
  }

  push(d: Buffer): void {
    if (this.tap) this.tap.push(d);
    else this.sink(d);
  }

  /** Sets the reader; what came before it is handed over first. */
  read(fn: (d: Buffer) => void): void {
    this.sink = fn;
    this.early.splice(0).forEach(fn);
  }
}
