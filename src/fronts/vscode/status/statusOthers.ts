/**
 * The status bar's count of the other servers that are not ready ("· 1 failed", "· 2 not
 * ready") and their names for the tooltip. The words are the fleet report's. Pure.
 */
import type { ServerSnapshot } from '../../../fleet/fleetTypes';
import { serverReport } from '../../../present/report';

export interface OtherServers {
  /** Appended to the status text, e.g. " · 1 failed"; "" when every other server is ready. */
  readonly text: string;
  /** One line per server that is not ready, for the tooltip. */
  readonly lines: readonly string[];
}

export const NO_OTHERS: OtherServers = { text: '', lines: [] };

export function otherServers(
  snapshots: readonly ServerSnapshot[],
  activeName: string | undefined,
  now: number = Date.now(),
): OtherServers {
  const notReady = snapshots
    .filter((s) => s.server.name !== activeName)
    .map((s) => serverReport(s, now))
    .filter((r) => r.state !== 'ready');
  if (notReady.length === 0) return NO_OTHERS;
  const words = new Set(notReady.map((r) => r.state));
  const word = words.size === 1 ? notReady[0]!.state : 'not ready';
  return {
    text: ` · ${notReady.length} ${word}`,
    lines: notReady.map(
      (r) =>
        `${r.server}: ${r.state}${r.progressPercent !== null ? ` ${r.progressPercent}%` : ''}${r.lastError ? ` (${r.lastError.slice(0, 120)})` : ''}`,
    ),
  };
}
