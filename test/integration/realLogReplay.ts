/**
 * One published log (test/fixtures/real-logs) replayed end to end: the simulated GPU host plays
 * it as a live server (docs/replay.md) and the extension's own session watches it through the
 * real sshd, as a user would. `judgeReplay` says what was wrong with what the user saw, as the
 * unit suite's test/util/realLogJudge does for the lines alone: the verdict, the cause shown (a
 * failure) and false stalls. Used by test/integration/realLogs.int.test.ts (asserted) and
 * scripts/realLogsSurvey.ts (the table of docs/real-logs.md).
 *
 * Timing: 40x, no silence longer than 1 s, `stalled` after 5 s without a move. A single long
 * silence of a log (a 10-minute NCCL timeout, minutes of post-shard processing, which real
 * witnesses such as CPU time carry) is 1 s here, so it can never be a stall on its own; 5 s is
 * 200 s of the log's own clock (more than the default kimiService.stallSeconds, 120 s), and the longest
 * stretch of any ready or failed log without a line the extension counts as a move is 3.6 s at
 * this speed. So `stalled` during a ready or failed log (a FALSE STALL: the log goes on to be
 * ready or to fail) means a move of the log (a phase or progress line, a count, HTTP opening,
 * bytes read, GPU memory) was not counted as one on the way through SSH, journal and witnesses.
 * It is judged against the journal's own times (falseStallsIn): a `stalled` that comes STALL_MS
 * after the replay's last line (the machine starved the replay) is no false stall.
 * The measure is live: with `stalled` after 1.5 s instead, the three logs with the longest such
 * stretches (imrocm-glm51-tp2-mi355x-sglang-ready, imrocm-qwen35-tp4-mi355x-sglang-ready,
 * imrocm-kimik25-tp8-b200-vllm-graph-abort) are each shown `stalled` on the way.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoadState, Verdict } from '../../src/monitor/state/loadStateTypes';
import type { WatchOptions, WatchOutcome } from '../../src/monitor/watch/watchTypes';
import { failureCause, failureMessage } from '../../src/present/messages';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { causeFirst, server } from '../util/realLogJudge';
import { sleep, waitFor } from '../util/waitFor';
import { FAST_WATCH, sessionForHost, type TestSession, type TestSessionOptions } from './simHost';

export interface Header {
  readonly id: string;
  readonly engine: 'sglang' | 'vllm';
  readonly outcome: 'ready' | 'failed' | 'hang';
  readonly class: string;
  readonly cause: string;
  readonly exitCode: number | null;
  readonly exitSignal?: string;
}

const PLAN = require(path.join(__dirname, '..', 'gpu-host', 'sglang-sim', 'replay-plan.js')) as {
  splitLines(text: string): string[];
  planReplay(lines: string[], header: Header, opts: object): { steps: { line: string }[]; readyAt: number };
  withAddress(line: string, host: string, port: number): string;
};

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'real-logs');
export const TIMING = { speed: 40, maxGapMs: 1000 };
export const STALL_MS = 5000;
/** How long a hang's `stalled` must hold once shown (the issue saw it fall back after 3-5 s). */
export const STALL_HOLD_MS = 8000;
/** A replay's watch that has not ended by then is a wrong verdict (the longest ready/failed replay takes 15 s). */
const SETTLE_MS = 60_000;

/** Every header of the corpus (each has its log: test/unit/realLogs.unit.test.ts checks it). */
export function headers(): Header[] {
  return fs
    .readdirSync(FIXTURES)
    .filter((n) => n.endsWith('.json'))
    .map((n) => JSON.parse(fs.readFileSync(path.join(FIXTURES, n), 'utf8')) as Header);
}

export const byClass = (a: Header, b: Header): number =>
  a.engine.localeCompare(b.engine) || a.class.localeCompare(b.class) || a.id.localeCompare(b.id);

