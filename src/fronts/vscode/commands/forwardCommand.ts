/**
 * "Kimi Service: Forward server port" and "Kimi Service: Close forwarded port": the VS Code side of the fleet's
 * port forward. The local port is chosen without a question (the server's own port when free,
 * else any free one): the base URL is shown and copied on request, so its number need not be
 * remembered.
 */
import * as vscode from 'vscode';
import type { ServerProfile } from '../../../config/config';
import type { Controller } from '../controller';
import { ForwardError } from '../../../fleet/forward/forwardPlan';
import { TransportError } from '../../../transport/transport';
import { errorText } from '../../../util/errors';
import { serverNameOf } from './serverArgument';

const COPY = 'Copy base URL';
const CLOSE = 'Close forward';

/** The server a command acts on: the one named by its argument, else the active one. */
function commandServer(controller: Controller, arg: unknown): ServerProfile | undefined {
  const name = serverNameOf(arg);
  // The active server also loads the settings when no command has yet (invalid ones are said).
  const active = controller.activeServerProfile();
  if (name === undefined || !active) return active;
  const server = controller.fleet.server(name);
  if (!server) void vscode.window.showErrorMessage(`Kimi: no server named "${name}" in kimiService.servers.`);
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
      { location: vscode.ProgressLocation.Window, title: `Kimi: forwarding the port of ${server.name}` },
      () => controller.fleet.forward(server),
    );
  } catch (error) {
    if (error instanceof ForwardError && error.kind === 'local')
      return void vscode.window.showInformationMessage(`Kimi: ${error.message}`);
    // A refused connection has been told already (the fleet's refusal, with its buttons).
    if (error instanceof TransportError && controller.fleet.snapshot(server).refusal) return;
    log.error(`[${server.name}] Port forward: ${errorText(error)}`);
    return void vscode.window.showErrorMessage(`Kimi on ${server.name}: ${errorText(error)}`);
  }
  const { info, already } = result;
  const where = `${info.baseUrl}${info.portNote ? ` (${info.portNote})` : ''}`;
  const choice = await vscode.window.showInformationMessage(
    `Kimi on ${server.name} ${already ? 'is already forwarded' : 'is forwarded'} to this machine: ${where}`,
    COPY,
    CLOSE,
  );
  if (choice === COPY) {
    await vscode.env.clipboard.writeText(info.baseUrl);
    void vscode.window.showInformationMessage(`Copied ${info.baseUrl}`);
  }
  if (choice === CLOSE) await controller.fleet.closeForward(server);
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
    void vscode.window.showInformationMessage(`Kimi: closed 127.0.0.1:${port} (the forward of ${server.name}).`);
  else void vscode.window.showInformationMessage(`Kimi: ${server.name} has no forwarded port.`);
}
