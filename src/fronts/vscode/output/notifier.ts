/**
 * Notifications: every message masked (the API keys seen in this window), with "Show log"
 * that opens the output channel.
 */
import * as vscode from 'vscode';
import { shownText } from './shownText';

export const SHOW_LOG = 'Show log';

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
    const choice = await show(this.mask(message), SHOW_LOG);
    if (choice === SHOW_LOG) this.showLog();
  }
}