/** The smallest log of each class (then by id): every class, quickly. */
export function onePerClass(all: readonly Header[]): Header[] {
  const size = (h: Header) => fs.statSync(path.join(FIXTURES, `${h.id}.log`)).size;
  const best = new Map<string, Header>();
  for (const h of all) {
    const cur = best.get(h.class);
    if (!cur || size(h) < size(cur) || (size(h) === size(cur) && h.id < cur.id)) best.set(h.class, h);
  }
  return [...best.values()].sort(byClass);
}

/** What a user is told of the process's end, as systemd reports it. */
export function exitWords(h: Header): RegExp {
  if (h.exitSignal) {
    const n = { SIGKILL: 9, SIGABRT: 6, SIGSEGV: 11, SIGTERM: 15 }[h.exitSignal.replace(/^(?!SIG)/, 'SIG')];
    return new RegExp(`killed by signal ${n ?? '\\d+'}`);
  }
  return new RegExp(`exited with status ${h.exitCode ?? 1}\\b`);
}

/**
 * The line after which the replayed server is ready: SGLang's "fired up", vLLM's HTTP line, or
 * the last line of an excerpt that stops before either (replay-plan.js), as the journal shows it.
 */
function readyLine(h: Header, host: GpuHost): string {
  const plan = PLAN.planReplay(PLAN.splitLines(fs.readFileSync(path.join(FIXTURES, `${h.id}.log`), 'utf8')), h, TIMING);
  const step = plan.steps[plan.readyAt >= 0 ? plan.readyAt : plan.steps.length - 1]!;
  return PLAN.withAddress(step.line, '127.0.0.1', host.httpPort);
}

/** Journal time (ms) of the first entry of the current run whose text is `line`. */
async function journaledAt(host: GpuHost, line: string): Promise<number | undefined> {
  const entries = await host.journalEntries();
  let start = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]!.pid === 1 && entries[i]!.msg.startsWith(`Started ${host.unit}`)) {
      start = i;
      break;
    }
  }
  const hit = entries.slice(start).find((e) => e.pid !== 1 && e.msg === line);
  return hit && Math.floor(hit.t / 1000);
}

/** Journal time (ms) of systemd's line of the current run's main process exit. */
async function exitedAt(host: GpuHost): Promise<number | undefined> {
  const entries = await host.journalEntries();
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.pid === 1 && e.msg.startsWith(`Started ${host.unit}`)) return undefined;
    if (e.pid === 1 && /Main process exited/.test(e.msg)) return e.t / 1000;
  }
  return undefined;
}

export interface StateSeen {
  readonly at: number;
  readonly verdict: Verdict;
  readonly signal?: string;
}

export interface ReplayJudgement {
  readonly header: Header;
  /** Problems with the verdict (ready/failed/stalled held); empty when right. */
  readonly verdict: readonly string[];
  /** Problems with the cause shown; failures only, empty when right. */
  readonly cause: readonly string[];
  /** Each `stalled` shown during a ready or failed log, with what was last seen; always empty for a hang. */
  readonly falseStalls: readonly string[];
  /** The failure's summary and lines as shown, or the verdicts gone through. */
  readonly shown: string;
  /** A failed log: from systemd's journal line of the process's exit to `failed` shown (ms). */
  readonly failedAfterExitMs?: number;
  readonly ms: number;
}

/** The hosts (one per engine) the fixtures are replayed on, started once. */
export class ReplayHosts {
  private readonly hosts = new Map<Header['engine'], GpuHost>();
  private test: TestSession | undefined;

  async start(engines: readonly Header['engine'][]): Promise<void> {
    const wanted = [...new Set(engines)].filter((e) => !this.hosts.has(e));
    const started = await Promise.all(
      wanted.map((engine) =>
        startGpuHost({
          engine,
          ...(engine === 'vllm' ? { unitName: 'vllm-k26' } : {}),
          shards: 4,
          shardBytes: 1024 * 1024,
          sim: { readMBps: 50, warmReadMBps: 50 },
        }),
      ),
    );
    wanted.forEach((e, i) => this.hosts.set(e, started[i]!));
  }

  /** The session of the replay under way (its log), if any. */
  get session(): TestSession | undefined {
    return this.test;
  }

  async stop(): Promise<void> {
    this.test?.dispose();
    this.test = undefined;
    await Promise.all([...this.hosts.values()].map((h) => h.stop()));
    this.hosts.clear();
  }

