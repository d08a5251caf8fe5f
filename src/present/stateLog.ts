/** The log line a change of state makes (every front's log, and `logs`). Pure. */
import type { LoadState } from '../monitor/state/loadStateTypes';
import type { LogLevel } from '../monitor/watch/watchTypes';
import { describe } from './messages';

/** Each change of state word or phase is a line; a named quiet step too; a new signal a trace. */
export function stateChangeLine(
  state: LoadState,
  previous: LoadState,
): { readonly level: LogLevel; readonly text: string } | undefined {
  if (state.verdict !== previous.verdict || state.phase !== previous.phase) {
    const why = state.lastSignal ? ` — ${state.lastSignal.text}` : '';
    const level: LogLevel =
      state.verdict === 'failed' || state.verdict === 'unreachable'
        ? 'error'
        : state.verdict === 'stalled' || state.verdict === 'unhealthy'
          ? 'warn'
          : 'info';
    return { level, text: `${describe(state)}${why}` };
  }
  // A named quiet step begins: said in the log, in the extension's words.
  if (state.activity && state.activity.kind !== previous.activity?.kind)
    return { level: 'info', text: describe(state) };
  if (state.lastSignal !== previous.lastSignal && state.lastSignal)
    return { level: 'trace', text: state.lastSignal.text };
  return undefined;
}
