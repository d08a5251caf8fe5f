import * as vscode from 'vscode';
import { registerCommands } from './fronts/vscode/commands/commands';
import { Controller } from './fronts/vscode/controller';
import { StatusBar } from './fronts/vscode/status/statusBar';
import { registerDashboard } from './fronts/vscode/dashboard/dashboard';
import { vscodeSessionUi } from './fronts/vscode/secrets/prompts';
import { KeptPasswords } from './fronts/vscode/secrets/keptPasswords';
import { maskedLog } from './fronts/vscode/output/maskedLog';
import { ApiKeys } from './fronts/vscode/secrets/apiKeys';
import { registerLanguageModelTools } from './fronts/lm/tools';
import { ServersView } from './fronts/vscode/serversView/serversView';
import { CHAT_VENDOR, KimiChatProvider } from './fronts/vscode/chat/provider';
import { openWalkthroughOnFirstRun, walkthroughContext } from './fronts/vscode/walkthrough';
import { migrateLegacySettings } from './fronts/vscode/settings/settingsMigration';
import { watchIgnoredSettings } from './fronts/vscode/settings/workspaceOverrides';
import { tailedLog } from './fronts/vscode/output/logTail';
import { registerReportProblem } from './fronts/vscode/output/reportProblem';
import { refreshInstalledLauncher } from './fronts/vscode/launcher/launcherCommand';
import { LineTail } from './util/lineTail';
import { useBundle } from './util/l10n';

/** How many lines of the log a problem report carries. */
const REPORT_LOG_LINES = 200;

/** What activate() returns: read-only views for tests and other extensions. */
export interface KimiApi {
  /** The status bar item's current text, e.g. "$(check) Kimi: ready". */
  statusText(): string;
  /** The chat models offered now (what the editor's model picker lists from this extension). */
  chatModels(): { id: string; name: string; toolCalling: boolean }[];
}

export function activate(context: vscode.ExtensionContext): KimiApi {
  // Before any word is made: the fronts below VS Code (present/, fleet/) translate through @vscode/l10n.
  useBundle(vscode.l10n.bundle);
  const logTail = new LineTail(REPORT_LOG_LINES);
  const channel = tailedLog(vscode.window.createOutputChannel('Kimi Service', { log: true }), logTail);
  const apiKeys = new ApiKeys(context.secrets);
  const log = maskedLog(channel, apiKeys.known);
  void migrateLegacySettings(context.globalState, channel).catch((error: unknown) =>
    channel.warn(`Could not migrate the old kimi.* settings: ${String(error)}`),
  );
  context.subscriptions.push(watchIgnoredSettings(channel));
  void refreshInstalledLauncher(context, log);
  const statusBar = new StatusBar();
  const keptPasswords = new KeptPasswords(context.secrets, context.globalState);
  const uiSideOfRemote =
    vscode.env.remoteName !== undefined && context.extension.extensionKind === vscode.ExtensionKind.UI
      ? vscode.env.remoteName
      : undefined;
  const controller = new Controller({
    log,
    statusBar,
    ui: vscodeSessionUi(log, keptPasswords),
    state: context.globalState,
    windowState: context.workspaceState,
    apiKeys,
    ...(uiSideOfRemote !== undefined ? { uiSideOfRemote } : {}),
  });
  context.subscriptions.push(
    channel,
    statusBar,
    controller,
    ...registerCommands(controller, log, context, keptPasswords),
  );
  context.subscriptions.push(
    registerDashboard(context, () => controller.dashboardModel(), controller.dashboard.onDidChange),
  );
  context.subscriptions.push(...registerLanguageModelTools(controller.sessions));
  context.subscriptions.push(new ServersView(controller.fleet, () => controller.activeServerName()));
  context.subscriptions.push(...registerReportProblem(context, controller.fleet, logTail, apiKeys.known));
  const chat = new KimiChatProvider(controller.fleet, channel);
  context.subscriptions.push(chat, vscode.lm.registerLanguageModelChatProvider(CHAT_VENDOR, chat));
  context.subscriptions.push(
    walkthroughContext(controller.fleet, () => chat.models(), chat.onDidChangeLanguageModelChatInformation),
  );
  void openWalkthroughOnFirstRun(context).then(
    (why) =>
      why === 'opened'
        ? channel.info('First-run walkthrough opened.')
        : channel.debug(`First-run walkthrough not opened: ${why}.`),
    (error) => channel.warn(`Could not open the walkthrough: ${String(error)}`),
  );
  return {
    statusText: () => statusBar.text,
    chatModels: () =>
      chat.models().map((m) => ({ id: m.id, name: m.name, toolCalling: m.capabilities.toolCalling === true })),
  };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
