/**
 * The status bar's words: its text and tooltip for the active server, pure (no VS Code API), so
 * the servers view and the tests compare against the very words the status bar shows.
 */
import { describe, failureCause, loadingPercent } from '../../../present/messages';
import type { ServerProfile } from '../../../config/config';
import { refusalWord, type Refusal } from '../../../present/refusalWords';
import { bytesFraction } from '../../../monitor/state/loadProgress';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { formatDuration } from '../../../util/duration';
import { etaText, formatBytes, formatRate, visibleEta } from '../../../present/etaText';
import { etaPendingText, etaTooltip } from '../../../present/etaTooltip';
import { VERDICT_ICONS } from './verdictIcons';
import type { OtherServers } from './statusOthers';
import { activityLabel } from '../../../engine/activity';
import { lastSeen } from '../../../present/stallNotice';
import { standInText } from '../../../host/portOwner';
import { endLine, endSoonWord, queuedEtaLine, queueLine, queuedWord } from '../../../present/queueWords';
import { sshClientLine } from '../../../present/sshClientWords';
import type { ClientChoice } from '../../../transport/openssh/chooseClient';

/** What the status bar shows: the active server's last known load state. */
export interface StatusView {
  readonly server: ServerProfile | undefined;
  readonly state: LoadState | undefined;
  readonly watching: boolean;
  /** Why the last watch ended, when it did not end in ready/failed/stopped. */
  readonly endNote?: string;
  /** One line about the last parser verification. */
  readonly verification?: string;
  /** A parser verification under way: "verifying 5/16", where it is, and whether a check has waited long. */
  readonly verifying?: { readonly word: string; readonly line: string; readonly long: boolean } | undefined;
  readonly configError?: string;
  /** The last connection to the server was refused (host key, login...): said before any state. */
  readonly refusal?: Refusal;
  /** The base URL of the server's port forwarded to this machine, if any. */
  readonly forwardUrl?: string | undefined;
  /** The other configured servers that are not ready. */
  readonly others?: OtherServers;
  /** Which SSH client connects to the server and why. */
  readonly sshClient?: ClientChoice | undefined;
}

/** " · 3m left" while loading, once the ETA is known and not yet disproved by the clock. */
function etaSuffix(state: LoadState, now: number): string {
  if (state.verdict !== 'loading' && state.verdict !== 'warming up') return '';
  const text = etaText(state.eta, now);
  return text === undefined ? '' : ` · ${text}`;
}

