/**
 * A published server log played through the monitor's real pipeline, as the watcher feeds it:
 * each line one journal entry into JournalReader.readLines, each event a `journal` signal into
 * the reducer, with `tiedToRun`/`unit` signals for a live unit; for a process that ends, systemd's
 * own journal lines ("Main process exited", "Failed with result") and the unit seen failed.
 * Pure apart from loadFixtures (test/fixtures/real-logs/<id>.log + <id>.json).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import type { LoadPhase } from '../../src/engine/events';
import type { ServiceStatus } from '../../src/target/target';
import { JournalReader } from '../../src/engine/logReader';
import type { LogGrammar } from '../../src/engine/engine';

export interface FixtureHeader {
  readonly id: string;
  readonly notes?: string;
  readonly engine: 'sglang' | 'vllm';
  readonly outcome: 'ready' | 'failed' | 'hang';
  readonly class: string;
  /** For a failure: words a correct monitor shows the user. */
  readonly cause: string;
  readonly exitCode?: number | null;
  readonly exitSignal?: string | null;
}

export interface Fixture {
  readonly header: FixtureHeader;
  readonly lines: readonly string[];
}

export const REAL_LOGS_DIR = join(__dirname, '..', 'fixtures', 'real-logs');

/** Every `<id>.log` of the folder that has its `<id>.json` header. */
export function loadFixtures(dir: string = REAL_LOGS_DIR): Fixture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => {
      const id = f.slice(0, -'.log'.length);
      const header = JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')) as FixtureHeader;
      // journald stores one entry per line; a trailing newline is not an entry.
      const lines = readFileSync(join(dir, f), 'utf8').replace(/\n$/, '').split('\n');
      return { header: { ...header, id }, lines };
    });
}

export interface ProcessEnd {
  readonly exitCode?: number | null;
  readonly exitSignal?: string | null;
}

export interface Replay {
  /** The state after the log's last line (the process still running). */
  readonly afterLog: LoadState;
  /** The state after the end asked for (exit, ready probe or stall tick); afterLog when none. */
  readonly final: LoadState;
  /** The phases in the order they were first seen. */
  readonly phases: readonly LoadPhase[];
  /** Every verdict the state went through, in order (repeats collapsed). */
  readonly verdicts: readonly string[];
  /** Time of the last line (epoch ms). */
  readonly lastLineAt: number;
}

const UNIT = 'sglang-replay.service';
const PID = 4242;
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const LINE_GAP_MS = 20;
/** A look at the unit every this many lines, as the watcher's backstop does. */
const UNIT_EVERY = 200;

/** The replayed unit as `systemctl show` gives it while its process runs. */
export function liveUnit(startedAt: number): ServiceStatus {
  return {
    loadState: 'loaded',
    activeState: 'active',
    subState: 'running',
    mainPid: PID,
    nRestarts: 0,
    result: 'success',
    execMainStartedAt: startedAt,
    dropInPaths: [],
    needDaemonReload: false,
    id: UNIT,
    invocationId: 'replay-1',
  };
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGTERM: 15,
};
const STATUS_NAMES: Record<number, string> = {
  1: 'FAILURE',
  2: 'INVALIDARGUMENT',
  3: 'NOTIMPLEMENTED',
  4: 'NOPERMISSION',
  5: 'NOTINSTALLED',
  6: 'NOTCONFIGURED',
  7: 'NOTRUNNING',
};
const SIGNAL_NAMES: Record<number, string> = {
  1: 'HUP',
  2: 'INT',
  3: 'QUIT',
  6: 'ABRT',
  9: 'KILL',
  11: 'SEGV',
  15: 'TERM',
};

