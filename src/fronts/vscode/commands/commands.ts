import * as vscode from 'vscode';
import type { Controller } from '../controller';
import { enableParsersCommand } from '../checks/parserActions';
import { suggestFasterLoadCommand } from '../checks/adviceActions';
import { copySudoersRuleCommand } from './sudoersCommand';
import { copyMcpConfigCommand } from '../launcher/mcpConfig';
import { installLauncherCommand } from '../launcher/launcherCommand';
import { closeForwardCommand, forwardPortCommand } from './forwardCommand';
import { serverNameOf } from './serverArgument';
import { trustGated } from '../trust/workspaceTrust';
import type { KeptPasswords } from '../secrets/keptPasswords';
import { forgetPasswordsCommand } from '../secrets/forgetPasswordsCommand';

/** The command table: contributed command id -> what it does. */
export function registerCommands(
  controller: Controller,
  log: vscode.LogOutputChannel,
  context: vscode.ExtensionContext,
  keptPasswords: KeptPasswords,
): vscode.Disposable[] {
  // Commands that act on one server take its name, or a servers-view row ({ serverName }), first.
  const table: Record<string, (argument?: unknown) => unknown> = {
    'kimiService.restartService': (argument) => controller.restarts.restart(serverNameOf(argument)),
    'kimiService.pollService': (argument) => controller.watches.watch(serverNameOf(argument)),
    'kimiService.stopPolling': (argument) => controller.watches.stopWatching(serverNameOf(argument)),
    'kimiService.showLog': () => controller.showLog(),
    'kimiService.makeActive': (argument) => controller.choice.makeActive(serverNameOf(argument)),
    'kimiService.selectServer': () => controller.choice.select(),
    'kimiService.addServer': () => controller.addServer(),
    'kimiService.rollingRestart': (argument) => controller.rollingRestart(serverNameOf(argument)),
    'kimiService.enableParsers': () => enableParsersCommand(controller, log),
    'kimiService.suggestFasterLoad': () => suggestFasterLoadCommand(controller, log, context.globalState),
    'kimiService.verifyParsers': (argument) => controller.checks.command(serverNameOf(argument)),
    'kimiService.setApiKey': () => controller.setApiKey(),
    'kimiService.forgetSshPasswords': () => forgetPasswordsCommand(keptPasswords, log),
    'kimiService.copySudoersRule': () => copySudoersRuleCommand(controller.activeServerProfile(), log),
    'kimiService.copyMcpConfig': () => copyMcpConfigCommand(context, log),
    'kimiService.installCommandInPath': () => installLauncherCommand(context, log),
    'kimiService.forwardPort': (arg) => forwardPortCommand(controller, log, arg),
    'kimiService.closeForward': (arg) => closeForwardCommand(controller, arg),
  };
  return Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, trustGated(id, run)));
}
