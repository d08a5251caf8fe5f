/**
 * The fleet's log lines: each goes to the front's log, and the recent ones of each server are
 * kept for `logs` (the fronts have their own log too).
 */
import type { ServerProfile } from '../../config/config';
import type { LoadState } from '../../monitor/state/loadStateTypes';
import { RingBuffer } from '../../util/ringBuffer';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import type { FleetSession } from '../fleetTypes';
import { hostLogs } from './hostLogs';
import { stateChangeLine } from '../../present/stateLog';

/** What `logs` returns: the journal's lines (or why it could not be read) and the fleet's. */
export interface ServerLogs {
  journal: string[];
  journalError?: string;
  log: string[];
}

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

  /** Each change of state word or phase is a log line (every front's log, and `logs`). */
  stateChange(name: string, state: LoadState, previous: LoadState): void {
    const line = stateChangeLine(state, previous);
    if (line) this.say(name, line.level, line.text);
  }

  /**
   * The last `lines` lines of the unit's journal (read on the host) and of this log about the
   * server, secrets masked. The journal part says why when it cannot be read.
   */
  async withJournal(server: ServerProfile, lines: number, connect: () => Promise<FleetSession>): Promise<ServerLogs> {
    const n = Math.max(1, Math.min(1000, Math.floor(lines)));
    const log = (this.recent.get(server.name)?.toArray() ?? []).slice(-n).map((l) => maskSecrets(l));
    try {
      return { ...(await hostLogs(await connect(), server, n)), log };
    } catch (error) {
      return { journal: [], journalError: errorText(error), log };
    }
  }
}
