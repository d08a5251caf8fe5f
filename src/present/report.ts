/**
 * One wording of a server's state for every front that is not the status bar: the language
 * model tools, the MCP server and the CLI say the same words, in text a model or a person
 * reads and in JSON a script parses. Pure.
 */
import * as l10n from '@vscode/l10n';
import { etaText, formatEta, visibleEta } from './etaText';
import { formatDuration } from '../util/duration';
import type { LoadState } from '../monitor/state/loadStateTypes';
import { causeText } from '../engine/rootCause';
import { describe, loadStartedAt } from './messages';
import { refusalShownWord, refusalWord } from './refusalWords';
import type { ServerSnapshot, WaitResult } from './serverSnapshot';
import { nodeIssue } from '../monitor/state/multiNodeState';
import { activityText, verdictWord } from './stateWords';
import { stallText } from './stallNotice';
import { breakdownLine } from './loadSummary';
import type { LoadBreakdown } from '../monitor/history/loadBreakdown';
import { endSoonWord, isQueued, queuedEta, queueText, queuedWord } from './queueWords';
import { urlForNode } from '../config/nodeUrl';

/** What every front reports about one server. */
export interface ServerReport {
  readonly server: string;
  readonly host: string;
  readonly unit: string;
  /** The state word: ready, loading, failed, ..., "not watched", or the refusal ("host key changed"). */
  readonly state: string;
  readonly watching: boolean;
  readonly phase: string | null;
  /** The long quiet step under way inside the phase, in the extension's words (e.g. "compiling DeepGEMM kernels ..."). */
  readonly activity: string | null;
  /** While stalled: what was last seen and since when. */
  readonly stall: string | null;
  /** 0..100 while loading. */
  readonly progressPercent: number | null;
  /** Seconds left, when the ETA is known and not disproved by the clock. */
  readonly etaSeconds: number | null;
  /** ISO time the current state (or the load) began. */
  readonly since: string | null;
  /** ISO time the host last confirmed the state. */
  readonly confirmedAt: string | null;
  readonly lastError: string | null;
  /** The last parser verification, e.g. "Parsers verified for agents (16 checks)"; null when never run. */
  readonly parsers: string | null;
  /** A parser verification under way: where it is ("verifying 5/16 · reasoning (stream) waiting 42 s (...)"): present only while one runs. */
  readonly verifying?: string;
  /** Ready: how the load of the process serving now went (its phases, rates, against the load before). */
  readonly lastLoad?: string;
  /** One line a model or a person reads. */
  readonly summary: string;
  /** Waiting in a scheduler's queue: why, and its estimated start ("waiting for Resources; the scheduler expects to start it at 14:05 (in 1h 5m)"). */
  readonly queue?: string;
  /** ISO time the manager ends the run whatever it does (a batch job's time limit). */
  readonly endsAt?: string;
  /** The manager's own id of the run (a batch job's id), when it has one. */
  readonly job?: string;
  /** The node the server runs on when that is not the SSH host (a batch job's node); absent while it has none. */
  readonly node?: string;
  /** Where the server answers: its url, with the node it runs on put in (as written while it has none). */
  readonly url: string;
  /** A multi-node server's nodes, rank 0 first: each one's state word and progress. */
  readonly nodes?: readonly {
    readonly node: string;
    readonly state: string;
    readonly progressPercent: number | null;
  }[];
}

function stateWord(snapshot: ServerSnapshot): string {
  if (snapshot.refusal) return refusalWord(snapshot.refusal);
  if (!snapshot.state || !snapshot.watching) return 'not watched';
  return isQueued(snapshot.state) ? 'queued' : snapshot.state.verdict;
}

/** The state word as a user reads it (stateWord's value in the display language). */
export function shownWord(snapshot: ServerSnapshot, word: string): string {
  return snapshot.refusal ? refusalShownWord(snapshot.refusal) : verdictWord(word as Parameters<typeof verdictWord>[0]);
}

/**
 * The line of a failure that says why: its root cause (engine/rootCause: the first exception of
 * the first failing rank, an argparse error, an NCCL timeout...), never an echo of the end.
 */
export function causeLine(lines: readonly string[]): string | undefined {
  return causeText(lines);
}

