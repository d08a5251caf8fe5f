/**
 * One published log stepped line by line through an engine's grammar and the monitor's reducer,
 * as the watcher feeds it (test/util/replayLog.ts plays a log whole; here every step is kept):
 * the state after each line, with the /health verdict the engine's server would give at that
 * point (port closed before its HTTP line, warming, healthy once it is ready), and whether the
 * watcher would then ask for the completion that proves ready. Where the HTTP and ready lines are
 * is decided by the simulator's replay plan (test/gpu-host/sglang-sim/replay-plan.js), never by
 * the engine's own rules under test. Pure.
 */
import * as path from 'node:path';
import type { FixtureHeader } from '../util/replayLog';
import { liveUnit, systemdExitLines } from '../util/replayLog';
import {
  initialState,
  JournalReader,
  reduce,
  wantsCompletionProbe,
  type Engine,
  type LoadState,
  type HttpVerdict,
  type Signal,
} from './engineSurface';

type Unstamped<S> = S extends unknown ? Omit<S, 'at'> & { readonly at?: number } : never;
/** A signal whose time the stepper gives (the next step's) unless it says. */
export type SignalInput = Unstamped<Signal>;

const PLAN = require(path.join(__dirname, '..', 'gpu-host', 'sglang-sim', 'replay-plan.js')) as {
  planReplay(lines: readonly string[], header: FixtureHeader): { httpAt: number; readyAt: number };
};

/** Where the log's server opens its HTTP port and says it is ready (step indexes, -1: not in the log). */
export function planOf(lines: readonly string[], header: FixtureHeader): { httpAt: number; readyAt: number } {
  const plan = PLAN.planReplay(lines, header);
  return { httpAt: plan.httpAt, readyAt: plan.readyAt };
}

export interface Step {
  readonly index: number;
  readonly state: LoadState;
  /** The watcher would now send the 1-token completion (the only way to ready). */
  readonly gateOpen: boolean;
}

export interface Stepped {
  readonly steps: readonly Step[];
  readonly afterLog: LoadState;
  /** Every state the reducer went through, in order (for monotone checks). */
  readonly states: readonly LoadState[];
  apply(signal: SignalInput): LoadState;
  readonly state: LoadState;
  /** Ends the process as systemd reports it (its journal lines, then the unit seen failed). */
  exit(header: FixtureHeader): LoadState;
}

const T0 = Date.UTC(2026, 0, 1);
const LINE_GAP_MS = 20;
const UNIT_EVERY = 200;

function stampOf(line: string): number | undefined {
  const m = /^\[(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(line);
  if (!m) return undefined;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/**
 * Steps `lines` through `engine`'s grammar. `healthAt(i)`: the /health verdict the watcher gets
 * after line i (undefined: no probe then).
 */
export function stepLog(
  engine: Engine,
  lines: readonly string[],
  healthAt: (index: number) => HttpVerdict | undefined = () => undefined,
): Stepped {
  const reader = new JournalReader(engine.grammar);
  const states: LoadState[] = [];
  let state = initialState(T0);
  let at = T0;
  const apply = (signal: SignalInput): LoadState => {
    at = Math.max(at, signal.at ?? at + LINE_GAP_MS);
    state = reduce(state, { ...signal, at });
    states.push(state);
    return state;
  };
  apply({ kind: 'restartRequested', at: T0 });
  const first = lines.map(stampOf).find((t) => t !== undefined);
  const startedAt = (first ?? T0 + 1_000) - 1_000;
  apply({ kind: 'tiedToRun', at: startedAt, unit: liveUnit(startedAt) });
  const steps: Step[] = [];
  lines.forEach((line, index) => {
    const lineAt = Math.max(at + LINE_GAP_MS, stampOf(line) ?? 0);
    for (const { event, text } of reader.readLines(line, lineAt)) apply({ kind: 'journal', at: lineAt, event, text });
    if (index % UNIT_EVERY === UNIT_EVERY - 1) apply({ kind: 'unit', unit: liveUnit(startedAt) });
    const health = healthAt(index);
    if (health) apply({ kind: 'http', result: health, detail: `/health ${health}` });
    steps.push({ index, state, gateOpen: wantsCompletionProbe(state) });
  });
  apply({ kind: 'unit', unit: liveUnit(startedAt) });
  const afterLog = state;
  return {
    steps,
    afterLog,
    states,
    apply,
    get state() {
      return state;
    },
    exit(header) {
      const end = systemdExitLines({ exitCode: header.exitCode ?? null, exitSignal: header.exitSignal ?? null });
      for (const line of end.lines) {
        const lineAt = at + LINE_GAP_MS;
        for (const { event, text } of reader.readLines(line, lineAt))
          apply({ kind: 'journal', at: lineAt, event, text });
      }
      return apply({
        kind: 'unit',
        unit: {
          ...liveUnit(startedAt),
          activeState: 'failed',
          subState: 'failed',
          mainPid: 0,
          execMainExitedAt: at + LINE_GAP_MS,
          ...end.unit,
        },
      });
    },
  };
}
