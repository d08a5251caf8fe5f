/** What a chat request says when its server has left `ready`. No `vscode`. */
import type { ServerProfile } from '../../../config/config';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { loadingPercent } from '../../../present/messages';

/** "the server is stopping", "the server failed", "the server is loading 12%". */
export function serverIs(state: LoadState): string {
  return state.verdict === 'failed' ? 'the server failed' : `the server is ${state.verdict}${loadingPercent(state)}`;
}

/** The server's state when it is not `ready`, waiting at most `ms` for the watch to notice. */
export function stateSoon(
  fleet: Pick<FleetVerbs, 'snapshot' | 'onEvent'>,
  server: ServerProfile,
  ms: number,
): Promise<string | undefined> {
  const now = () => {
    const state = fleet.snapshot(server).state;
    return state && state.verdict !== 'ready' ? serverIs(state) : undefined;
  };
  const first = now();
  if (first) return Promise.resolve(first);
  return new Promise((resolve) => {
    const done = (value: string | undefined) => {
      clearTimeout(timer);
      subscription.dispose();
      resolve(value);
    };
    const timer = setTimeout(() => done(undefined), ms);
    const subscription = fleet.onEvent((event) => {
      if (event.server.name === server.name && event.type === 'state') {
        const value = now();
        if (value) done(value);
      }
    });
  });
}
