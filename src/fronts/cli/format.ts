/**
 * What `kimi-service` prints: text lines for a person or an agent, or JSON lines (one object per
 * line) for a script. The words come from present/report (serverReport, waitReport): this module
 * only lays them out. Pure.
 */
import * as l10n from '@vscode/l10n';
import type { ServerReport, WaitReport } from '../../present/report';
import { formatDuration } from '../../util/duration';

/** At most one progress line this often during `wait` (state changes are always printed). */
export const PROGRESS_LINE_MS = 10_000;

/** One JSON line. */
export function jsonLine(value: Record<string, unknown>): string {
  return JSON.stringify(value);
}

export function statusLine(report: ServerReport, json: boolean): string {
  return json ? jsonLine({ event: 'status', ...report }) : report.summary;
}

/** `action` is the --json value scripts read: `attached` (documented) when a load under way is watched instead. */
export function restartLine(
  action: 'restarted' | 'attached',
  reason: string | undefined,
  report: ServerReport,
  json: boolean,
): string {
  if (json) return jsonLine({ event: 'restart', action, ...(reason !== undefined ? { reason } : {}), ...report });
  if (action === 'attached')
    return l10n.t(
      '{0}: watching, not restarted: {1}. Now: {2}',
      report.server,
      reason ?? l10n.t('a load is already under way'),
      report.summary,
    );
  if (report.nodes)
    return l10n.t(
      '{0}: restart issued on every node ({1}). Now: {2}',
      report.server,
      report.nodes.map((n) => n.node).join(', '),
      report.summary,
    );
  // A unit's name ends in .service; a Docker server's is a label ("container sglang"); another manager's, its own.
  const how = report.unit.endsWith('.service')
    ? `systemctl restart ${report.unit}`
    : /^(container|compose service) /.test(report.unit)
      ? l10n.t('docker restart of the {0}', report.unit)
      : l10n.t('restart of the {0}', report.unit);
  return l10n.t('{0}: restart issued ({1} on {2}). Now: {3}', report.server, how, report.host, report.summary);
}

/** The hint after a restart that does not wait. */
export function restartNext(server: string, command = 'kimi-service'): string {
  return l10n.t('Next: {0} (repeat while it exits 2).', `${command} wait --server ${server}`);
}

/** A line during `wait`: a state change or a progress line, prefixed with the time waited. */
export function waitLine(kind: 'state' | 'progress', report: ServerReport, elapsedMs: number, json: boolean): string {
  if (json) return jsonLine({ event: kind, elapsedSeconds: Math.round(elapsedMs / 1000), ...report });
  return `[+${formatDuration(elapsedMs)}] ${report.summary}`;
}

/** The last line of `wait`: what happened and what to do next; ready, how the load went just before it. */
export function waitSummaryLine(report: WaitReport, json: boolean): string {
  if (json) return jsonLine({ event: 'result', state: report.report.state, ...report });
  const lastLoad = report.result === 'ready' ? report.report.lastLoad : undefined;
  return lastLoad ? `${report.report.server}: ${lastLoad}\n${report.next}` : report.next;
}

export function alertLine(
  alert: { readonly kind: string; readonly level: string; readonly message: string },
  report: ServerReport,
  json: boolean,
): string {
  if (json)
    return jsonLine({
      event: 'alert',
      server: report.server,
      state: report.state,
      kind: alert.kind,
      level: alert.level,
      message: alert.message,
    });
  const label = alert.level === 'info' ? l10n.t('note') : alert.level === 'error' ? l10n.t('error') : l10n.t('warning');
  return l10n.t('{0}: {1}', label, alert.message);
}

export function errorLine(message: string, exitCode: number, json: boolean, state = 'settings'): string {
  if (json) return jsonLine({ event: 'error', state, exitCode, error: message });
  return `kimi-service: ${message}`;
}

export interface LogsResult {
  readonly journal: readonly string[];
  readonly journalError?: string;
  readonly log: readonly string[];
}

export function logsLines(server: string, unit: string, logs: LogsResult, json: boolean): string[] {
  if (json)
    return [
      jsonLine({
        event: 'logs',
        server,
        unit,
        journal: logs.journal,
        ...(logs.journalError ? { journalError: logs.journalError } : {}),
        log: logs.log,
      }),
    ];
  return [...logs.journal];
}

/** Why `verify` ran nothing, and what to run instead. */
export function notReadyAdvice(server: string, why: 'loading' | 'down'): string {
  return why === 'loading'
    ? l10n.t(
        'the parsers can be checked only on a ready server: run `kimi-service wait --server {0}`, then verify again. Nothing was run.',
        server,
      )
    : l10n.t(
        '{0} is not serving, so its parsers cannot be checked: `kimi-service logs --server {0}` says why, `kimi-service restart --server {0}` starts it again. Nothing was run.',
        server,
      );
}

export function verifyLines(
  server: string,
  result: {
    readonly summary: string;
    readonly allPassed: boolean | undefined;
    readonly table: string;
    readonly verdict?: string;
  },
  json: boolean,
): string[] {
  if (json)
    return [
      jsonLine({
        event: 'verify',
        server,
        summary: result.summary,
        ...(result.verdict !== undefined ? { verdict: result.verdict } : {}),
        allPassed: result.allPassed ?? null,
        table: result.table,
      }),
    ];
  return [...result.table.split('\n').filter((l) => l.length > 0), `${server}: ${result.summary}`];
}

/**
 * Which lines `wait` prints: every change of the state word or phase, and at most one progress
 * line per PROGRESS_LINE_MS while something changes. Bounded: a wait of T seconds prints at
 * most T/10 progress lines plus one line per state change.
 */
export interface WaitPrinterState {
  readonly key: string | undefined;
  readonly summary: string | undefined;
  readonly lastLineAt: number;
}

export const INITIAL_PRINTER: WaitPrinterState = {
  key: undefined,
  summary: undefined,
  lastLineAt: Number.NEGATIVE_INFINITY,
};

export function nextWaitLine(
  printer: WaitPrinterState,
  report: ServerReport,
  now: number,
): { readonly line: 'state' | 'progress' | undefined; readonly printer: WaitPrinterState } {
  const key = `${report.state}|${report.phase ?? ''}`;
  if (key !== printer.key) return { line: 'state', printer: { key, summary: report.summary, lastLineAt: now } };
  if (
    now - printer.lastLineAt >= PROGRESS_LINE_MS &&
    progressText(report) !== progressText({ summary: printer.summary })
  ) {
    return { line: 'progress', printer: { key, summary: report.summary, lastLineAt: now } };
  }
  return { line: undefined, printer };
}

/** The words before a duration in `template` ("for {0}" → "for "), in the display language. */
function durationPrefix(template: string): string {
  return template.split('\u0000')[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The summary without its clock ("for 1m 2s"), so a line is not repeated only because time passed. */
function progressText(report: { readonly summary: string | undefined }): string {
  // The same words as present/report's summary parts, so a translated summary loses its clock too.
  const clock = [l10n.t('for {0}', '\u0000'), l10n.t('ready for {0}', '\u0000')].map(durationPrefix);
  return (report.summary ?? '').replace(new RegExp(` · (?:${clock.join('|')})[^·]+`, 'g'), '');
}
