/**
 * The first-run walkthrough (contributes.walkthroughs "kimi.firstRun"): opened once, on the first
 * activation, for someone with no server configured yet, unless the user turned walkthroughs on
 * install off (workbench.welcomePage.walkthroughs.openOnInstall). Its steps complete on the
 * context keys set here.
 */
import * as vscode from 'vscode';
import type { Fleet } from '../fleet/fleet';

export const WALKTHROUGH_ID = 'kimi-tools.kimi-service#kimi.firstRun';
const SHOWN_KEY = 'kimi.walkthroughShown';

export async function openWalkthroughOnFirstRun(context: vscode.ExtensionContext): Promise<void> {
  if (context.globalState.get<boolean>(SHOWN_KEY)) return;
  await context.globalState.update(SHOWN_KEY, true);
  if ((vscode.workspace.getConfiguration('kimi').get<unknown[]>('servers') ?? []).length > 0) return;
  if (vscode.workspace.getConfiguration('workbench').get<boolean>('welcomePage.walkthroughs.openOnInstall') === false) return;
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
}

/** `kimi.parsersVerified` (a verification passed) and `kimi.chatModelOffered`, for the steps' completion. */
export function walkthroughContext(fleet: Fleet, chatModels: () => readonly unknown[], onChatChange: vscode.Event<void>): vscode.Disposable {
  const set = (key: string, value: boolean) => void vscode.commands.executeCommand('setContext', key, value);
  return vscode.Disposable.from(
    fleet.onEvent((event) => {
      if (event.type === 'verified' && event.allPassed) set('kimi.parsersVerified', true);
    }),
    onChatChange(() => set('kimi.chatModelOffered', chatModels().length > 0)),
  );
}
