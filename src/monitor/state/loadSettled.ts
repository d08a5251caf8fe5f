/** The signals a load that has ended (ready or failed) still takes in. Pure. */
import type { LoadState, Signal } from './loadStateTypes';
import { kept, withErrorLine } from './loadProgress';
import { lostAfterReady } from './unitFailure';
import { verdictOf } from './loadVerdict';
import { foldConnection } from './loadReadings';

/**
 * A load that has ended (ready or failed) still takes in what keeps it true: the connection,
 * /health answers after ready (three failures in a row: unhealthy), the unit (a process gone
 * after ready: failed), journal error lines (the cause of a failure).
 */
export function reduceSettled(state: LoadState, signal: Signal): LoadState {
  const settle = (next: LoadState, text?: string): LoadState => {
    const verdict = verdictOf(next);
    const lastSignal = text !== undefined ? { at: signal.at, text } : next.lastSignal;
    return { ...next, verdict, lastSignal };
  };
  const serving = state.readyAt !== undefined && state.failure === undefined;
  switch (signal.kind) {
    case 'journal': {
      if (signal.event.type !== 'error') return state;
      const text = kept(signal.text);
      // Serving: only the last lines (a crash after days of request errors is told by its own).
      const recentErrors = withErrorLine(state.recentErrors, text, !serving);
      const failure = state.failure ? { ...state.failure, lines: recentErrors } : undefined;
      return settle({ ...state, recentErrors, failure }, serving ? text : undefined);
    }
    case 'http': {
      if (!serving) return state;
      const healthFailures = signal.result === 'healthy' ? 0 : state.healthFailures + 1;
      const next = settle({ ...state, http: signal.result, healthFailures, confirmedAt: signal.at });
      const changed = next.verdict !== state.verdict || (signal.result !== state.http && healthFailures <= 1);
      return changed ? { ...next, lastSignal: { at: signal.at, text: `HTTP: ${signal.detail}` } } : next;
    }
    case 'unit': {
      const observed: LoadState = { ...state, unit: signal.unit, confirmedAt: signal.at };
      const why = serving ? lostAfterReady(signal.unit) : undefined;
      if (!why) return settle(observed);
      return settle({ ...observed, failure: { summary: why, lines: state.recentErrors } }, why);
    }
    case 'connection': {
      if (signal.up === state.connected) return state;
      const { next, text } = foldConnection(state, signal, false);
      return settle(next, text);
    }
    default:
      return state;
  }
}
