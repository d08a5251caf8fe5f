/**
 * The status bar's words: its text and tooltip for the active server, pure (no VS Code API), so
 * the servers view and the tests compare against the very words the status bar shows.
 */
import * as l10n from '@vscode/l10n';
import { describe, failureCause, loadingPercent } from '../../../present/messages';
import { activityText, phaseWord, verdictWord } from '../../../present/stateWords';
import type { ServerProfile } from '../../../config/config';
import { refusalShownWord, type Refusal } from '../../../present/refusalWords';
import { bytesFraction } from '../../../monitor/state/loadProgress';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { formatDuration } from '../../../util/duration';
import { etaText, formatBytes, formatRate, visibleEta } from '../../../present/etaText';
import { etaPendingText, etaTooltip } from '../../../present/etaTooltip';
import { VERDICT_ICONS } from './verdictIcons';
import type { OtherServers } from './statusOthers';
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
  if (view.configError) return `$(warning) ${l10n.t('Kimi: settings')}`;
  if (view.refusal) return `$(error) ${l10n.t('Kimi: {0}', refusalShownWord(view.refusal))}`;
  const state = view.state;
  // Nothing checks the server any more: no state word that would look current.
  if (!state || !view.watching) return `$(server-process) ${l10n.t('Kimi: {0}', verdictWord('not watched'))}`;
  const queued = queuedWord(state, now);
  if (queued) return `$(${VERDICT_ICONS[state.verdict]}) ${l10n.t('Kimi: {0}', queued)}`;
  const endSoon = endSoonWord(state, now);
  const word = `${verdictWord(state.verdict)}${loadingPercent(state)}${etaSuffix(state, now)}${endSoon ? ` · ${endSoon}` : ''}`;
  return `$(${VERDICT_ICONS[state.verdict]}) ${l10n.t('Kimi: {0}', word)}`;
}

export function statusTooltip(view: StatusView, now: number): string {
  const tooltip = activeServerTooltip(view, now);
  const others = view.configError ? [] : (view.others?.lines ?? []);
  return others.length > 0 ? `${tooltip}\n\n${l10n.t('Other servers not ready:')}\n${others.join('\n')}` : tooltip;
}

