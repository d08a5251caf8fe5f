import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { Controller } from '../controller';
import { enableParsersCommand } from '../checks/parserActions';
import { suggestFasterLoadCommand } from '../checks/adviceActions';
import { copySudoersRuleCommand } from './sudoersCommand';
import { copyMcpConfigCommand } from '../launcher/mcpConfig';
import { installLauncherCommand } from '../launcher/launcherCommand';
import { closeForwardCommand, forwardPortCommand } from './forwardCommand';
import { commandTarget, serverNameOf } from './serverArgument';
import { trustGated } from '../trust/workspaceTrust';
import type { KeptPasswords } from '../secrets/keptPasswords';
import { forgetPasswordsCommand } from '../secrets/forgetPasswordsCommand';
import { FORMER_IDS } from './formerIds';

/** The command table: contributed command id -> what it does. */
export function registerCommands(
  controller: Controller,
  log: vscode.LogOutputChannel,
  context: vscode.ExtensionContext,
  keptPasswords: KeptPasswords,
): vscode.Disposable[] {
  /**
   * Commands that act on one server take its name, or a servers-view row ({ serverName }), first;
   * a row lost on the way (see commandTarget) is asked for rather than taken to be the active one.
   */
  const onServer =
    (act: (name: string | undefined) => unknown) =>
    async (...args: unknown[]): Promise<unknown> => {
      const target = commandTarget(args);
      if (target.kind !== 'lost') return act(target.kind === 'named' ? target.name : undefined);
      const name = await controller.choice.pick(
        l10n.t('Kimi: which server? The servers view changed while its menu was open'),
      );
      return name === undefined ? undefined : act(name);
    };
  const table: Record<string, (...args: unknown[]) => unknown> = {
    'kimiService.restartService': onServer((name) => controller.restarts.restart(name)),
    'kimiService.watchService': onServer((name) => controller.watches.watch(name)),
    'kimiService.stopWatching': onServer((name) => controller.watches.stopWatching(name)),
    'kimiService.showLog': () => controller.showLog(),
    'kimiService.makeActive': onServer((name) => controller.choice.makeActive(name)),
    'kimiService.selectServer': () => controller.choice.select(),
    'kimiService.addServer': () => controller.addServer(),
    // The view's title passes its focused row, or nothing when none is: nothing means the active server's model.
    'kimiService.rollingRestart': (argument) => controller.rollingRestart(serverNameOf(argument)),
    'kimiService.enableParsers': () => enableParsersCommand(controller, log),
    'kimiService.suggestFasterLoad': () => suggestFasterLoadCommand(controller, log, context.globalState),
    'kimiService.verifyParsers': onServer((name) => controller.checks.command(name)),
    'kimiService.setApiKey': () => controller.setApiKey(),
    'kimiService.forgetSshPasswords': () => forgetPasswordsCommand(keptPasswords, log),
    'kimiService.copySudoersRule': () => copySudoersRuleCommand(controller.activeServerProfile(), log),
    'kimiService.copyMcpConfig': () => copyMcpConfigCommand(context, log),
    'kimiService.installCommandInPath': () => installLauncherCommand(context, log),
    'kimiService.forwardPort': onServer((name) => forwardPortCommand(controller, log, name)),
    'kimiService.closeForward': (arg) => closeForwardCommand(controller, arg),
  };
  return [
    ...Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, trustGated(id, run))),
    ...Object.entries(FORMER_IDS).map(([former, id]) =>
      vscode.commands.registerCommand(former, (...args: unknown[]) => vscode.commands.executeCommand(id, ...args)),
    ),
  ];
}
