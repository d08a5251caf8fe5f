/**
 * The fleet's log lines: each goes to the front's log, and the recent ones of each server are
 * kept for `logs` (the fronts have their own log too).
 */
import { RingBuffer } from '../monitor/ringBuffer';
import type { LogLevel } from '../monitor/watcher';
import { maskSecrets } from '../util/secrets';

const RECENT_LOG_LINES = 500;

export class ServerLog {
  private readonly recent = new Map<string, RingBuffer<string>>();

  constructor(private readonly out: (level: LogLevel, line: string) => void) {}

  /** A line about one server: every front's log, and the server's own recent lines. */
  say(name: string, level: LogLevel, text: string): void {
    this.record(name, level, `[${name}] ${text}`);
  }

  /** A line already worded, kept as the server's. */
  record(name: string, level: LogLevel, line: string): void {
    if (level !== 'trace') {
      let buffer = this.recent.get(name);
      if (!buffer) this.recent.set(name, (buffer = new RingBuffer<string>(RECENT_LOG_LINES)));
      buffer.push(`${new Date().toISOString()} ${level} ${line}`);
    }
    this.out(level, line);
  }

  /** The server's last `n` lines, secrets masked. */
  last(name: string, n: number): string[] {
    return (this.recent.get(name)?.toArray() ?? []).slice(-n).map((l) => maskSecrets(l));
  }
}