/** "10:31" (local time), for "last seen" and "last confirmed". */
function clockTime(at: number): string {
  const d = new Date(at);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:${String(d.getSeconds()).padStart(2, '0')}`;
}

export function statusText(view: StatusView, now: number = Date.now()): string {
  const text = activeServerText(view, now);
  if (view.configError) return text;
  // A quick verification (seconds) leaves the text alone; one that waits long says so.
  return `${text}${view.verifying?.long ? ` · ${view.verifying.word}` : ''}${view.others?.text ?? ''}`;
}

function activeServerText(view: StatusView, now: number): string {
  if (view.configError) return '$(warning) Kimi: settings';
  if (view.refusal) return `$(error) Kimi: ${refusalWord(view.refusal)}`;
  const state = view.state;
  // Nothing checks the server any more: no state word that would look current.
  if (!state || !view.watching) return '$(server-process) Kimi: not watched';
  const queued = queuedWord(state, now);
  if (queued) return `$(${VERDICT_ICONS[state.verdict]}) Kimi: ${queued}`;
  const endSoon = endSoonWord(state, now);
  return `$(${VERDICT_ICONS[state.verdict]}) Kimi: ${state.verdict}${loadingPercent(state)}${etaSuffix(state, now)}${endSoon ? ` · ${endSoon}` : ''}`;
}

export function statusTooltip(view: StatusView, now: number): string {
  const tooltip = activeServerTooltip(view, now);
  const others = view.configError ? [] : (view.others?.lines ?? []);
  return others.length > 0 ? `${tooltip}\n\nOther servers not ready:\n${others.join('\n')}` : tooltip;
}

function activeServerTooltip(view: StatusView, now: number): string {
  if (view.configError) return `Kimi settings are invalid: ${view.configError}`;
  const lines: string[] = [];
  const server = view.server;
  if (server) lines.push(`Server: ${server.name} (${server.host ?? 'this machine'}), unit ${server.unit}`);
  if (view.sshClient) lines.push(sshClientLine(view.sshClient));
  if (view.forwardUrl)
    lines.push(`Forwarded to this machine: ${view.forwardUrl} ("Kimi Service: Close forwarded port" to close)`);
  if (view.refusal) lines.push(`Connection refused: ${view.refusal.message}`);
  const state = view.state;
  if (!state || !view.watching) {
    lines.push(
      'Not watching. Run "Kimi Service: Watch Kimi service until ready" or "Kimi Service: Restart Kimi service".',
    );
    if (state)
      lines.push(
        `Last seen: ${describe(state)} at ${clockTime(state.confirmedAt ?? state.lastSignal?.at ?? state.watchStartedAt)}`,
      );
    if (state?.failure) lines.push(`Failure: ${state.failure.summary}`, ...causeLines(state));
    if (view.endNote) lines.push(`Watch ended: ${view.endNote}`);
    if (view.verifying) lines.push(`Parsers: ${view.verifying.line}`);
    return lines.join('\n');
  }
  lines.push(`State: ${queuedWord(state, now) ?? state.verdict}`);
  const queue = queueLine(state, now);
  if (queue) lines.push(queue);

  const end = endLine(state, now);
  if (end) lines.push(end);
  if (state.confirmedAt !== undefined)
    lines.push(
      `Last confirmed by the host: ${formatDuration(now - state.confirmedAt)} ago (${clockTime(state.confirmedAt)})`,
    );
  if (state.verdict === 'unhealthy')
    lines.push(`/health failed ${state.healthFailures} times in a row while the process runs`);
  if (state.completion && !state.completion.ok && state.readyAt === undefined)
    lines.push(`Completion probe: ${state.completion.detail}`);
  if (state.standIn)
    lines.push(`Port: ${standInText(state.standIn)} (its answers are not counted; the phase is the server's own)`);
  if (state.journal && !state.journal.readable) lines.push(`Journal: ${state.journal.detail ?? 'not readable'}`);
  // A quiet step is named on the phase's line: a DeepGEMM compile inside graph capture is not "capturing CUDA graphs".
  const step = state.activity && state.readyAt === undefined && !state.failure ? state.activity : undefined;
  if (state.phase)
    lines.push(
      `Phase: ${state.phase}${step ? `, now ${activityLabel(step)} (for ${formatDuration(now - step.since)}; quiet by nature)` : ''}`,
    );
  if (state.verdict === 'stalled') {
    lines.push(
      `Stalled: no witness has moved for ${formatDuration(now - state.lastProgressAt)}; last seen: ${lastSeen(state)} at ${clockTime(state.lastProgressAt)}`,
    );
  }
  if (state.shards) lines.push(`Weights: ${state.shards.done}/${state.shards.total} shards`);
  if (state.cudaGraphBatches)
    lines.push(`CUDA graphs: ${state.cudaGraphBatches.done}/${state.cudaGraphBatches.total} batches`);
  if (state.progress !== undefined) lines.push(`Progress: ${Math.floor(state.progress * 100)}%`);
  if (state.io) {
    const total = state.io.totalBytes ?? state.prior?.totalBytes;
    const frac = bytesFraction(state);
    lines.push(
      `Bytes read: ${formatBytes(state.io.readBytes)}${total ? ` of ${formatBytes(total)} (${Math.floor((frac ?? 0) * 100)}%)` : ''} · ${formatRate(state.readRate)}`,
    );
  }
  if (state.gpu) {
    const util = state.gpu.utilPercent !== undefined ? ` · busiest GPU ${state.gpu.utilPercent}%` : '';
    lines.push(
      `GPU memory: ${(state.gpu.usedMiB / 1024).toFixed(1)} / ${(state.gpu.totalMiB / 1024).toFixed(0)} GiB over ${state.gpu.perGpu.length} GPU${state.gpu.perGpu.length === 1 ? '' : 's'}${util}`,
    );
  }
  if (state.cpu?.cores !== undefined && state.readyAt === undefined)
    lines.push(`CPU: ${state.cpu.cores.toFixed(1)} cores busy (the service's processes)`);
  const remaining = state.readyAt === undefined ? visibleEta(state.eta, now) : undefined;
  // A queued run: the ready estimate counts the wait for the scheduler's start.
  const queuedEta = queuedEtaLine(state, now);
  if (queuedEta) lines.push(queuedEta);
  else if (remaining !== undefined && state.eta) lines.push(etaTooltip(state, state.eta, now));
  else {
    const pending = state.readyAt === undefined ? etaPendingText(state, now) : undefined;
    if (pending) lines.push(pending);
  }
  if (state.witnessWarning) lines.push(state.witnessWarning);
  const since = state.restartRequestedAt ?? state.processStartedAt ?? state.watchStartedAt;
  const until = state.readyAt ?? now;
  lines.push(`${state.readyAt ? 'Loaded in' : 'Elapsed'}: ${formatDuration(until - since)}`);
  if (state.lastSignal)
    lines.push(`Last signal (${formatDuration(now - state.lastSignal.at)} ago): ${state.lastSignal.text}`);
  if (state.failure) lines.push(`Failure: ${state.failure.summary}`, ...causeLines(state));
  if (!state.connected && state.connectionError) lines.push(`Connection: ${state.connectionError}`);
  if (view.endNote) lines.push(`Watch ended: ${view.endNote}`);
  if (view.verifying) lines.push(`Parsers: ${view.verifying.line}`);
  else if (view.verification) lines.push(`Parsers: ${view.verification}`);
  return lines.join('\n');
}

function causeLines(state: LoadState): string[] {
  const cause = failureCause(state);
  return cause ? [`Cause: ${cause}`] : [];
}
