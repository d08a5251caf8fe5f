/**
 * A multi-node server's state, folded from its nodes' states (node rank 0 first). Pure.
 *
 * - failed when any node failed (its summary and lines, named), unreachable when any node's
 *   connection is down, stalled when any node makes no progress while the others wait;
 * - progress and phase are the least advanced node's, the ETA the latest node's;
 * - ready only when every node is ready (rank 0 answered a completion; the other ranks finished
 *   loading and their units run): one node still loading keeps the server loading.
 * Everything else (HTTP, completion, the process followed) is rank 0's: it is the server.
 */
import { phaseRank } from '../../engine/events';
import { distributedCause } from '../../engine/distributed';
import type { LoadState, Verdict } from './loadStateTypes';
import {
  connectionLostWord,
  failedWord,
  failureMeaning,
  nodeBehind,
  nodeNoProgress,
  nodeStopped,
  nodeUnreachable,
} from '../../present/words/failureWords';

export interface NodeState {
  /** "node 1 (gpu-b)". */
  readonly label: string;
  readonly state: LoadState | undefined;
}

/** Why the server is not what rank 0 alone would say, naming the node; undefined when all is well. */
export interface NodeIssue {
  readonly label: string;
  readonly verdict: Extract<Verdict, 'failed' | 'unreachable' | 'stalled' | 'stopped'>;
  readonly text: string;
}

const WAITED_FOR_OTHERS = new Set(['rendezvous-timeout', 'ranks-did-not-finish-loading', 'nccl-timeout']);

function causeOf(state: LoadState) {
  return distributedCause(state.failure?.lines ?? state.recentErrors);
}

function failureText(state: LoadState, others: readonly NodeState[]): string {
  const summary = state.failure?.summary ?? failedWord();
  const cause = causeOf(state);
  if (!cause) return summary;
  // It gave up waiting for the others: say which ones were behind.
  const behind = WAITED_FOR_OTHERS.has(cause.kind)
    ? others
        .filter((n) => n.state === undefined || (n.state.failure === undefined && n.state.readyAt === undefined))
        .map((n) => nodeBehind(n.label, n.state ? describeBrief(n.state) : undefined))
    : [];
  return failureMeaning(summary, cause.meaning, behind);
}

function describeBrief(state: LoadState): string {
  return state.phase && state.phase !== state.verdict ? `${state.verdict}, ${state.phase}` : state.verdict;
}

/** The first node that breaks the group, most serious first: failed, unreachable, stopped while others run, stalled (the least advanced). */
export function nodeIssue(nodes: readonly NodeState[]): NodeIssue | undefined {
  const known = nodes.filter((n): n is NodeState & { state: LoadState } => n.state !== undefined);
  // A node that failed on its own comes before one that only gave up waiting for it.
  const failures = known.filter((n) => n.state.failure !== undefined);
  const failed = failures.find((n) => !WAITED_FOR_OTHERS.has(causeOf(n.state)?.kind ?? '')) ?? failures[0];
  if (failed)
    return {
      label: failed.label,
      verdict: 'failed',
      text: `${failed.label}: ${failureText(
        failed.state,
        nodes.filter((n) => n !== failed),
      )}`,
    };
  const down = known.find((n) => !n.state.connected);
  if (down)
    return {
      label: down.label,
      verdict: 'unreachable',
      text: nodeUnreachable(down.label, down.state.connectionError),
    };
  const stopped = known.filter((n) => n.state.verdict === 'stopped');
  if (stopped.length > 0 && stopped.length < nodes.length) {
    const first = stopped[0]!;
    return {
      label: first.label,
      verdict: 'stopped',
      text: nodeStopped(first.label),
    };
  }
  // A node that waits for the others (at a barrier) stalls too: only the least advanced one is the cause.
  const stalled =
    known.length > 0 ? known[known.map((n) => n.state).indexOf(leastAdvanced(known.map((n) => n.state)))] : undefined;
  if (stalled && stalled.state.verdict === 'stalled')
    return {
      label: stalled.label,
      verdict: 'stalled',
      text: nodeNoProgress(stalled.label, stalled.state.lastSignal?.text),
    };
  return undefined;
}

