/**
 * "Enable parsers" for a server run by Docker (the VS Code shell of server/composeParsers):
 * a compose service gets the flags in its compose file and is recreated, with a roll back
 * offered when it then fails; a plain container gets the exact command its `docker run` needs.
 */
import * as vscode from 'vscode';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import type { Controller } from './controller';
import type { ServerProfile } from '../../config/config';
import type { ParserChangeDeps } from '../../target/systemd/parserDropIn';
import type { ParserChoice } from '../../engine/engine';
import { containerParserAdvice, enableComposeParsers, rollbackCompose } from '../../target/docker/composeParsers';
import { targetFor } from '../../target/target';

const APPLY = 'Apply and recreate';
const ROLL_BACK = 'Roll back';

export async function enableParsersInDocker(
  controller: Controller,
  server: ServerProfile,
  deps: ParserChangeDeps,
  choice: ParserChoice,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const docker = server.docker;
  if (!docker) return;
  if (docker.kind === 'container') {
    const state = await targetFor(server).readState({ exec: (command) => deps.exec(command) });
    const advice = containerParserAdvice(docker.name, state.argv, choice);
    log.info(`[${server.name}] ${advice}`);
    void vscode.window.showInformationMessage(`Kimi on ${server.name}: ${docker.label}`, {
      modal: true,
      detail: maskSecrets(advice),
    });
    return;
  }
  const confirmDeps: ParserChangeDeps = {
    ...deps,
    confirmDiff: async (diff) => {
      log.info(`[${server.name}] Proposed change of ${docker.file}:\n${diff}`);
      const choiceMade = await vscode.window.showWarningMessage(
        `Change ${docker.file} on ${server.name} and recreate the service ${docker.service}?`,
        { modal: true, detail: `${maskSecrets(diff)}\n\nThe previous file is kept next to it (.kimi-backup).` },
        APPLY,
      );
      return choiceMade === APPLY;
    },
  };
  const result = await enableComposeParsers(confirmDeps, docker.file, docker.service, choice);
  if (result.kind === 'cancelled') return;
  if (result.kind === 'already-set') {
    void vscode.window.showInformationMessage(
      `Kimi on ${server.name}: the parsers are already set in ${docker.file}. Nothing was restarted.`,
    );
    return;
  }
  const outcome = await controller.watch(server, 'restart');
  if (outcome?.end !== 'failed') return;
  const answer = await vscode.window.showErrorMessage(
    `Kimi on ${server.name} failed to start with the new parser flags. Put the previous ${docker.file} back and recreate the service?`,
    ROLL_BACK,
  );
  if (answer !== ROLL_BACK) return;
  try {
    await rollbackCompose(deps, result.rollback);
  } catch (error) {
    void controller.notify('error', `Kimi on ${server.name}: roll back failed: ${errorText(error)}`);
    return;
  }
  await controller.watch(server, 'restart');
}
