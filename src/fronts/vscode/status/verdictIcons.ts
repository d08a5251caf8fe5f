/** The codicon of each state, shared by the status bar and the servers view. Pure. */
import type { Verdict } from '../../../monitor/state/loadStateTypes';

export const VERDICT_ICONS: Readonly<Record<Verdict, string>> = {
  stopped: 'circle-slash',
  stopping: 'sync~spin',
  restarting: 'sync~spin',
  loading: 'loading~spin',
  'warming up': 'flame',
  ready: 'check',
  unhealthy: 'warning',
  failed: 'error',
  unreachable: 'debug-disconnect',
  stalled: 'warning',
};

/** The icon of a verdict; a server with no current state (not watched) gets the server's own. */
export function stateIcon(verdict: Verdict | undefined): string {
  return verdict ? VERDICT_ICONS[verdict] : 'server-process';
}
