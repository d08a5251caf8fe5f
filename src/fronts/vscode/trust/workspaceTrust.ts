/** The Restricted Mode gate (trustRules.ts says what it closes) for commands and the agent tools. */
import * as vscode from 'vscode';
import { TRUST_REQUIRED_COMMANDS, needsTrust, restrictedModeMessage } from './trustRules';

const MANAGE_TRUST = 'Manage Workspace Trust';

/** True in a trusted workspace; else says why not (with a way to trust it) and is false. */
export function requireTrust(action: string): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window.showWarningMessage(restrictedModeMessage(action), MANAGE_TRUST).then((choice) => {
    if (choice === MANAGE_TRUST) void vscode.commands.executeCommand('workbench.trust.manage');
  });
  return false;
}

/** A command that needs trust runs only in a trusted workspace; the others as they are. */
export function trustGated<A extends unknown[]>(
  commandId: string,
  run: (...args: A) => unknown,
): (...args: A) => unknown {
  if (!needsTrust(commandId)) return run;
  const action = TRUST_REQUIRED_COMMANDS[commandId]!;
  return (...args: A) => (requireTrust(action) ? run(...args) : undefined);
}