/** systemd's own lines for a main process that ended, as journalctl shows them. */
export function systemdExitLines(end: ProcessEnd, unit = UNIT): { lines: string[]; unit: Partial<ServiceStatus> } {
  const signal = end.exitSignal ? SIGNALS[end.exitSignal] : undefined;
  if (signal !== undefined) {
    return {
      lines: [
        `${unit}: Main process exited, code=killed, status=${signal}/${SIGNAL_NAMES[signal] ?? signal}`,
        `${unit}: Failed with result 'signal'.`,
      ],
      unit: { result: 'signal', execMainCode: 'killed', execMainStatus: signal },
    };
  }
  const code = end.exitCode ?? 1;
  return {
    lines: [
      `${unit}: Main process exited, code=exited, status=${code}/${STATUS_NAMES[code] ?? code}`,
      `${unit}: Failed with result 'exit-code'.`,
    ],
    unit: { result: 'exit-code', execMainCode: 'exited', execMainStatus: code },
  };
}

/** SGLang's `[2025-03-08 12:29:21 TP1]` stamp, when the line has one: replays keep the log's own pace for rank de-duplication. */
function stampOf(line: string): number | undefined {
  const m = /^\[(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(line);
  if (!m) return undefined;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

export interface ReplayOptions {
  /** After the log: the process ends so (systemd's lines, then the unit seen failed). */
  readonly end?: ProcessEnd;
  /** After the log: /health 200 then a 1-token completion that passes, as the watcher probes. */
  readonly probeReady?: boolean;
  /** After the log: a tick this long after the last progress the log made (lines that are not progress may follow it). */
  readonly stallTickMs?: number;
  readonly stallMs?: number;
  /** The engine's log grammar (engineById(header.engine).grammar); by default every engine's words. */
  readonly grammar?: LogGrammar;
}

export function replayLog(lines: readonly string[], options: ReplayOptions = {}): Replay {
  const stallMs = options.stallMs ?? 120_000;
  const reader = new JournalReader(options.grammar);
  const phases: LoadPhase[] = [];
  const verdicts: string[] = [];
  let state = initialState(T0);
  const apply = (signal: Signal): void => {
    state = reduce(state, signal);
    if (state.phase && !phases.includes(state.phase)) phases.push(state.phase);
    if (verdicts[verdicts.length - 1] !== state.verdict) verdicts.push(state.verdict);
  };
  const feed = (message: string, at: number): void => {
    for (const { event, text } of reader.readLines(message, at)) apply({ kind: 'journal', at, event, text });
  };

  apply({ kind: 'restartRequested', at: T0 });
  const first = lines.map(stampOf).find((t) => t !== undefined);
  let at = (first ?? T0 + 1_000) - 1_000;
  const startedAt = at;
  apply({ kind: 'tiedToRun', at, unit: liveUnit(startedAt) });
  lines.forEach((line, i) => {
    at = Math.max(at + LINE_GAP_MS, stampOf(line) ?? 0);
    feed(line, at);
    if (i % UNIT_EVERY === UNIT_EVERY - 1) apply({ kind: 'unit', at, unit: liveUnit(startedAt) });
  });
  const lastLineAt = at;
  apply({ kind: 'unit', at, unit: liveUnit(startedAt) });
  const afterLog = state;

  if (options.end) {
    const exit = systemdExitLines(options.end);
    for (const line of exit.lines) feed(line, (at += LINE_GAP_MS));
    apply({
      kind: 'unit',
      at: (at += LINE_GAP_MS),
      unit: {
        ...liveUnit(startedAt),
        activeState: 'failed',
        subState: 'failed',
        mainPid: 0,
        execMainExitedAt: at,
        ...exit.unit,
      },
    });
  }
  if (options.probeReady) {
    apply({ kind: 'http', at: (at += 1_000), result: 'healthy', detail: '/health 200' });
    apply({ kind: 'completion', at: (at += 100), ok: true, detail: '1-token completion answered ("Hi")' });
  }
  if (options.stallTickMs !== undefined)
    apply({ kind: 'tick', at: Math.max(lastLineAt, afterLog.lastProgressAt + options.stallTickMs), stallMs });
  return { afterLog, final: state, phases, verdicts, lastLineAt };
}
