/**
 * The notifications of what the fleet sees: ready (with the offer to forward the port), failed
 * (once per cause: a crash loop goes to the log), stalled, alerts and refused connections (with
 * what to do). The NoticeGate (fleet/logs/notices.ts) decides which are news.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../../config/config';
import type { FleetEvent } from '../../../fleet/fleetTypes';
import type { FrontFleet } from '../../../fleet/fleetVerbs';
import type { NoticeGate } from '../../../fleet/logs/notices';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import type { WatchOutcome } from '../../../monitor/watch/watchTypes';
import { failureMessage, readyMessage } from '../../../present/messages';
import { refusalMessage } from '../../../present/refusalWords';
import { stallNotice } from '../../../present/stallNotice';
import { showLogButton, type Notifier } from './notifier';

export class FleetNotices {
  constructor(
    private readonly fleet: FrontFleet,
    private readonly notifier: Notifier,
    private readonly gate: NoticeGate,
    private readonly activeName: () => string | undefined,
  ) {}

  /** A load that became stalled is said once, as a warning: what was last seen and since when (single- and multi-node). */
  stall(server: ServerProfile, previous: LoadState, state: LoadState): void {
    if (state.verdict !== 'stalled' || previous.verdict === 'stalled') return;
    const notice = stallNotice(server.name, previous, state, Date.now(), this.fleet.snapshot(server).nodes);
    if (notice) void this.notifier.notify('warn', notice);
  }

  /** How a watch ended other than ready: said as its kind asks (`note`: the end's own words). */
  ended(server: ServerProfile, outcome: WatchOutcome, note: string | undefined): void {
    switch (outcome.end) {
      case 'ready':
      case 'cancelled':
        break;
      case 'failed':
        this.failure(server, failureMessage(server, outcome));
        break;
      case 'unreachable':
        // A refusal (host key, auth...) has been said already, with its own buttons.
        if (!this.fleet.snapshot(server).refusal && note) void this.notifier.notify('warn', note);
        break;
      default:
        if (note) void this.notifier.notify(outcome.end === 'stopped' ? 'info' : 'warn', note);
    }
  }

  /** "Ready", with the offer to use the server from this machine (an SSH server not forwarded yet). */
  async ready(server: ServerProfile, state: LoadState): Promise<void> {
    const offerForward = server.host !== undefined && !this.fleet.forwardOf(server);
    const lastLoad = this.fleet.snapshot(server).lastLoad;
    const message = this.notifier.mask(readyMessage(server, state, lastLoad));
    const showLog = showLogButton();
    const forwardPort = l10n.t('Forward port');
    const choice = await vscode.window.showInformationMessage(
      message,
      ...(offerForward ? [forwardPort, showLog] : [showLog]),
    );
    if (choice === showLog) this.notifier.showLog();
    if (choice === forwardPort) void vscode.commands.executeCommand('kimiService.forwardPort', server.name);
  }

  /** A failure is notified once; the same cause again soon after (a crash loop) goes to the log only. */
  private failure(server: ServerProfile, message: string): void {
    if (this.gate.failure(server.name, message, Date.now())) void this.notifier.notify('error', message);
  }

  alert(server: ServerProfile, kind: string, level: 'info' | 'warn' | 'error', message: string): void {
    // An unreadable journal is said once per window, not at every restart.
    if (!this.gate.alert(server.name, kind)) return;
    if (kind === 'recovered') {
      void vscode.window.showInformationMessage(l10n.t('Kimi on {0}: {1}', server.name, message));
      return;
    }
    void this.notifier.notify(level, l10n.t('Kimi on {0}: {1}', server.name, message));
  }

  /** A refused connection: a notification with what to do (the status bar says it too). */
  refused(server: ServerProfile, event: Extract<FleetEvent, { type: 'refused' }>): void {
    const { text, openKnownHosts } = refusalMessage(server.name, event.refusal);
    // A server only watched in the background shows its refusal in the servers view, not in a notification.
    if (!this.gate.refusal(server.name, this.activeName())) return;
    const showLog = showLogButton();
    const openFile = l10n.t('Open known_hosts');
    const buttons = openKnownHosts ? [showLog, openFile] : [showLog];
    void vscode.window.showErrorMessage(text, ...buttons).then(async (choice) => {
      if (choice === showLog) this.notifier.showLog();
      if (choice === openFile && openKnownHosts) {
        const document = await vscode.workspace.openTextDocument(vscode.Uri.file(openKnownHosts.file));
        const line = Math.max(0, (openKnownHosts.line ?? 1) - 1);
        await vscode.window.showTextDocument(document, { selection: new vscode.Range(line, 0, line, 0) });
      }
    });
  }
}
