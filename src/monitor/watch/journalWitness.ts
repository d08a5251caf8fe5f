/** The journal witness: follows the unit's journal (or a container's log), and reads a failed run's tail. */
import { errorText } from '../../util/errors';
import type { RemoteProcess } from '../../transport/transport';
import { JournalReader } from '../../engine/logReader';
import type { LogGrammar } from '../../engine/engine';
import { LOG_ACCESS_FIX, logProblem, type LogEntry, type Target, type TargetIo } from '../../target/target';
import { rootCause } from '../../engine/rootCause';
import { hasRunningProcess } from '../state/unitFailure';
import {
  JOURNAL_RETRY_FIRST_MS,
  JOURNAL_RETRY_MAX_MS,
  FAILURE_TAIL_LINES,
  FAILURE_TAIL_READS,
  FAILURE_TAIL_RETRY_MS,
  EARLY_EXIT_MS,
} from './watchTypes';
import type { Witness, WitnessContext } from './witness';
import {
  failureCauseUnread,
  journalctlEnded,
  journalFollowFailed,
  journalUnfollowable,
} from '../../present/words/watchWords';

/** What is held while a restart is followed: a restart's first seconds, with room to spare (a hostile log's huge lines are not kept). */
const HELD_ENTRIES_MAX = 20_000;
const HELD_BYTES_MAX = 4 * 1024 * 1024;

/** The run the watch follows, as the journal needs it. */
export interface FollowedRun {
  /** The unit's current process is known (no journal of a run before that). */
  readonly tied: boolean;
  /** A restart is under way: the run to follow is not known yet. */
  readonly restarting: boolean;
  /** The followed process's start (ms). */
  readonly since: number | undefined;
  /** Journal entries older than this belong to an earlier process of the unit. */
  readonly startMonotonicUs: number | undefined;
}

/** What the journal witness asks of the watcher that holds it. */
export interface JournalHooks {
  run(): FollowedRun;
  /** The watch goes on (not ended for good). */
  running(): boolean;
  io(): TargetIo;
  /** The sampler runs (it tells a process gone even without the journal). */
  samplerLive(): boolean;
  /** systemd was seen stopping the unit. */
  onStopping(): void;
  /** The server said where it listens. */
  onAnnounced(url: string): void;
}

export class JournalWitness implements Witness {
  private journal: RemoteProcess | undefined;
  private starting = false;
  private retryMs = JOURNAL_RETRY_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private reader = new JournalReader();
  /** The engine's log grammar, once its command line is known; until then every engine's. */
  private grammar: LogGrammar | undefined;
  /** Which follow is the current one: a follow started before a restart of it is dropped. */
  private generation = 0;
  /** The process start the follow reads from; undefined: the restart's lines (from the watch's start). */
  private from: number | undefined;
  /** What the follow of a restart read (the new run's lines are read again once the watch is tied to it). */
  private held: LogEntry[] | undefined;
  private heldBytes = 0;
  /** More than HELD_ENTRIES_MAX or HELD_BYTES_MAX: the journal is followed again from the process's start instead. */
  private heldOverflow = false;
  /** The journal tail of a failed run: read once per run, and the end waits while it is read. */
  private cause: 'unread' | 'reading' | 'read' = 'unread';

  constructor(
    private readonly ctx: WitnessContext,
    private readonly target: Target,
    private readonly hooks: JournalHooks,
  ) {}

  /** journalctl runs on the host now. */
  get live(): boolean {
    return this.journal !== undefined;
  }

  /** Whether the failed run's tail was read for its cause. */
  get causeState(): 'unread' | 'reading' | 'read' {
    return this.cause;
  }

  /** The engine's grammar, from the command line: a reader of it unless a follow is under way. */
  setGrammar(grammar: LogGrammar | undefined): void {
    if (grammar !== this.grammar && !this.journal) this.reader = new JournalReader(grammar);
    this.grammar = grammar;
  }

  /** A new run is followed: its failure (if any) has its own cause to read. */
  newRun(): void {
    this.cause = 'unread';
    this.restart();
  }

