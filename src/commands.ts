import * as vscode from 'vscode';
import type { Controller } from './controller';
import { enableParsersCommand } from './parserActions';
import { copySudoersRuleCommand } from './ui/sudoersCommand';
import { copyMcpConfigCommand } from './ui/mcpConfig';
import { closeForwardCommand, forwardPortCommand } from './ui/forwardCommand';

/** The command table: contributed command id -> what it does. */
export function registerCommands(controller: Controller, log: vscode.LogOutputChannel, context: vscode.ExtensionContext): vscode.Disposable[] {
  const table: Record<string, (arg?: unknown) => unknown> = {
    'kimi.restartService': () => controller.restart(),
    'kimi.pollService': () => controller.poll(),
    'kimi.stopPolling': () => controller.stopPolling(),
    'kimi.showLog': () => controller.showLog(),
    'kimi.selectServer': () => controller.selectServer(),
    'kimi.enableParsers': () => enableParsersCommand(controller, log),
    'kimi.verifyParsers': () => controller.verifyParsersCommand(),
    'kimi.setApiKey': () => controller.setApiKey(),
    'kimi.copySudoersRule': () => copySudoersRuleCommand(controller.activeServerProfile(), log),
    'kimi.copyMcpConfig': () => copyMcpConfigCommand(context, log),
    'kimi.forwardPort': (arg) => forwardPortCommand(controller, log, arg),
    'kimi.closeForward': (arg) => closeForwardCommand(controller, arg),
  };
  return Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, run));
}