  /**
   * Replays `h` on its engine's host (restarting the unit) and judges what the user saw; `replay`
   * adds keys of sim.json's replay (docs/replay.md), `session` options of the session, `watch`
   * options of the watch.
   */
  async judge(
    h: Header,
    extra: { replay?: Record<string, unknown>; session?: TestSessionOptions; watch?: Partial<WatchOptions> } = {},
  ): Promise<ReplayJudgement> {
    const started = Date.now();
    const host = this.hosts.get(h.engine);
    if (!host) throw new Error(`no ${h.engine} host started`);
    this.test?.dispose();
    this.test = undefined;
    await host.configureSimulator({ replay: { log: h.id, ...TIMING, ...extra.replay } });
    const test = await sessionForHost(host, extra.session);
    this.test = test;
    const states: StateSeen[] = [];
    const verdicts: Verdict[] = [];
    const options: WatchOptions = { ...FAST_WATCH, stallMs: STALL_MS, ...extra.watch };
    const end = test.session.watch('restart', options, {
      onState: (s: LoadState) => {
        states.push({ at: Date.now(), verdict: s.verdict, signal: s.lastSignal?.text });
        if (verdicts[verdicts.length - 1] !== s.verdict) verdicts.push(s.verdict);
      },
    });
    const verdict: string[] = [];
    const cause: string[] = [];
    let shown = '';
    const falseStalls = async () => (h.outcome === 'hang' ? [] : falseStallsIn(states, await host.journalEntries()));
    if (h.outcome === 'hang') {
      let ended: WatchOutcome | undefined;
      void end.then((o) => {
        ended = o;
      });
      const stalled = await waitFor(() => test.session.state?.verdict === 'stalled' || ended, {
        timeoutMs: 30_000,
      }).then(
        () => true,
        () => false,
      );
      if (!stalled)
        verdict.push(
          `not stalled within 30 s: ${test.session.state?.verdict} (${test.session.state?.lastSignal?.text})`,
        );
      else if (ended) verdict.push(`the watch ended (${ended.end}: ${ended.message}) on a hang`);
      else {
        const stalledAt = Date.now();
        // A window in which nothing may change: the hang prints nothing that moves and moves no witness.
        await sleep(STALL_HOLD_MS);
        const left = states.filter((s) => s.at >= stalledAt && s.verdict !== 'stalled');
        if (left.length)
          verdict.push(
            `stalled did not hold for ${STALL_HOLD_MS / 1000} s: ${left.map((s) => `${s.verdict} (${s.signal})`).join(', ')}`,
          );
        if ((await host.mainPid()) <= 0) verdict.push('the process is gone (a hang)');
      }
      if (verdicts.includes('failed') || verdicts.includes('ready')) verdict.push('ready or failed on a hang');
      test.session.stop('replay judged');
      await settled(h, host, test, end).catch((e: Error) => verdict.push(e.message));
      shown = verdicts.join(' -> ');
      return { header: h, verdict, cause, falseStalls: [], shown, ms: Date.now() - started };
    }
    let outcome: WatchOutcome;
    let failedAfterExitMs: number | undefined;
    try {
      outcome = await settled(h, host, test, end);
    } catch (e) {
      verdict.push((e as Error).message);
      test.session.stop('replay judged');
      if (h.outcome === 'failed') cause.push('the replay did not end failed');
      return {
        header: h,
        verdict,
        cause,
        falseStalls: await falseStalls(),
        shown: verdicts.join(' -> '),
        ms: Date.now() - started,
      };
    }
    if (outcome.end !== h.outcome)
      verdict.push(`ended ${outcome.end}: ${outcome.message} (verdicts ${verdicts.join(' -> ')})`);
    if (h.outcome === 'ready') {
      if (verdicts.includes('failed')) verdict.push(`failed on the way: ${verdicts.join(' -> ')}`);
      if (outcome.end === 'ready') {
        const line = readyLine(h, host);
        const said = await journaledAt(host, line);
        if (said === undefined) verdict.push(`the log's ready line is not in the journal: ${line}`);
        else if (outcome.state.readyAt! < said - 50)
          verdict.push(`ready ${said - outcome.state.readyAt!} ms before the log's ready line`);
        if ((await host.mainPid()) <= 0) verdict.push('the server did not stay up');
      }
      shown = verdicts.join(' -> ');
    } else {
      if (verdicts.includes('ready')) verdict.push(`ready on the way: ${verdicts.join(' -> ')}`);
      const exit = await exitedAt(host);
      const failedSeen = states.find((s) => s.verdict === 'failed')?.at;
      if (exit !== undefined && failedSeen !== undefined) failedAfterExitMs = failedSeen - exit;
      const failure = outcome.state.failure;
      if (!failure) cause.push('no failure shown');
      else {
        if (!exitWords(h).test(failure.summary))
          verdict.push(`the summary does not say how the process ended (${exitWords(h)}): ${failure.summary}`);
        shown = [failure.summary, ...failure.lines].join('\n');
        // First, as the unit suite asks (test/util/realLogJudge): the line named as the cause holds
        // it, and the notification shows no line that only echoes the end before it.
        const named = failureCause(outcome.state);
        const notification = failureMessage(server, outcome);
        const wrong = [
          ...(named?.includes(h.cause) ? [] : [`the cause named is not it: ${JSON.stringify(named)}`]),
          ...causeFirst(notification, h.cause, 'the notification'),
        ];
        if (wrong.length) {
          const inJournal = (await host.journal()).some((l) => l.includes(h.cause));
          cause.push(
            `the cause ${JSON.stringify(h.cause)} is not shown first (the journal has it: ${inJournal}): ${wrong.join('; ')}\n${failure.summary}\n${failure.lines.map((l) => `  | ${l}`).join('\n')}`,
          );
        }
      }
    }
    return {
      header: h,
      verdict,
      cause,
      falseStalls: await falseStalls(),
      shown,
      ms: Date.now() - started,
      ...(failedAfterExitMs !== undefined ? { failedAfterExitMs } : {}),
    };
  }
}