function lastError(snapshot: ServerSnapshot, state: LoadState | undefined): string | null {
  if (snapshot.refusal) return snapshot.refusal.message;
  if (!state) return null;
  if (state.failure) {
    const cause = causeLine(state.failure.lines);
    return `${state.failure.summary}${cause ? ` (${cause})` : ''}`;
  }
  if (!state.connected && state.connectionError) return state.connectionError;
  if (state.completion && !state.completion.ok && state.readyAt === undefined)
    return l10n.t('completion probe: {0}', state.completion.detail);
  return null;
}

/** "job 42 on n1", "job 42" (still in the queue): the run a scheduler names, where it runs; undefined for a run without a job. */
function jobWords(job: string | undefined, node: string | undefined): string | undefined {
  if (job === undefined) return undefined;
  return node !== undefined ? l10n.t('job {0} on {1}', job, node) : l10n.t('job {0}', job);
}

/** The breakdown's line while the process whose load it explains serves (a load that ended before it started is another's). */
function servingLoadLine(lastLoad: LoadBreakdown | undefined, state: LoadState): string | undefined {
  if (!lastLoad || state.verdict !== 'ready') return undefined;
  return lastLoad.startedAt + lastLoad.totalMs >= (state.processStartedAt ?? 0) ? breakdownLine(lastLoad) : undefined;
}

export function serverReport(snapshot: ServerSnapshot, now: number = Date.now()): ServerReport {
  const { server, state } = snapshot;
  const word = stateWord(snapshot);
  const watched = snapshot.watching && state !== undefined && !snapshot.refusal;
  const loading =
    watched && (state.verdict === 'loading' || state.verdict === 'warming up' || state.verdict === 'stalled');
  const progress = loading && state.progress !== undefined ? Math.floor(state.progress * 100) : null;
  // A queued run's ready estimate counts the wait for the scheduler's start (none when it gives no start).
  const queuedReady = watched ? queuedEta(state, now) : undefined;
  const etaMs =
    queuedReady?.kind === 'estimate' ? queuedReady.readyAt - now : loading ? visibleEta(state.eta, now) : undefined;
  const since = state ? (state.readyAt ?? loadStartedAt(state)) : undefined;
  const error = lastError(snapshot, state);
  const queued = watched ? queuedWord(state, now) : undefined;
  const queue = watched ? queueText(state, now) : undefined;
  const parts = [`${server.name}: ${watched ? (queued ?? describe(state)) : shownWord(snapshot, word)}`];
  const shownEta = loading ? etaText(state.eta, now) : undefined;
  if (shownEta !== undefined) parts.push(l10n.t('about {0}', shownEta));
  if (watched && state.readyAt !== undefined && state.verdict === 'ready')
    parts.push(l10n.t('ready for {0}', formatDuration(now - state.readyAt)));
  else if (watched && since !== undefined) parts.push(l10n.t('for {0}', formatDuration(now - since)));
  if (!watched && state) parts.push(l10n.t('last seen {0}', describe(state)));
  const job = watched ? state.unit?.jobId : undefined;
  const node = watched ? state.unit?.node : undefined;
  const jobPart = jobWords(job, node);
  if (jobPart) parts.push(jobPart);
  // Without a node the url is shown as written (a `{node}` one waits for the job's node).
  const resolved = node !== undefined ? urlForNode(server.url, node) : undefined;
  const lastLoad = watched ? servingLoadLine(snapshot.lastLoad, state) : undefined;
  if (lastLoad) parts.push(lastLoad);
  const endSoon = watched ? endSoonWord(state, now) : undefined;
  if (endSoon) parts.push(l10n.t('{0} (time limit)', endSoon));
  if (error) parts.push(error);
  // A multi-node server: the node that holds the group back, named (a failure already names it).
  const issue = snapshot.nodes && watched && !state.failure ? nodeIssue(snapshot.nodes) : undefined;
  if (issue && issue.text !== error) parts.push(issue.text);
  if (snapshot.verifying) parts.push(snapshot.verifying.line);
  else if (snapshot.verification) parts.push(snapshot.verification);
  return {
    server: server.name,
    host: server.host ?? 'local',
    unit: server.unit,
    state: word,
    watching: snapshot.watching,
    phase: state?.phase ?? null,
    activity: loading && state.activity ? activityText(state.activity) : null,
    stall: watched && state.verdict === 'stalled' ? stallText(server.name, state, now, snapshot.nodes) : null,
    progressPercent: progress,
    etaSeconds: etaMs !== undefined ? Math.round(etaMs / 1000) : null,
    since: since !== undefined ? new Date(since).toISOString() : null,
    confirmedAt: state?.confirmedAt !== undefined ? new Date(state.confirmedAt).toISOString() : null,
    lastError: error,
    parsers: snapshot.verification ?? null,
    ...(snapshot.verifying ? { verifying: snapshot.verifying.line } : {}),
    ...(lastLoad !== undefined ? { lastLoad } : {}),
    ...(queue !== undefined ? { queue } : {}),
    ...(watched && state.unit?.endsAt !== undefined && state.unit.mainPid > 0
      ? { endsAt: new Date(state.unit.endsAt).toISOString() }
      : {}),
    ...(job !== undefined ? { job } : {}),
    ...(node !== undefined ? { node } : {}),
    url: resolved && 'url' in resolved ? resolved.url : server.url,
    summary: parts.join(' · '),
    ...(snapshot.nodes
      ? {
          nodes: snapshot.nodes.map((n) => ({
            node: n.label,
            state: n.state ? n.state.verdict : 'not watched',
            progressPercent:
              n.state?.progress !== undefined && n.state.readyAt === undefined
                ? Math.floor(n.state.progress * 100)
                : null,
          })),
        }
      : {}),
  };
}