  /**
   * A failed run's last journal lines: why it failed (the follow may not have told it yet). A
   * process that dies in its first second may have its lines reach the journal after systemd's
   * exit line: while no line tells the cause of such a young death, the tail is read again.
   */
  async readFailureCause(): Promise<void> {
    const { ctx } = this;
    this.cause = 'reading';
    try {
      for (let read = 1; ; read++) {
        await this.applyFailureTail();
        if (
          read >= FAILURE_TAIL_READS ||
          !this.hooks.running() ||
          !this.diedYoung() ||
          rootCause(ctx.state().failure?.lines ?? []) !== undefined
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, FAILURE_TAIL_RETRY_MS));
      }
    } catch (error) {
      ctx.deps.log('warn', failureCauseUnread(ctx.deps.profile.unit, errorText(error)));
    } finally {
      this.cause = 'read';
    }
  }

  /** The process ended within EARLY_EXIT_MS of its start (systemd's timestamps). */
  private diedYoung(): boolean {
    const unit = this.ctx.state().unit;
    if (unit?.execMainStartedAt === undefined || unit.execMainExitedAt === undefined) return false;
    return unit.execMainExitedAt - unit.execMainStartedAt <= EARLY_EXIT_MS;
  }

  private async applyFailureTail(): Promise<void> {
    const { ctx } = this;
    const tail = await this.target.tailLog(this.hooks.io(), FAILURE_TAIL_LINES);
    const reader = new JournalReader(this.grammar);
    // Lines the follow (or a previous read) already told are not told twice.
    const known = new Map<string, number>();
    for (const text of ctx.state().failure?.lines ?? []) known.set(text, (known.get(text) ?? 0) + 1);
    for (const entry of tail.entries) {
      const start = this.hooks.run().startMonotonicUs;
      if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) continue;
      for (const { event, text } of reader.readLines(entry.message, entry.at)) {
        if (event.type !== 'error') continue;
        const seen = known.get(text) ?? 0;
        if (seen > 0) known.set(text, seen - 1);
        else ctx.emit({ kind: 'journal', at: ctx.now(), event, text });
      }
    }
  }

  /**
   * Follows the log from the followed process's start, or, while a restart is under way, from the
   * watch's start: systemd's lines of the restart (stopped, started, a young process's exit) then
   * bring a look at the unit at once instead of at the next round. A container's log follow ends
   * with the container, so it waits for the new one.
   */
  start(): void {
    const { ctx } = this;
    if (!this.hooks.running() || this.journal || this.starting || this.retry) return;
    const run = this.hooks.run();
    const restarting = !run.tied && run.restarting;
    if (!run.tied && !(restarting && !this.target.logFollowEndsWithService)) return;
    const since = (run.since ?? ctx.state().watchStartedAt) - 1000;
    this.from = run.tied ? run.since : undefined;
    this.held = restarting ? [] : undefined;
    this.heldBytes = 0;
    this.heldOverflow = false;
    const generation = this.generation;
    const stderr: string[] = [];
    this.starting = true;
    this.target
      .followLog(this.hooks.io(), since, {
        onEntry: (entry) => this.onEntry(entry),
        onStderr: (line) => {
          if (stderr.length < 20) stderr.push(line);
          const problem = logProblem([line], undefined);
          // The hint comes while journalctl goes on following nothing: stop it, try again later.
          if (problem && this.journal) this.onEnded(this.journal, stderr, undefined);
        },
      })
      .then((process) => {
        if (generation !== this.generation) {
          process.kill();
          return;
        }
        this.starting = false;
        if (!this.hooks.running()) {
          process.kill();
          return;
        }
        this.journal = process;
        if (logProblem(stderr, undefined)) this.onEnded(process, stderr, undefined);
        void process.exited.then((code) => this.onEnded(process, stderr, code));
      })
      .catch((error) => {
        if (generation !== this.generation) return;
        this.starting = false;
        ctx.deps.log('warn', journalFollowFailed(errorText(error)));
      });
  }

  /** journalctl ended, or said it cannot read the journal: say why, follow again with backoff. */
  private onEnded(process: RemoteProcess, stderr: readonly string[], code: number | null | undefined): void {
    const { ctx } = this;
    if (this.journal !== process) return;
    this.journal = undefined;
    process.kill();
    if (!this.hooks.running() || !ctx.state().connected) return;
    const problem = logProblem(stderr, code);
    if (problem) {
      const unreadable = code === undefined || /not readable/.test(problem);
      const detail = unreadable ? `${problem}. Fix: ${LOG_ACCESS_FIX}` : problem;
      ctx.emit({ kind: 'journalStatus', at: ctx.now(), readable: false, detail });
      ctx.alertOnce({
        kind: 'journal',
        level: 'warn',
        message: journalUnfollowable(ctx.deps.profile.unit, detail),
      });
    }
    ctx.deps.log(problem ? 'warn' : 'info', journalctlEnded(code, stderr, Math.round(this.retryMs / 1000)));
    const delay = this.retryMs;
    this.retryMs = Math.min(JOURNAL_RETRY_MAX_MS, this.retryMs * 2);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.start();
    }, delay);
    // Without the journal (and without the sampler), exits come only from the unit probe: look at once.
    // A container's log follow ends when the container stops: look at once too.
    if (!this.hooks.samplerLive() || this.target.logFollowEndsWithService) ctx.lookAtUnit(true);
  }

  /** The followed process is known now: its log is read from its start (a follow of the restart's lines is replaced). */
  followFromProcessStart(): void {
    const held = this.held;
    if (held && !this.heldOverflow && (this.journal || this.starting)) {
      // The follow of the restart goes on (no second journalctl, no blind start): what it saw of
      // the new run is read again, by a reader of its own, from the process's start.
      this.held = undefined;
      this.from = this.hooks.run().since;
      this.reader = new JournalReader(this.grammar);
      for (const entry of held) this.onEntry(entry, false);
      return;
    }
    this.stopRestartFollow();
    this.start();
  }

  /** A follow of a restart's lines is not kept for a run found dead: its tail is read instead. */
  stopRestartFollow(): void {
    if ((this.journal || this.starting) && this.from !== this.hooks.run().since) this.restart();
  }

  /** Drops the follow (a new run, a reconnect): the next start reads from the run's start again. */
  restart(): void {
    const journal = this.journal;
    this.journal = undefined;
    this.generation++;
    this.starting = false;
    this.held = undefined;
    this.heldBytes = 0;
    this.heldOverflow = false;
    journal?.kill();
    clearTimeout(this.retry);
    this.retry = undefined;
    this.retryMs = JOURNAL_RETRY_FIRST_MS;
    this.reader = new JournalReader(this.grammar);
  }

  stop(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.generation++;
    this.starting = false;
    this.journal?.kill();
    this.journal = undefined;
  }

  /** `live`: the entry comes now from journalctl (not a replay of lines held until the watch was tied to the run). */
  private onEntry(entry: LogEntry, live = true): void {
    const { ctx } = this;
    this.retryMs = JOURNAL_RETRY_FIRST_MS;
    const run = this.hooks.run();
    const following = run.tied && !run.restarting;
    if (this.held && !following && !this.heldOverflow) {
      this.heldBytes += entry.message.length;
      if (this.held.length < HELD_ENTRIES_MAX && this.heldBytes <= HELD_BYTES_MAX) this.held.push(entry);
      else {
        this.heldOverflow = true;
        this.held = [];
      }
    }
    if (ctx.state().journal?.readable !== true) ctx.emit({ kind: 'journalStatus', at: ctx.now(), readable: true });
    // --since has one-second precision: drop what an earlier process of the unit logged.
    const start = run.startMonotonicUs;
    if (start !== undefined && entry.monotonicUs !== undefined && entry.monotonicUs < start) return;
    if (entry.stateNews && live) {
      ctx.lookAtUnit(false);
      ctx.probeSoon();
    }
    for (const { event, text } of this.reader.readLines(entry.message, entry.at)) {
      const state = ctx.state();
      // "Started" of the run this watch follows, still alive, tells nothing new: no look at the unit
      // for it. (A new run after a stop or a failure is news: look.)
      const known =
        event.type === 'systemd' &&
        event.what === 'started' &&
        following &&
        state.unit !== undefined &&
        hasRunningProcess(state.unit) &&
        state.failure === undefined;
      if (event.type === 'systemd' && !known) {
        ctx.lookAtUnit(false);
        // A stop tells on the followed run only when it is seen live while that run is followed,
        // and logged after its start: what was held before the watch was tied to the run (its own
        // look at the unit came after it) and an earlier run's late line say nothing of this run.
        if (event.what === 'stopping' && live && following && ofFollowedRun(entry, run)) this.hooks.onStopping();
      }
      if (
        event.type === 'ready' ||
        event.type === 'httpUp' ||
        event.type === 'graphsCaptured' ||
        (event.type === 'systemd' && !known)
      )
        ctx.probeSoon();
      if (event.type === 'httpUp' && event.url) this.hooks.onAnnounced(event.url);
      // A restart under way: the new run's lines are read again once the watch is tied to it.
      if (!following) continue;
      ctx.emit({ kind: 'journal', at: ctx.now(), event, text });
    }
  }
}

/**
 * The entry was logged after the followed process's start: on the journal's monotonic clock when
 * both are known, else by the wall clock; a log that tells neither (no start known) cannot be
 * told apart and counts as the run's.
 */
function ofFollowedRun(entry: LogEntry, run: FollowedRun): boolean {
  if (run.startMonotonicUs !== undefined && entry.monotonicUs !== undefined)
    return entry.monotonicUs >= run.startMonotonicUs;
  if (run.since !== undefined) return entry.at >= run.since;
  return true;
}
