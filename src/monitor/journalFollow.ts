/** The journal witness: follows the unit's journal (or a container's log), and reads a failed run's tail. */
import { errorText } from '../util/errors';
import type { RemoteProcess } from '../transport/transport';
import { JournalReader } from '../engine/logReader';
import { LOG_ACCESS_FIX, logProblem, type LogEntry } from '../target/target';
import { rootCause } from '../engine/rootCause';
import { hasRunningProcess } from './unitFailure';
import { compareServerUrl } from '../engine/announcedUrl';
import {
  JOURNAL_RETRY_FIRST_MS,
  JOURNAL_RETRY_MAX_MS,
  FAILURE_TAIL_LINES,
  FAILURE_TAIL_READS,
  FAILURE_TAIL_RETRY_MS,
  EARLY_EXIT_MS,
} from './watchTypes';
import { WatchCore } from './watchCore';

export abstract class JournalFollow extends WatchCore {
  /**
   * A failed run's last journal lines: why it failed (the follow may not have told it yet). A
   * process that dies in its first second may have its lines reach the journal after systemd's
   * exit line: while no line tells the cause of such a young death, the tail is read again.
   */
  protected async readFailureCause(): Promise<void> {
    this.failureCause = 'reading';
    try {
      for (let read = 1; ; read++) {
        await this.applyFailureTail();
        if (
          read >= FAILURE_TAIL_READS ||
          !this.running ||
          !this.diedYoung() ||
          rootCause(this.current.failure?.lines ?? []) !== undefined
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, FAILURE_TAIL_RETRY_MS));
      }
    } catch (error) {
      this.deps.log('warn', `Could not read why ${this.deps.profile.unit} failed: ${errorText(error)}`);
    } finally {
      this.failureCause = 'read';
    }
  }

  /** The process ended within EARLY_EXIT_MS of its start (systemd's timestamps). */
  protected diedYoung(): boolean {
    const unit = this.current.unit;
    if (unit?.execMainStartedAt === undefined || unit.execMainExitedAt === undefined) return false;
    return unit.execMainExitedAt - unit.execMainStartedAt <= EARLY_EXIT_MS;
  }

  protected async applyFailureTail(): Promise<void> {
    const tail = await this.target.tailLog(this.io, FAILURE_TAIL_LINES);
    const reader = new JournalReader(this.grammar);
    // Lines the follow (or a previous read) already told are not told twice.
    const known = new Map<string, number>();
    for (const text of this.current.failure?.lines ?? []) known.set(text, (known.get(text) ?? 0) + 1);
    for (const entry of tail.entries) {
      const start = this.processStartMonotonicUs;
      if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) continue;
      for (const { event, text } of reader.readLines(entry.message, entry.at)) {
        if (event.type !== 'error') continue;
        const seen = known.get(text) ?? 0;
        if (seen > 0) known.set(text, seen - 1);
        else this.apply({ kind: 'journal', at: this.now(), event, text });
      }
    }
  }

  // ------------------------------------------------------------ journal

  protected startJournal(): void {
    if (!this.running || this.journal || this.journalStarting || !this.attached || this.journalRetry) return;
    const since = (this.journalSince ?? this.current.watchStartedAt) - 1000;
    const stderr: string[] = [];
    this.journalStarting = true;
    this.target
      .followLog(this.io, since, {
        onEntry: (entry) => this.onJournalEntry(entry),
        onStderr: (line) => {
          if (stderr.length < 20) stderr.push(line);
          const problem = logProblem([line], undefined);
          // The hint comes while journalctl goes on following nothing: stop it, try again later.
          if (problem && this.journal) this.onJournalEnded(this.journal, stderr, undefined);
        },
      })
      .then((process) => {
        this.journalStarting = false;
        if (!this.running) {
          process.kill();
          return;
        }
        this.journal = process;
        if (logProblem(stderr, undefined)) this.onJournalEnded(process, stderr, undefined);
        void process.exited.then((code) => this.onJournalEnded(process, stderr, code));
      })
      .catch((error) => {
        this.journalStarting = false;
        this.deps.log('warn', `Could not follow the journal: ${errorText(error)}`);
      });
  }

  /** journalctl ended, or said it cannot read the journal: say why, follow again with backoff. */
  protected onJournalEnded(process: RemoteProcess, stderr: readonly string[], code: number | null | undefined): void {
    if (this.journal !== process) return;
    this.journal = undefined;
    process.kill();
    if (!this.running || !this.current.connected) return;
    const problem = logProblem(stderr, code);
    if (problem) {
      const unreadable = code === undefined || /not readable/.test(problem);
      const detail = unreadable ? `${problem}. Fix: ${LOG_ACCESS_FIX}` : problem;
      this.apply({ kind: 'journalStatus', at: this.now(), readable: false, detail });
      this.alertOnce({
        kind: 'journal',
        level: 'warn',
        message: `The journal of ${this.deps.profile.unit} cannot be followed: ${detail}. Watching from systemd and HTTP alone.`,
      });
    }
    this.deps.log(
      problem ? 'warn' : 'info',
      `journalctl ended (exit ${code ?? 'none'})${stderr.length ? `: ${stderr.join(' ').slice(0, 300)}` : ''}; following again in ${Math.round(this.journalRetryMs / 1000)} s.`,
    );
    const delay = this.journalRetryMs;
    this.journalRetryMs = Math.min(JOURNAL_RETRY_MAX_MS, this.journalRetryMs * 2);
    this.journalRetry = setTimeout(() => {
      this.journalRetry = undefined;
      this.startJournal();
    }, delay);
    // Without the journal (and without the sampler), exits come only from the unit probe: look at once.
    // A container's log follow ends when the container stops: look at once too.
    if (this.sampler?.process === undefined || this.target.logFollowEndsWithService) {
      this.unitProbeDue = true;
      this.probeSoon();
    }
  }

  protected restartJournal(): void {
    const journal = this.journal;
    this.journal = undefined;
    journal?.kill();
    clearTimeout(this.journalRetry);
    this.journalRetry = undefined;
    this.journalRetryMs = JOURNAL_RETRY_FIRST_MS;
    this.journalReader = new JournalReader(this.grammar);
  }

  protected onJournalEntry(entry: LogEntry): void {
    this.journalRetryMs = JOURNAL_RETRY_FIRST_MS;
    if (this.current.journal?.readable !== true) this.apply({ kind: 'journalStatus', at: this.now(), readable: true });
    // --since has one-second precision: drop what an earlier process of the unit logged.
    const start = this.processStartMonotonicUs;
    if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) return;
    for (const { event, text } of this.journalReader.readLines(entry.message, entry.at)) {
      // "Started" of the run this watch follows, still alive, tells nothing new: no look at the unit
      // for it. (A new run after a stop or a failure is news: look.)
      const known =
        event.type === 'systemd' &&
        event.what === 'started' &&
        this.attached &&
        this.awaitingRunAfter === undefined &&
        this.current.unit !== undefined &&
        hasRunningProcess(this.current.unit) &&
        this.current.failure === undefined;
      if (event.type === 'systemd' && !known) {
        this.unitProbeDue = true;
        if (event.what === 'stopping') this.stopSeen = true;
      }
      if (
        event.type === 'ready' ||
        event.type === 'httpUp' ||
        event.type === 'graphsCaptured' ||
        (event.type === 'systemd' && !known)
      )
        this.probeSoon();
      if (event.type === 'httpUp' && event.url) this.checkAnnouncedUrl(event.url);
      // A restart under way: the new run's lines are read again once it is attached.
      if (this.awaitingRunAfter !== undefined || !this.attached) continue;
      this.apply({ kind: 'journal', at: this.now(), event, text });
    }
  }

  /** SGLang says where it listens; when that is not the configured url, say so and use what it said. */
  protected checkAnnouncedUrl(announced: string): void {
    const verdict = compareServerUrl(this.deps.http.baseUrl, announced);
    if (verdict.ok) return;
    this.deps.http.setBaseUrl(verdict.useUrl);
    this.alertOnce({ kind: 'url', level: 'warn', message: `${verdict.message} Using ${verdict.useUrl}.` });
  }
}
