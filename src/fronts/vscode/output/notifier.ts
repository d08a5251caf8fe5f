/**
 * Notifications: every message masked (the API keys seen in this window), with "Show log"
 * that opens the output channel.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import { shownText } from './shownText';

/** The button that opens the log, in the display language (read at call time: the bundle is set at activation). */
export function showLogButton(): string {
  return l10n.t('Show log');
}

export type NoticeKind = 'info' | 'warn' | 'error';

export class Notifier {
  constructor(
    private readonly log: vscode.LogOutputChannel,
    /** The API keys seen in this window (masked in every message). */
    private readonly secrets: ReadonlySet<string> = new Set(),
  ) {}

  showLog(): void {
    this.log.show(true);
  }

  mask(message: string): string {
    return shownText(message, [...this.secrets]);
  }

  async notify(kind: NoticeKind, message: string): Promise<void> {
    const show =
      kind === 'info'
        ? vscode.window.showInformationMessage
        : kind === 'warn'
          ? vscode.window.showWarningMessage
          : vscode.window.showErrorMessage;
    const showLog = showLogButton();
    const choice = await show(this.mask(message), showLog);
    if (choice === showLog) this.showLog();
  }
}
