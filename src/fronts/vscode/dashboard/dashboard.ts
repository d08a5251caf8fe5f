/**
 * The load dashboard: a webview panel (command `kimiService.showDashboard`) with the phase timeline,
 * read rate and GPU memory charts (uPlot, shipped in dist/media, no CDN), progress, ETA and
 * the history band, and the parser verification result. Strict CSP with a nonce. The panel
 * does not keep its context when hidden: on every (re)load the page posts `ready` and gets the
 * full model; live changes are posted as they come (throttled).
 */
import * as vscode from 'vscode';
import type { DashboardModel } from './dashboardModel';
import { dashboardHtml, nonce } from './dashboardHtml';
import { dashboardWords } from './dashboardWords';
import { forFrontDeep } from '../../../present/hints';

export const SHOW_DASHBOARD_COMMAND = 'kimiService.showDashboard';
const VIEW_TYPE = 'kimiService.loadDashboard';
const THROTTLE_MS = 500;

/**
 * Registers `kimiService.showDashboard`. `getModel` is asked for the full model whenever the page
 * (re)loads and after each `onDidChange`.
 */
export function registerDashboard(
  context: vscode.ExtensionContext,
  getModel: () => DashboardModel,
  onDidChange: vscode.Event<unknown>,
): vscode.Disposable {
  let panel: vscode.WebviewPanel | undefined;
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  let lastPost = 0;

  const post = () => {
    if (!panel) return;
    lastPost = Date.now();
    pending = false;
    void panel.webview.postMessage({ type: 'model', model: forFrontDeep(getModel(), 'vscode') });
  };
  const schedule = () => {
    if (!panel || !panel.visible) return;
    if (pending) return;
    pending = true;
    const wait = Math.max(0, THROTTLE_MS - (Date.now() - lastPost));
    timer = setTimeout(post, wait);
  };

  const open = () => {
    if (panel) {
      panel.reveal(undefined, true);
      return;
    }
    const media = vscode.Uri.joinPath(context.extensionUri, 'media');
    const dist = vscode.Uri.joinPath(context.extensionUri, 'dist', 'media');
    const words = dashboardWords();
    panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      words.title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      {
        enableScripts: true,
        retainContextWhenHidden: false,
        localResourceRoots: [dist, media],
      },
    );
    const webview = panel.webview;
    const uri = (base: vscode.Uri, file: string) => webview.asWebviewUri(vscode.Uri.joinPath(base, file)).toString();
    webview.html = dashboardHtml({
      cspSource: webview.cspSource,
      nonce: nonce(),
      uplotJs: uri(dist, 'uPlot.iife.min.js'),
      uplotCss: uri(dist, 'uPlot.min.css'),
      script: uri(media, 'dashboard.js'),
      style: uri(media, 'dashboard.css'),
      words,
      lang: vscode.env.language,
    });
    const subs = [
      webview.onDidReceiveMessage((m: unknown) => {
        if (typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'ready') post();
      }),
      panel.onDidChangeViewState(() => panel?.visible && post()),
    ];
    panel.onDidDispose(() => {
      clearTimeout(timer);
      pending = false;
      for (const s of subs) s.dispose();
      panel = undefined;
    });
  };

  const disposables = [vscode.commands.registerCommand(SHOW_DASHBOARD_COMMAND, open), onDidChange(schedule)];
  const all = vscode.Disposable.from(...disposables, { dispose: () => panel?.dispose() });
  context.subscriptions.push(all);
  return all;
}
