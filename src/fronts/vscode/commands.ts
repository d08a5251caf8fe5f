import * as vscode from 'vscode';
import type { Controller } from './controller';
import { enableParsersCommand } from './parserActions';
import { suggestFasterLoadCommand } from './adviceActions';
import { copySudoersRuleCommand } from './sudoersCommand';
import { copyMcpConfigCommand } from './mcpConfig';
import { closeForwardCommand, forwardPortCommand } from './forwardCommand';
import { serverNameOf } from './serverArgument';

/** The command table: contributed command id -> what it does. */
export function registerCommands(
  controller: Controller,
  log: vscode.LogOutputChannel,
  context: vscode.ExtensionContext,
): vscode.Disposable[] {
  // Commands that act on one server take its name, or a servers-view row ({ serverName }), first.
  const table: Record<string, (argument?: unknown) => unknown> = {
    'kimi.restartService': (argument) => controller.restart(serverNameOf(argument)),
    'kimi.pollService': (argument) => controller.poll(serverNameOf(argument)),
    'kimi.stopPolling': (argument) => controller.stopPolling(serverNameOf(argument)),
    'kimi.showLog': () => controller.showLog(),
    'kimi.makeActive': (argument) => controller.makeActive(serverNameOf(argument)),
    'kimi.selectServer': () => controller.selectServer(),
    'kimi.addServer': () => controller.addServer(),
    'kimi.rollingRestart': (argument) => controller.rollingRestart(serverNameOf(argument)),
    'kimi.enableParsers': () => enableParsersCommand(controller, log),
    'kimi.suggestFasterLoad': () => suggestFasterLoadCommand(controller, log, context.globalState),
    'kimi.verifyParsers': (argument) => controller.verifyParsersCommand(serverNameOf(argument)),
    'kimi.setApiKey': () => controller.setApiKey(),
    'kimi.copySudoersRule': () => copySudoersRuleCommand(controller.activeServerProfile(), log),
    'kimi.copyMcpConfig': () => copyMcpConfigCommand(context, log),
    'kimi.forwardPort': (arg) => forwardPortCommand(controller, log, arg),
    'kimi.closeForward': (arg) => closeForwardCommand(controller, arg),
  };
  return Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, run));
}