/**
 * Each entry into `stalled` while the log was still printing (the journal has a line of the server
 * less than STALL_MS before it), with what the state said last. Measured against the journal's own
 * times, not against the plan's: when this busy machine lets the replay print nothing for STALL_MS,
 * `stalled` says what the user would see of such a silence and is no move missed; no slack between
 * the plan's longest stretch and STALL_MS is relied on for that.
 */
export function falseStallsIn(
  states: readonly StateSeen[],
  journal: readonly { readonly t: number; readonly pid: number }[],
): string[] {
  const t0 = states[0]?.at ?? 0;
  const printed = journal.filter((e) => e.pid !== 1).map((e) => e.t / 1000);
  const out: string[] = [];
  for (const [i, s] of states.entries()) {
    if (s.verdict !== 'stalled' || states[i - 1]?.verdict === 'stalled') continue;
    const last = Math.max(...printed.filter((t) => t <= s.at));
    const silence = s.at - last;
    if (!Number.isFinite(silence) || silence >= STALL_MS) continue;
    out.push(
      `stalled ${((s.at - t0) / 1000).toFixed(1)} s into the watch, ${(silence / 1000).toFixed(1)} s after the log's last line: ${s.signal ?? ''}`,
    );
  }
  return out;
}

/** The watch's end, or (past SETTLE_MS) an error with what the session last logged and the journal's tail. */
async function settled(h: Header, host: GpuHost, test: TestSession, end: Promise<WatchOutcome>): Promise<WatchOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void host
        .journal()
        .then((j) =>
          reject(
            new Error(
              `the watch of ${h.id} did not end in ${SETTLE_MS / 1000} s; state ${test.session.state?.verdict} (${test.session.state?.lastSignal?.text})\n` +
                `session log:\n${test.logLines.slice(-25).join('\n')}\njournal:\n${j.slice(-15).join('\n')}`,
            ),
          ),
        );
    }, SETTLE_MS);
  });
  try {
    return await Promise.race([end, late]);
  } finally {
    clearTimeout(timer);
  }
}
