/**
 * The load state and a stand-in on the server's port (host/portOwner.ts): while another process
 * holds the listening socket its answers are not the server's and move nothing. Pure.
 */
import { standInText, standInWho, type StandIn } from '../../host/portOwner';
import type { LoadState } from './loadStateTypes';
import { standInAnswered, standInGone } from '../../present/words/witnessWords';

/**
 * A stand-in is named, or is gone: the state to finish and its signal text; undefined when
 * nothing changed. A phase that rested on the stand-in's HTTP answers alone goes back to what
 * the other witnesses said.
 */
export function listenerChange(
  state: LoadState,
  standIn: StandIn | undefined,
): { next: LoadState; text: string | undefined } | undefined {
  const before = state.standIn;
  if (before?.pid === standIn?.pid && before?.command === standIn?.command && before?.port === standIn?.port)
    return undefined;
  if (!standIn) {
    const text = before ? standInGone(before.port, standInWho(before)) : undefined;
    return { next: { ...state, standIn: undefined }, text };
  }
  let next: LoadState = { ...state, standIn, http: undefined, completion: undefined };
  const back = state.phaseBeforeHttp;
  if (back && state.phase === 'warming up') {
    const phaseTimes = { ...state.phaseTimes };
    delete phaseTimes['warming up'];
    next = { ...next, phase: back.phase, phaseTimes, phaseBeforeHttp: undefined };
  }
  return { next, text: standInText(standIn) };
}

/** An HTTP answer while a stand-in holds the port: said in the last signal, counted nowhere. */
export function standInAnswer(state: LoadState, at: number, text: string): LoadState {
  const said = standInAnswered(text, state.standIn?.pid);
  if (state.lastSignal?.text === said) return state;
  return { ...state, lastSignal: { at, text: said } };
}
