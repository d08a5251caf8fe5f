/** The journal witness: follows the unit's journal (or a container's log), and reads a failed run's tail. */
import { errorText } from '../util/errors';
import type { RemoteProcess } from '../transport/transport';
import { JournalReader } from '../engine/logReader';
import { LOG_ACCESS_FIX, logProblem, type LogEntry } from '../target/target';
import { rootCause } from '../engine/rootCause';
import { hasRunningProcess } from './unitFailure';
import { decideAnnouncedUrl } from './announcedAddress';
import { parseResolved, resolveCommand } from '../host/hostAddresses';
import {
  JOURNAL_RETRY_FIRST_MS,
  JOURNAL_RETRY_MAX_MS,
  FAILURE_TAIL_LINES,
  FAILURE_TAIL_READS,
  FAILURE_TAIL_RETRY_MS,
  EARLY_EXIT_MS,
  COMMAND_TIMEOUT_MS,
} from './watchTypes';
import { WatchCore } from './watchCore';

/** Lines held while a restart is followed: a restart's first seconds, with room to spare. */
const HELD_ENTRIES_MAX = 20_000;

export abstract class JournalFollow extends WatchCore {
  /** The last address the server announced (its log's HTTP line). */
  private announcedUrl: string | undefined;
  /** The host's own addresses, from the sampler's first line. */
  private hostAddresses: readonly string[] | undefined;
  private readonly resolvedNames = new Map<string, readonly string[]>();
  private readonly resolving = new Set<string>();
  /** Which follow of the journal is the current one: a follow started before a restart of it is dropped. */
  private journalGeneration = 0;
  /** The process start the journal follow reads from; undefined: the restart's lines (from the watch's start). */
  private journalFrom: number | undefined;
  /** What the follow of a restart read (the new run's lines are read again once it is attached). */
  private heldEntries: LogEntry[] | undefined;
  /** More than HELD_ENTRIES_MAX: the journal is followed again from the process's start instead. */
  private heldOverflow = false;
  /** Announced urls not followed, each said once. */
  private readonly urlsKept = new Set<string>();

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

  /**
   * Follows the log from the followed process's start, or, while a restart is under way, from the
   * watch's start: systemd's lines of the restart (stopped, started, a young process's exit) then
   * bring a look at the unit at once instead of at the next round. A container's log follow ends
   * with the container, so it waits for the new one.
   */
  protected startJournal(): void {
    if (!this.running || this.journal || this.journalStarting || this.journalRetry) return;
    const restarting = !this.attached && this.awaitingRunAfter !== undefined;
    if (!this.attached && !(restarting && !this.target.logFollowEndsWithService)) return;
    const since = (this.journalSince ?? this.current.watchStartedAt) - 1000;
    this.journalFrom = this.attached ? this.journalSince : undefined;
    this.heldEntries = restarting ? [] : undefined;
    this.heldOverflow = false;
    const generation = this.journalGeneration;
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
        if (generation !== this.journalGeneration) {
          process.kill();
          return;
        }
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
        if (generation !== this.journalGeneration) return;
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
    if (!this.samplerLive() || this.target.logFollowEndsWithService) {
      this.unitProbeDue = true;
      this.probeSoon();
    }
  }

  /** The followed process is known now: its log is read from its start (a follow of the restart's lines is replaced). */
  protected followFromProcessStart(): void {
    const held = this.heldEntries;
    if (held && !this.heldOverflow && (this.journal || this.journalStarting)) {
      // The follow of the restart goes on (no second journalctl, no blind start): what it saw of
      // the new run is read again, by a reader of its own, from the process's start.
      this.heldEntries = undefined;
      this.journalFrom = this.journalSince;
      this.journalReader = new JournalReader(this.grammar);
      for (const entry of held) this.onJournalEntry(entry);
      return;
    }
    this.stopRestartJournal();
    this.startJournal();
  }

  protected stopRestartJournal(): void {
    if ((this.journal || this.journalStarting) && this.journalFrom !== this.journalSince) this.restartJournal();
  }

  protected restartJournal(): void {
    const journal = this.journal;
    this.journal = undefined;
    this.journalGeneration++;
    this.journalStarting = false;
    this.heldEntries = undefined;
    this.heldOverflow = false;
    journal?.kill();
    clearTimeout(this.journalRetry);
    this.journalRetry = undefined;
    this.journalRetryMs = JOURNAL_RETRY_FIRST_MS;
    this.journalReader = new JournalReader(this.grammar);
  }

  protected onJournalEntry(entry: LogEntry): void {
    this.journalRetryMs = JOURNAL_RETRY_FIRST_MS;
    if (this.heldEntries && (!this.attached || this.awaitingRunAfter !== undefined)) {
      if (this.heldEntries.length < HELD_ENTRIES_MAX) this.heldEntries.push(entry);
      else this.heldOverflow = true;
    }
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

  /**
   * The server says where it listens; when that is not the configured url, use what it said if
   * the host has that address (announcedAddress.ts), else keep the configured url and say why.
   */
  protected checkAnnouncedUrl(announced: string): void {
    this.announcedUrl = announced;
    const decision = decideAnnouncedUrl(this.deps.http.baseUrl, announced, {
      addresses: this.hostAddresses,
      resolved: this.resolvedNames,
    });
    if (decision.kind === 'switch') {
      this.deps.http.setBaseUrl(decision.url);
      this.alertOnce({ kind: 'url', level: 'warn', message: `${decision.message} Using ${decision.url}.` });
    } else if (decision.kind === 'keep' && !this.urlsKept.has(announced)) {
      this.urlsKept.add(announced);
      this.deps.log('warn', decision.message);
    } else if (decision.kind === 'needResolve') void this.resolveOnHost(decision.name);
  }

  /** The sampler read the host's addresses: an announcement waiting for them is decided now. */
  protected onHostAddresses(addresses: readonly string[]): void {
    this.hostAddresses = addresses;
    if (this.announcedUrl !== undefined) this.checkAnnouncedUrl(this.announcedUrl);
  }

  private async resolveOnHost(name: string): Promise<void> {
    if (this.resolving.has(name)) return;
    this.resolving.add(name);
    let addresses: readonly string[] = [];
    try {
      const result = await this.deps.transport.exec(resolveCommand(name), { timeoutMs: COMMAND_TIMEOUT_MS });
      addresses = parseResolved(result.stdout);
    } catch (error) {
      this.deps.log('warn', `Could not resolve ${name} on the host: ${errorText(error)}`);
    }
    this.resolvedNames.set(name, addresses);
    if (this.running && this.announcedUrl !== undefined) this.checkAnnouncedUrl(this.announcedUrl);
  }
}
