/**
 * When `kimi_wait` sends `notifications/progress`, and with what: at every change of what the
 * server is doing (state word, phase, percentage, error) and at least every `heartbeatMs` while
 * nothing changes, so a client that resets its timeout on progress keeps waiting. Pure: the
 * caller feeds it reports and the clock.
 */
import type { ServerReport } from '../../present/report';

export interface ProgressUpdate {
  /** Strictly increasing (the MCP spec asks it): the load's percentage, nudged by 0.01 when it did not move. */
  readonly progress: number;
  readonly total: 100;
  /** The report's summary line. */
  readonly message: string;
}

/** What counts as a change worth telling at once (not the elapsed time or the ETA, which move every second). */
export function progressKey(report: ServerReport): string {
  return [
    report.state,
    report.phase ?? '',
    report.progressPercent ?? '',
    report.lastError ?? '',
    report.parsers ?? '',
  ].join('|');
}

export class ProgressPacer {
  private lastKey: string | undefined;
  private lastSentAt = -Infinity;
  private lastProgress = -Infinity;
  private lastPercent = 0;

  constructor(private readonly heartbeatMs: number) {}

  /** A new state was seen: an update when it differs from the last one told. */
  onChange(report: ServerReport, now: number): ProgressUpdate | undefined {
    if (progressKey(report) === this.lastKey) return undefined;
    return this.make(report, now);
  }

  /** The clock ticked: an update when nothing was told for `heartbeatMs`. */
  onTick(report: ServerReport, now: number): ProgressUpdate | undefined {
    if (now - this.lastSentAt < this.heartbeatMs) return undefined;
    return this.make(report, now);
  }

  private make(report: ServerReport, now: number): ProgressUpdate {
    if (report.state === 'ready') this.lastPercent = 100;
    else if (report.progressPercent !== null) this.lastPercent = report.progressPercent;
    const progress =
      this.lastPercent > this.lastProgress ? this.lastPercent : Math.round((this.lastProgress + 0.01) * 100) / 100;
    this.lastKey = progressKey(report);
    this.lastSentAt = now;
    this.lastProgress = progress;
    return { progress, total: 100, message: report.summary };
  }
}