/** What a bounded wait returns, with what to do next when the load has not finished. */
export interface WaitReport {
  readonly result: WaitResult['kind'];
  readonly report: ServerReport;
  /** One sentence for a model or a person: what happened, and what to do next. */
  readonly next: string;
}

export function waitReport(
  result: WaitResult,
  waitedMs: number,
  toolName = 'kimi_wait',
  now: number = Date.now(),
): WaitReport {
  const report = serverReport(result.snapshot, now);
  const waited = formatDuration(waitedMs);
  let next: string;
  switch (result.kind) {
    case 'ready':
      next = report.parsers
        ? l10n.t('{0} is ready: it answered a real completion; {1}.', report.server, report.parsers)
        : l10n.t('{0} is ready: it answered a real completion.', report.server);
      break;
    case 'failed':
      next = l10n.t(
        '{0} failed: {1}. Do not wait again; read the logs, fix the cause, then restart.',
        report.server,
        report.lastError ?? l10n.t('see the logs'),
      );
      break;
    case 'stopped':
      next = l10n.t('{0} is stopped (the unit is not running). Restart it to serve again.', report.server);
      break;
    case 'stalled':
      next = l10n.t(
        '{0}. The process lives but nothing moves: read the logs for what it waits on (another rank or node, NCCL, a download, a lock); call {1} again only to keep waiting (a stall already under way does not end the next wait), or restart once the logs show a hang.',
        report.stall ?? l10n.t('{0} is stalled', report.server),
        toolName,
      );
      break;
    case 'timeout': {
      if (report.state === 'queued') {
        next = l10n.t(
          "Still queued after waiting {0}: {1}. The job waits in the scheduler's queue: call {2} again to keep waiting (a restart would not start it sooner).",
          waited,
          report.queue ?? l10n.t('waiting for its turn'),
          toolName,
        );
        break;
      }
      if (report.stall) {
        next = l10n.t(
          'Still stalled after waiting {0}: {1}. Read the logs; restart if they show a hang.',
          waited,
          report.stall,
        );
        break;
      }
      const progress = report.progressPercent !== null ? ` ${report.progressPercent}%` : '';
      const eta = report.etaSeconds !== null ? l10n.t(', about {0}', formatEta(report.etaSeconds * 1000)) : '';
      next = l10n.t(
        'Still {0} after waiting {1}: call {2} again (the load goes on; do not restart).',
        `${shownWord(result.snapshot, report.state)}${progress}${eta}`,
        waited,
        toolName,
      );
      break;
    }
    case 'cancelled':
      next = l10n.t(
        'The wait was cancelled after {0}; the load goes on ({1}).',
        waited,
        shownWord(result.snapshot, report.state),
      );
      break;
    case 'not watched':
      next = l10n.t(
        '{0} cannot be watched: {1}.',
        report.server,
        report.lastError ?? shownWord(result.snapshot, report.state),
      );
      break;
  }
  return { result: result.kind, report, next };
}
