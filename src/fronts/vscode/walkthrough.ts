/**
 * The first-run walkthrough (contributes.walkthroughs "kimiService.firstRun"): opened once, on the first
 * activation, for someone with no server configured yet, unless the user turned walkthroughs on
 * install off (workbench.welcomePage.walkthroughs.openOnInstall) or wants nothing at start-up
 * (workbench.startupEditor "none"). Its steps complete on the context keys set here.
 */
import * as vscode from 'vscode';
import type { FleetVerbs } from '../../fleet/fleetVerbs';
import { userSetting } from './settings/settingsSource';

export const WALKTHROUGH_ID = 'kimi-tools.kimi-service#kimiService.firstRun';
const SHOWN_KEY = 'kimi.walkthroughShown';

/** Opens the walkthrough on the first run; says why it did or did not (for the log). */
export async function openWalkthroughOnFirstRun(context: vscode.ExtensionContext): Promise<string> {
  if (context.globalState.get<boolean>(SHOWN_KEY)) return 'shown before';
  await context.globalState.update(SHOWN_KEY, true);
  const servers = userSetting<unknown>('servers', []);
  if (Array.isArray(servers) && servers.length > 0) return 'a server is configured already';
  const workbench = vscode.workspace.getConfiguration('workbench');
  // openOnInstall is an application setting, which a remote extension host (code-server, SSH
  // remotes) does not see; startupEditor "none" says the same (nothing at start-up) and is seen.
  if (workbench.get<boolean>('welcomePage.walkthroughs.openOnInstall') === false)
    return 'workbench.welcomePage.walkthroughs.openOnInstall is off';
  if (workbench.get<string>('startupEditor') === 'none') return 'workbench.startupEditor is "none"';
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
  return 'opened';
}

/** `kimiService.parsersVerified` (a verification passed) and `kimiService.chatModelOffered`, for the steps' completion. */
export function walkthroughContext(
  fleet: FleetVerbs,
  chatModels: () => readonly unknown[],
  onChatChange: vscode.Event<void>,
): vscode.Disposable {
  const set = (key: string, value: boolean) => void vscode.commands.executeCommand('setContext', key, value);
  return vscode.Disposable.from(
    fleet.onEvent((event) => {
      if (event.type === 'verified' && event.allPassed) set('kimiService.parsersVerified', true);
    }),
    onChatChange(() => set('kimiService.chatModelOffered', chatModels().length > 0)),
  );
}
