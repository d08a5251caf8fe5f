/**
 * What the user is told, once, when a load becomes stalled: what was last seen and since when
 * (docs/phases-and-stalls.md). Pure: the controller shows it as a warning, the agents' `wait`
 * returns it.
 */
import { activityLabel } from '../engine/activity';
import type { NodeState } from '../monitor/state/multiNodeState';
import { nodeIssue } from '../monitor/state/multiNodeState';
import { formatDuration } from '../util/duration';
import type { LoadState } from '../monitor/state/loadStateTypes';
import { clockTime } from '../monitor/state/witnessMoves';

/** "loading weights 45% (shard 27/61; last move: shards 27/61)". */
export function lastSeen(state: LoadState): string {
  const phase = state.phase ?? 'starting';
  const percent = state.progress !== undefined ? ` ${Math.floor(state.progress * 100)}%` : '';
  const details: string[] = [];
  if (state.phase === 'loading weights' && state.shards)
    details.push(`shard ${state.shards.done}/${state.shards.total}`);
  if (state.phase === 'capturing CUDA graphs' && state.cudaGraphBatches)
    details.push(`batch ${state.cudaGraphBatches.done}/${state.cudaGraphBatches.total}`);
  if (state.activity) details.push(activityLabel(state.activity));
  if (state.lastProgressWitness) details.push(`last move: ${state.lastProgressWitness}`);
  return `${phase}${percent}${details.length ? ` (${details.join('; ')})` : ''}`;
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
  const who = node ? ` (${node.label})` : '';
  return `Kimi on ${serverName} is stalled${who}: no witness has moved for ${formatDuration(now - seen.lastProgressAt)}; last seen: ${lastSeen(seen)} at ${clockTime(seen.lastProgressAt)}`;
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
