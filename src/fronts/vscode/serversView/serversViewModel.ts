/**
 * What the "Kimi Servers" tree shows: one row per configured server (its state word, progress
 * and ETA while loading or uptime when ready, the parser verification, the last error), and a
 * row per node of a multi-node server. Pure: the tree provider (serversView.ts) only turns
 * these rows into TreeItems. The words are the fleet report's, the icons the status bar's.
 */
import * as l10n from '@vscode/l10n';
import { formatEta } from '../../../present/etaText';
import { formatDuration } from '../../../util/duration';
import type { NodeSnapshot, ServerSnapshot } from '../../../fleet/fleetTypes';
import { serverReport, shownWord } from '../../../present/report';
import { verdictWord } from '../../../present/stateWords';
import { describe } from '../../../present/messages';
import { stateIcon } from '../status/verdictIcons';

/** The longest last error shown on the row itself (the tooltip has all of it). */
const ERROR_ON_ROW = 80;

/** What every row has. Commands run from a row receive it: the contract's `{ serverName }`. */
interface Row {
  /** The server of the row (a node's: commands run on a node act on its server). */
  readonly serverName: string;
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly tooltip: string;
  /** A codicon id, e.g. "check", "loading~spin". */
  readonly icon: string;
}

export interface NodeRow extends Row {
  readonly kind: 'node';
}

export interface ServerRow extends Row {
  readonly kind: 'server';
  /** For the menus' `when`: kimiServer, plus .active and .watching when they hold. */
  readonly contextValue: string;
  readonly nodes: readonly NodeRow[];
}

export type ServersViewRow = ServerRow | NodeRow;

function shorten(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function nodeRow(serverName: string, node: NodeSnapshot, index: number): NodeRow {
  const word = node.state ? describe(node.state) : verdictWord('not watched');
  return {
    kind: 'node',
    serverName,
    id: `${serverName}/node/${index}`,
    label: node.label,
    description: l10n.t('{0} · {1}', node.host, word),
    tooltip: l10n.t('{0} of {1} on {2}: {3}', node.label, serverName, node.host, word),
    icon: stateIcon(node.state?.verdict),
  };
}

export function serverRow(snapshot: ServerSnapshot, activeName: string | undefined, now: number): ServerRow {
  const report = serverReport(snapshot, now);
  const state = snapshot.state;
  const watched = snapshot.watching && state !== undefined && !snapshot.refusal;
  const stateShown = shownWord(snapshot, report.state);
  const parts: string[] = [
    report.progressPercent !== null ? l10n.t('{0} {1}%', stateShown, report.progressPercent) : stateShown,
  ];
  // The quiet step under way (a JIT compile...), in place of an ETA nothing can give for it.
  if (report.activity) parts.push(report.activity);
  if (report.etaSeconds !== null) parts.push(l10n.t('about {0}', formatEta(report.etaSeconds * 1000)));
  // Uptime as systemd counts it, from the process start: a server found ready by a first look was up long before.
  if (watched && state.verdict === 'ready' && state.readyAt !== undefined)
    parts.push(l10n.t('up {0}', formatDuration(now - (state.processStartedAt ?? state.readyAt))));
  if (snapshot.verification) parts.push(snapshot.verification);
  if (snapshot.forwardedPort !== undefined) parts.push(l10n.t('forwarded to localhost:{0}', snapshot.forwardedPort));
  if (report.lastError) parts.push(shorten(report.lastError, ERROR_ON_ROW));
  const active = snapshot.server.name === activeName;
  const name = active ? l10n.t('{0} (active)', snapshot.server.name) : snapshot.server.name;
  const host = snapshot.server.host ?? l10n.t('this machine');
  const tooltip = [
    l10n.t('{0}: {1}, unit {2}', name, host, snapshot.server.unit),
    report.summary,
    ...(report.lastError ? [l10n.t('Last error: {0}', report.lastError)] : []),
    l10n.t('Parsers: {0}', snapshot.verification ?? l10n.t('not verified yet')),
    ...(snapshot.forwardedPort !== undefined
      ? [l10n.t('{0} is forwarded to http://localhost:{1}', snapshot.server.url, snapshot.forwardedPort)]
      : []),
  ].join('\n');
  return {
    kind: 'server',
    serverName: snapshot.server.name,
    id: `server/${snapshot.server.name}`,
    label: name,
    description: parts.join(' · '),
    tooltip,
    icon: snapshot.refusal ? 'error' : watched ? stateIcon(state.verdict) : stateIcon(undefined),
    contextValue: ['kimiServer', ...(active ? ['active'] : []), ...(snapshot.watching ? ['watching'] : [])].join('.'),
    nodes: (snapshot.nodes ?? []).map((node, index) => nodeRow(snapshot.server.name, node, index)),
  };
}

/** The rows of the tree, in the order of kimiService.servers. */
export function serverRows(
  snapshots: readonly ServerSnapshot[],
  activeName: string | undefined,
  now: number,
): ServerRow[] {
  return snapshots.map((snapshot) => serverRow(snapshot, activeName, now));
}