function leastAdvanced(states: readonly LoadState[]): LoadState {
  let least = states[0]!;
  for (const s of states.slice(1)) {
    const rank = (x: LoadState) => (x.phase === undefined ? -1 : phaseRank(x.phase));
    if ((s.progress ?? -1) < (least.progress ?? -1) || (s.progress === least.progress && rank(s) < rank(least)))
      least = s;
  }
  return least;
}

/**
 * The server's state from its nodes' (rank 0 first); undefined until rank 0 has one. A node
 * not yet watched counts as not ready.
 */
export function foldNodeStates(nodes: readonly NodeState[]): LoadState | undefined {
  const rank0 = nodes[0]?.state;
  if (!rank0) return undefined;
  const states = nodes.map((n) => n.state).filter((s): s is LoadState => s !== undefined);
  const allKnown = states.length === nodes.length;
  const issue = nodeIssue(nodes);
  const allReady = allKnown && states.every((s) => s.readyAt !== undefined && s.failure === undefined);
  const least = leastAdvanced(states);
  const progresses = states.map((s) => s.progress);
  const progress =
    progresses.some((p) => p === undefined) || !allKnown
      ? progresses.some((p) => p !== undefined)
        ? 0
        : undefined
      : Math.min(...(progresses as number[]));
  const etas = states.map((s) => s.eta);
  const eta =
    etas.every((e) => e !== undefined) && allKnown
      ? etas.reduce((a, b) => (b!.readyAt > a!.readyAt ? b : a))
      : undefined;
  const confirmed = states.map((s) => s.confirmedAt);
  const confirmedAt = confirmed.every((c) => c !== undefined) ? Math.min(...(confirmed as number[])) : undefined;

  let verdict: Verdict;
  if (issue?.verdict === 'failed') verdict = 'failed';
  else if (issue?.verdict === 'unreachable') verdict = 'unreachable';
  else if (allReady) verdict = rank0.verdict;
  else if (issue?.verdict === 'stopped') verdict = rank0.readyAt !== undefined ? 'failed' : 'stopped';
  else if (states.length === nodes.length && states.every((s) => s.verdict === 'stopped')) verdict = 'stopped';
  else if (issue?.verdict === 'stalled') verdict = 'stalled';
  else if (rank0.readyAt !== undefined || states.every((s) => s.readyAt !== undefined || s.phase === 'warming up'))
    verdict = 'warming up';
  else if (states.some((s) => s.verdict === 'stopping')) verdict = 'stopping';
  else if (states.some((s) => s.verdict === 'restarting')) verdict = 'restarting';
  else verdict = least.verdict === 'ready' ? 'warming up' : least.verdict;

  const failedNode = nodes.find((n) => n.label === issue?.label && n.state?.failure !== undefined);
  const failure =
    failedNode?.state?.failure !== undefined
      ? { summary: issue?.text ?? failedNode.label, lines: failedNode.state.failure.lines }
      : issue?.verdict === 'stopped' && verdict === 'failed'
        ? { summary: issue.text, lines: [] }
        : undefined;
  const readyAt = allReady ? Math.max(...states.map((s) => s.readyAt ?? 0)) : undefined;
  const down = nodes.find((n) => n.state !== undefined && !n.state.connected);
  const lastSignal = issue
    ? { at: Math.max(...states.map((s) => s.lastSignal?.at ?? 0)), text: issue.text }
    : least.lastSignal;
  return {
    ...rank0,
    verdict,
    phase: allReady ? rank0.phase : least.phase,
    shards: least.shards,
    cudaGraphBatches: least.cudaGraphBatches,
    activity: allReady ? undefined : least.activity,
    progress: allReady ? 1 : progress,
    lastProgressAt: Math.min(...states.map((s) => s.lastProgressAt)),
    // The witness of the node that moved longest ago: the pair "last seen ... at" stays one node's.
    lastProgressWitness: states.reduce((a, b) => (b.lastProgressAt < a.lastProgressAt ? b : a)).lastProgressWitness,
    lastSignal,
    readyAt,
    failure,
    recentErrors: failedNode?.state?.recentErrors ?? rank0.recentErrors,
    connected: down === undefined,
    downSince: down?.state?.downSince,
    connectionError: down ? `${down.label}: ${down.state?.connectionError ?? connectionLostWord()}` : undefined,
    connectionErrorKind: down?.state?.connectionErrorKind,
    stalled: issue?.verdict === 'stalled',
    confirmedAt,
    eta: readyAt === undefined && failure === undefined ? eta : undefined,
  };
}
