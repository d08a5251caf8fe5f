import * as vscode from 'vscode';
import { shownText } from '../output/shownText';
import { statusText, statusTooltip, type StatusView } from './statusBarText';

export type { StatusView } from './statusBarText';

function background(view: StatusView): vscode.ThemeColor | undefined {
  if (view.configError || view.refusal) return new vscode.ThemeColor('statusBarItem.errorBackground');
  if (!view.watching) return undefined;
  const verdict = view.state?.verdict;
  if (verdict === 'failed' || verdict === 'unreachable') return new vscode.ThemeColor('statusBarItem.errorBackground');
  if (verdict === 'stalled' || verdict === 'unhealthy' || view.endNote)
    return new vscode.ThemeColor('statusBarItem.warningBackground');
  return undefined;
}

/** Owns the one status bar item; left-click shows the log. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('kimiService.service', vscode.StatusBarAlignment.Left, 50);
  private view: StatusView = { server: undefined, state: undefined, watching: false };
  private readonly clock: NodeJS.Timeout;

  constructor() {
    this.item.name = 'Kimi service';
    this.item.command = 'kimiService.showLog';
    this.render();
    this.item.show();
    // The tooltip shows elapsed time; refresh it while a watch runs.
    this.clock = setInterval(() => this.view.watching && this.render(), 5000);
  }

  get text(): string {
    return this.item.text;
  }

  update(view: StatusView): void {
    this.view = view;
    this.render();
  }

  private render(): void {
    this.item.text = statusText(this.view, Date.now());
    this.item.tooltip = shownText(statusTooltip(this.view, Date.now()));
    this.item.backgroundColor = background(this.view);
  }

  dispose(): void {
    clearInterval(this.clock);
    this.item.dispose();
  }
}
