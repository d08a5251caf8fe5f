/**
 * Where a running verification is: each check's request under way and what its stream carried so
 * far (./progress counts it), told to the listener each second and at each check's end, and to
 * the log when a check waits long (./progress's ProgressLog). Its one timer ends with dispose().
 */
import type { CheckName } from './checks';
import { EMPTY_TALLY, ProgressLog, SseTally, type CheckProgress, type VerifyProgress } from './progress';

export interface ProgressOptions {
  /** Where the verification is, each second and at each check's end. */
  readonly onProgress?: (progress: VerifyProgress) => void;
  /** Lines about checks that wait long (at most one every 10 s a check). */
  readonly log?: (line: string) => void;
  readonly now?: () => number;
  /** How often the listener and the log are told (default 1 s). */
  readonly tickMs?: number;
  /** How long a check waits before the log says so, and how often at most (default LOG_EVERY_MS, 10 s). */
  readonly logEveryMs?: number;
}

const TICK_MS = 1_000;

export class ProgressBoard {
  private readonly checks = new Map<CheckName, CheckProgress>();
  private readonly done = new Set<CheckName>();
  /** The tally of each request under way: a request that ended (or was replaced by its retry) counts no more. */
  private readonly current = new Map<CheckName, SseTally>();
  private readonly logLines: ProgressLog;
  private readonly now: () => number;
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  private readonly names: readonly CheckName[];

  /** `checks`: every check of the verification, in the table's order, and whether it streams. */
  constructor(
    checks: readonly { readonly name: CheckName; readonly stream: boolean }[],
    private readonly options: ProgressOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.logLines = new ProgressLog(options.logEveryMs);
    this.names = checks.map((c) => c.name);
    for (const { name, stream } of checks) this.checks.set(name, { name, stream, tally: EMPTY_TALLY });
    if (options.onProgress || options.log) this.timer = setInterval(() => this.tick(), options.tickMs ?? TICK_MS);
  }

  /** Its request goes out now; the returned function takes the streamed text as it arrives. */
  asked(name: CheckName, budget?: number, retry = false): (text: string) => void {
    const tally = new SseTally();
    this.current.set(name, tally);
    this.checks.set(name, {
      name,
      stream: this.checks.get(name)?.stream ?? false,
      askedAt: this.now(),
      ...(budget !== undefined ? { budget } : {}),
      ...(retry ? { retry } : {}),
      tally: EMPTY_TALLY,
    });
    return (text) => {
      if (this.current.get(name) !== tally) return;
      tally.push(text);
      this.checks.set(name, { ...this.checks.get(name)!, tally: tally.tally });
    };
  }

  /** A stream's response began. */
  responded(name: CheckName): void {
    const c = this.checks.get(name);
    if (c && c.endedAt === undefined && this.current.has(name))
      this.checks.set(name, { ...c, respondedAt: this.now() });
  }

  /** The request ended (answered, failed or out of time): what it carried stays readable. */
  ended(name: CheckName): void {
    this.current.delete(name);
    const c = this.checks.get(name);
    if (c && c.askedAt !== undefined && c.endedAt === undefined) this.checks.set(name, { ...c, endedAt: this.now() });
  }

  /** The check is decided. */
  finished(name: CheckName): void {
    this.ended(name);
    this.done.add(name);
    this.options.onProgress?.(this.progress());
  }

  /** Its last request as it stood (at its end, for a request that ended). */
  of(name: CheckName): CheckProgress | undefined {
    return this.checks.get(name);
  }

  /** The board's clock (Date.now unless told otherwise). */
  clock(): number {
    return this.now();
  }

  progress(): VerifyProgress {
    const running = this.names.filter((n) => !this.done.has(n)).map((n) => this.checks.get(n)!);
    return { done: this.done.size, total: this.names.length, running };
  }

  private tick(): void {
    const progress = this.progress();
    this.options.onProgress?.(progress);
    if (this.options.log) for (const line of this.logLines.due(progress, this.now())) this.options.log(line);
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
