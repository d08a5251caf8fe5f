/**
 * What the "Kimi Servers" tree shows: one row per configured server (its state word, progress
 * and ETA while loading or uptime when ready, the parser verification, the last error), and a
 * row per node of a multi-node server. Pure: the tree provider (serversView.ts) only turns
 * these rows into TreeItems. The words are the fleet report's, the icons the status bar's.
 */
import { formatEta } from '../../../present/etaText';
import { formatDuration } from '../../../util/duration';
import type { NodeSnapshot, ServerSnapshot } from '../../../fleet/fleetTypes';
import { serverReport } from '../../../present/report';
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
  const word = node.state ? describe(node.state) : 'not watched';
  return {
    kind: 'node',
    serverName,
    id: `${serverName}/node/${index}`,
    label: node.label,
    description: `${node.host} · ${word}`,
    tooltip: `${node.label} of ${serverName} on ${node.host}: ${word}`,
    icon: stateIcon(node.state?.verdict),
  };
}

export function serverRow(snapshot: ServerSnapshot, activeName: string | undefined, now: number): ServerRow {
  const report = serverReport(snapshot, now);
  const state = snapshot.state;
  const watched = snapshot.watching && state !== undefined && !snapshot.refusal;
  const parts: string[] = [report.state];
  if (report.progressPercent !== null) parts[0] = `${report.state} ${report.progressPercent}%`;
  // The quiet step under way (a JIT compile...), in place of an ETA nothing can give for it.
  if (report.activity) parts.push(report.activity);
  if (report.etaSeconds !== null) parts.push(`about ${formatEta(report.etaSeconds * 1000)}`);
  // Uptime as systemd counts it, from the process start: a server found ready by a first look was up long before.
  if (watched && state.verdict === 'ready' && state.readyAt !== undefined)
    parts.push(`up ${formatDuration(now - (state.processStartedAt ?? state.readyAt))}`);
  if (snapshot.verification) parts.push(snapshot.verification);
  if (snapshot.forwardedPort !== undefined) parts.push(`forwarded to localhost:${snapshot.forwardedPort}`);
  if (report.lastError) parts.push(shorten(report.lastError, ERROR_ON_ROW));
  const active = snapshot.server.name === activeName;
  const where = `${snapshot.server.host ?? 'this machine'}, unit ${snapshot.server.unit}`;
  const tooltip = [
    `${snapshot.server.name}${active ? ' (active)' : ''}: ${where}`,
    report.summary,
    ...(report.lastError ? [`Last error: ${report.lastError}`] : []),
    `Parsers: ${snapshot.verification ?? 'not verified yet'}`,
    ...(snapshot.forwardedPort !== undefined
      ? [`${snapshot.server.url} is forwarded to http://localhost:${snapshot.forwardedPort}`]
      : []),
  ].join('\n');
  return {
    kind: 'server',
    serverName: snapshot.server.name,
    id: `server/${snapshot.server.name}`,
    label: active ? `${snapshot.server.name} (active)` : snapshot.server.name,
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
