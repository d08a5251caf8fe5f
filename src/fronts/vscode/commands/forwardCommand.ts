/**
 * "Kimi Service: Forward server port" and "Kimi Service: Close forwarded port": the VS Code side of the fleet's
 * port forward. The local port is chosen without a question (the server's own port when free,
 * else any free one): the base URL is shown and copied on request, so its number need not be
 * remembered.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../../config/config';
import type { Controller } from '../controller';
import { ForwardError } from '../../../fleet/forward/forwardPlan';
import { TransportError } from '../../../transport/transport';
import { errorText } from '../../../util/errors';
import { serverNameOf } from './serverArgument';

/** The server a command acts on: the one named by its argument, else the active one. */
function commandServer(controller: Controller, arg: unknown): ServerProfile | undefined {
  const name = serverNameOf(arg);
  // The active server also loads the settings when no command has yet (invalid ones are said).
  const active = controller.activeServerProfile();
  if (name === undefined || !active) return active;
  const server = controller.fleet.server(name);
  if (!server) void vscode.window.showErrorMessage(l10n.t('Kimi: no server named "{0}" in kimiService.servers.', name));
  return server;
}

export async function forwardPortCommand(
  controller: Controller,
  log: vscode.LogOutputChannel,
  arg?: unknown,
): Promise<void> {
  const server = commandServer(controller, arg);
  if (!server) return;
  let result;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: l10n.t('Kimi: forwarding the port of {0}', server.name) },
      () => controller.fleet.forward(server),
    );
  } catch (error) {
    if (error instanceof ForwardError && error.kind === 'local')
      return void vscode.window.showInformationMessage(l10n.t('Kimi: {0}', error.message));
    // A refused connection has been told already (the fleet's refusal, with its buttons).
    if (error instanceof TransportError && controller.fleet.snapshot(server).refusal) return;
    log.error(`[${server.name}] Port forward: ${errorText(error)}`);
    return void vscode.window.showErrorMessage(l10n.t('Kimi on {0}: {1}', server.name, errorText(error)));
  }
  const { info, already } = result;
  const where = `${info.baseUrl}${info.portNote ? ` (${info.portNote})` : ''}`;
  const copy = l10n.t('Copy base URL');
  const close = l10n.t('Close forward');
  const choice = await vscode.window.showInformationMessage(
    already
      ? l10n.t('Kimi on {0} is already forwarded to this machine: {1}', server.name, where)
      : l10n.t('Kimi on {0} is forwarded to this machine: {1}', server.name, where),
    copy,
    close,
  );
  if (choice === copy) {
    await vscode.env.clipboard.writeText(info.baseUrl);
    void vscode.window.showInformationMessage(l10n.t('Copied {0}', info.baseUrl));
  }
  if (choice === close) await controller.fleet.closeForward(server);
}

export async function closeForwardCommand(controller: Controller, arg?: unknown): Promise<void> {
  const name = serverNameOf(arg);
  // Without an argument, the active server's forward; if it has none, the only one open.
  let server = name !== undefined ? controller.fleet.server(name) : controller.activeServerProfile();
  if (name === undefined && server && !controller.fleet.forwardOf(server)) {
    const open = controller.fleet.servers.filter((s) => controller.fleet.forwardOf(s));
    if (open.length === 1) server = open[0];
  }
  if (!server) return;
  const port = controller.fleet.forwardOf(server)?.localPort;
  if (await controller.fleet.closeForward(server))
    void vscode.window.showInformationMessage(
      l10n.t('Kimi: closed 127.0.0.1:{0} (the forward of {1}).', String(port), server.name),
    );
  else void vscode.window.showInformationMessage(l10n.t('Kimi: {0} has no forwarded port.', server.name));
}