function activeServerTooltip(view: StatusView, now: number): string {
  if (view.configError) return l10n.t('Kimi settings are invalid: {0}', view.configError);
  const lines: string[] = [];
  const server = view.server;
  if (server)
    lines.push(l10n.t('Server: {0} ({1}), unit {2}', server.name, server.host ?? l10n.t('this machine'), server.unit));
  if (view.sshClient) lines.push(sshClientLine(view.sshClient));
  if (view.forwardUrl)
    lines.push(
      l10n.t('Forwarded to this machine: {0} ("Kimi Service: Close forwarded port" to close)', view.forwardUrl),
    );
  if (view.refusal) lines.push(l10n.t('Connection refused: {0}', view.refusal.message));
  const state = view.state;
  if (!state || !view.watching) {
    lines.push(
      l10n.t(
        'Not watching. Run "Kimi Service: Watch Kimi service until ready" or "Kimi Service: Restart Kimi service".',
      ),
    );
    if (state)
      lines.push(
        l10n.t(
          'Last seen: {0} at {1}',
          describe(state),
          clockTime(state.confirmedAt ?? state.lastSignal?.at ?? state.watchStartedAt),
        ),
      );
    if (state?.failure) lines.push(l10n.t('Failure: {0}', state.failure.summary), ...causeLines(state));
    if (view.endNote) lines.push(l10n.t('Watch ended: {0}', view.endNote));
    if (view.verifying) lines.push(l10n.t('Parsers: {0}', view.verifying.line));
    return lines.join('\n');
  }
  lines.push(l10n.t('State: {0}', queuedWord(state, now) ?? verdictWord(state.verdict)));
  const queue = queueLine(state, now);
  if (queue) lines.push(queue);

  const end = endLine(state, now);
  if (end) lines.push(end);
  if (state.confirmedAt !== undefined)
    lines.push(
      l10n.t(
        'Last confirmed by the host: {0} ago ({1})',
        formatDuration(now - state.confirmedAt),
        clockTime(state.confirmedAt),
      ),
    );
  if (state.verdict === 'unhealthy')
    lines.push(l10n.t('/health failed {0} times in a row while the process runs', state.healthFailures));
  if (state.completion && !state.completion.ok && state.readyAt === undefined)
    lines.push(l10n.t('Completion probe: {0}', state.completion.detail));
  if (state.standIn)
    lines.push(
      l10n.t("Port: {0} (its answers are not counted; the phase is the server's own)", standInText(state.standIn)),
    );
  if (state.journal && !state.journal.readable)
    lines.push(l10n.t('Journal: {0}', state.journal.detail ?? l10n.t('not readable')));
  // A quiet step is named on the phase's line: a DeepGEMM compile inside graph capture is not "capturing CUDA graphs".
  const step = state.activity && state.readyAt === undefined && !state.failure ? state.activity : undefined;
  if (state.phase)
    lines.push(
      step
        ? l10n.t(
            'Phase: {0}, now {1} (for {2}; quiet by nature)',
            phaseWord(state.phase),
            activityText(step),
            formatDuration(now - step.since),
          )
        : l10n.t('Phase: {0}', phaseWord(state.phase)),
    );
  if (state.verdict === 'stalled') {
    lines.push(
      l10n.t(
        'Stalled: no witness has moved for {0}; last seen: {1} at {2}',
        formatDuration(now - state.lastProgressAt),
        lastSeen(state),
        clockTime(state.lastProgressAt),
      ),
    );
  }
  if (state.shards) lines.push(l10n.t('Weights: {0}/{1} shards', state.shards.done, state.shards.total));
  if (state.cudaGraphBatches)
    lines.push(l10n.t('CUDA graphs: {0}/{1} batches', state.cudaGraphBatches.done, state.cudaGraphBatches.total));
  if (state.progress !== undefined) lines.push(l10n.t('Progress: {0}%', Math.floor(state.progress * 100)));
  if (state.io) {
    const total = state.io.totalBytes ?? state.prior?.totalBytes;
    const frac = bytesFraction(state);
    const read = total
      ? l10n.t('{0} of {1} ({2}%)', formatBytes(state.io.readBytes), formatBytes(total), Math.floor((frac ?? 0) * 100))
      : formatBytes(state.io.readBytes);
    lines.push(l10n.t('Bytes read: {0} · {1}', read, formatRate(state.readRate)));
  }
  if (state.gpu) {
    const util = state.gpu.utilPercent !== undefined ? l10n.t(' · busiest GPU {0}%', state.gpu.utilPercent) : '';
    const used = (state.gpu.usedMiB / 1024).toFixed(1);
    const size = (state.gpu.totalMiB / 1024).toFixed(0);
    const count = state.gpu.perGpu.length;
    lines.push(
      (count === 1
        ? l10n.t('GPU memory: {0} / {1} GiB over {2} GPU', used, size, count)
        : l10n.t('GPU memory: {0} / {1} GiB over {2} GPUs', used, size, count)) + util,
    );
  }
  if (state.cpu?.cores !== undefined && state.readyAt === undefined)
    lines.push(l10n.t("CPU: {0} cores busy (the service's processes)", state.cpu.cores.toFixed(1)));
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
  lines.push(
    state.readyAt
      ? l10n.t('Loaded in: {0}', formatDuration(until - since))
      : l10n.t('Elapsed: {0}', formatDuration(until - since)),
  );
  if (state.lastSignal)
    lines.push(l10n.t('Last signal ({0} ago): {1}', formatDuration(now - state.lastSignal.at), state.lastSignal.text));
  if (state.failure) lines.push(l10n.t('Failure: {0}', state.failure.summary), ...causeLines(state));
  if (!state.connected && state.connectionError) lines.push(l10n.t('Connection: {0}', state.connectionError));
  if (view.endNote) lines.push(l10n.t('Watch ended: {0}', view.endNote));
  if (view.verifying) lines.push(l10n.t('Parsers: {0}', view.verifying.line));
  else if (view.verification) lines.push(l10n.t('Parsers: {0}', view.verification));
  return lines.join('\n');
}

function causeLines(state: LoadState): string[] {
  const cause = failureCause(state);
  return cause ? [l10n.t('Cause: {0}', cause)] : [];
}
