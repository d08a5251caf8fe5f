/**
 * What the user is told, once, when a load becomes stalled: what was last seen and since when
 * (docs/phases-and-stalls.md). Pure: the controller shows it as a warning, the agents' `wait`
 * returns it.
 */
import * as l10n from '@vscode/l10n';
import type { NodeState } from '../monitor/state/multiNodeState';
import { nodeIssue } from '../monitor/state/multiNodeState';
import { formatDuration } from '../util/duration';
import type { LoadState } from '../monitor/state/loadStateTypes';
import { clockTime } from '../monitor/state/witnessMoves';
import { activityText, phaseWord } from './stateWords';

/** "loading weights 45% (shard 27/61; last move: shards 27/61)". */
export function lastSeen(state: LoadState): string {
  const phase = phaseWord(state.phase ?? 'starting');
  const shown = state.progress !== undefined ? l10n.t('{0} {1}%', phase, Math.floor(state.progress * 100)) : phase;
  const details: string[] = [];
  if (state.phase === 'loading weights' && state.shards)
    details.push(l10n.t('shard {0}/{1}', state.shards.done, state.shards.total));
  if (state.phase === 'capturing CUDA graphs' && state.cudaGraphBatches)
    details.push(l10n.t('batch {0}/{1}', state.cudaGraphBatches.done, state.cudaGraphBatches.total));
  if (state.activity) details.push(activityText(state.activity));
  if (state.lastProgressWitness) details.push(l10n.t('last move: {0}', state.lastProgressWitness));
  return details.length ? l10n.t('{0} ({1})', shown, details.join('; ')) : shown;
}

/**
 * "Kimi on gpu1 is stalled: no witness has moved for 2m 10s; last seen: loading weights 45%
 * (shard 27/61) at 10:31:02". For a multi-node server, the node that holds the group back is named
 * and its own state is the one described.
 */
export function stallText(serverName: string, state: LoadState, now: number, nodes?: readonly NodeState[]): string {
  const issue = nodes && nodes.length > 0 ? nodeIssue(nodes) : undefined;
  const node = issue?.verdict === 'stalled' ? nodes?.find((n) => n.label === issue.label) : undefined;
  const seen = node?.state ?? state;
  const since = formatDuration(now - seen.lastProgressAt);
  const at = clockTime(seen.lastProgressAt);
  return node
    ? l10n.t(
        'Kimi on {0} is stalled ({1}): no witness has moved for {2}; last seen: {3} at {4}',
        serverName,
        node.label,
        since,
        lastSeen(seen),
        at,
      )
    : l10n.t(
        'Kimi on {0} is stalled: no witness has moved for {1}; last seen: {2} at {3}',
        serverName,
        since,
        lastSeen(seen),
        at,
      );
}

/** The notice to show when this state change made the load stalled; undefined otherwise (said once per stall). */
export function stallNotice(
  serverName: string,
  previous: LoadState | undefined,
  state: LoadState,
  now: number,
  nodes?: readonly NodeState[],
): string | undefined {
  if (state.verdict !== 'stalled' || previous?.verdict === 'stalled') return undefined;
  return stallText(serverName, state, now, nodes);
}
