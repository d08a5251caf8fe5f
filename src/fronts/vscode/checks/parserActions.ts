/**
 * "Enable tool calling and thinking parsers" in VS Code: the parser pick, the diff to confirm and
 * the roll back offer are dialogs; the change itself is the fleet verb (src/fleet/checks/parsers.ts),
 * the same the CLI runs.
 */
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import { errorText } from '../../../util/errors';
import { maskSecrets } from '../../../util/secrets';
import { shownText } from '../output/shownText';
import type { ActionHost } from './actionHost';
import { confirmModal } from '../restart/restartDialog';
import type { ServerProfile } from '../../../config/config';
import {
  enableParsersOn,
  isSudoRefusalError,
  rollbackParsersOn,
  type ArgsChangeUi,
  type ProposedArgsChange,
} from '../../../fleet/checks/parsers';
import { ENGINES } from '../../../engine/engine';
import { DEFAULT_PARSER } from '../../../engine/parserNames';

const ROLL_BACK = 'Roll back';
const COPY_RULE = 'Copy sudoers rule';

async function pickParser(kind: string, names: readonly string[]): Promise<string | undefined> {
  const ordered = [DEFAULT_PARSER, ...names.filter((n) => n !== DEFAULT_PARSER)];
  const picked = await vscode.window.showQuickPick(
    ordered.map((name) => ({
      label: name,
      description: name === DEFAULT_PARSER ? 'Kimi K2 / K2.6 (<think> markers)' : undefined,
    })),
    {
      title: kind === 'reasoning' ? l10n.t('Kimi: reasoning parser') : l10n.t('Kimi: tool call parser'),
      placeHolder: l10n.t(
        "{0} (kimi_k2 for Kimi K2.6; SGLang's and vLLM's names)",
        `--${kind === 'reasoning' ? 'reasoning-parser' : 'tool-call-parser'}`,
      ),
    },
  );
  return picked?.label;
}

/** The modal that shows the diff: the words of each kind of change as before. */
async function confirmChange(server: ServerProfile, change: ProposedArgsChange): Promise<boolean> {
  const apply = change.how === 'compose' ? 'Apply and recreate' : 'Apply and restart';
  const question =
    change.how === 'compose'
      ? `Change ${change.file} on ${server.name} and recreate the service ${server.docker?.kind === 'compose' ? server.docker.service : ''}?`
      : change.how === 'script'
        ? `Change the batch script ${change.file} on ${server.name} and submit it again (${change.restarts})?`
        : `Change the command line of ${server.unit} on ${server.name} and restart it?`;
  const note =
    change.how === 'compose'
      ? 'The previous file is kept next to it (.kimi-backup).'
      : change.how === 'script'
        ? 'The previous script is kept next to it (.kimi-backup). The job is cancelled and the script submitted again: a requeue would run the copy the job was submitted with.'
        : 'The change is written as a systemd drop-in (the unit file itself is not edited); the previous drop-in is kept as a backup.';
  return confirmModal(question, `${maskSecrets(change.diff)}\n\n${note}`, apply);
}

function changeUi(server: ServerProfile, log: vscode.LogOutputChannel): ArgsChangeUi {
  return {
    log: (line) => log.info(`[${server.name}] ${line}`),
    confirm: (change) => {
      log.info(`[${server.name}] Proposed change of ${change.file}:\n${change.diff}`);
      return confirmChange(server, change);
    },
  };
}

/** A refusal by sudo offers the rules that allow the command; anything else, the log. */
function notifyFailure(host: ActionHost, error: unknown, message: string): void {
  if (!isSudoRefusalError(error)) {
    void host.notify('error', message);
    return;
  }
  const showLog = l10n.t('Show log');
  void vscode.window.showErrorMessage(shownText(message), COPY_RULE, showLog).then((choice) => {
    if (choice === COPY_RULE) void vscode.commands.executeCommand('kimiService.copySudoersRule');
    else if (choice === showLog) host.showLog();
  });
}

/**
 * "Enable tool calling and thinking parsers": add the flags to the server's command line, restart,
 * watch; offer to roll back when the new command line fails.
 */
export async function enableParsersCommand(host: ActionHost, log: vscode.LogOutputChannel): Promise<void> {
  const server = host.requireServer();
  if (!server) return;
  // The engine is read after the pick; the verb checks the name against its list.
  const reasoningParser = await pickParser('reasoning', [...new Set(ENGINES.flatMap((e) => e.parsers.reasoning))]);
  if (!reasoningParser) return;
  const toolCallParser = await pickParser('tool call', [...new Set(ENGINES.flatMap((e) => e.parsers.toolCall))]);
  if (!toolCallParser) return;
  const session = await host.openSession(server);
  if (!session) return;
  const ui = changeUi(server, log);
  let outcome;
  try {
    outcome = await enableParsersOn(session, { reasoningParser, toolCallParser }, ui);
  } catch (error) {
    const message = errorText(error);
    log.error(`[${server.name}] Enabling parsers failed: ${message}`);
    notifyFailure(host, error, `Kimi on ${server.name}: could not enable the parsers: ${message}`);
    return;
  }
  switch (outcome.kind) {
    case 'cancelled':
      return;
    case 'manual':
      log.info(`[${server.name}] ${outcome.advice}`);
      void vscode.window.showInformationMessage(
        l10n.t('Kimi on {0}: {1}', server.name, server.docker?.label ?? server.unit),
        {
          modal: true,
          detail: shownText(outcome.advice),
        },
      );
      return;
    case 'already-set':
      log.info(
        `[${server.name}] --reasoning-parser ${reasoningParser} and --tool-call-parser ${toolCallParser} are already set in ${outcome.where}; nothing restarted.`,
      );
      void vscode.window.showInformationMessage(
        server.docker
          ? l10n.t(
              'Kimi on {0}: the parsers are already set in {1}. Nothing was restarted.',
              server.name,
              outcome.where,
            )
          : l10n.t(
              'Kimi on {0}: the parsers are already set ({1}, {2}). Nothing was restarted.',
              server.name,
              reasoningParser,
              toolCallParser,
            ),
      );
      return;
    case 'changed':
      break;
  }
  log.info(`[${server.name}] Written: ${outcome.file}`);
  const watched = (await host.restartAfterChange(server))?.outcome;
  if (watched?.end !== 'failed') return;
  const question =
    outcome.how === 'compose' || outcome.how === 'script'
      ? `Put the previous ${outcome.file} back and ${outcome.how === 'compose' ? 'recreate the service' : 'submit it again'}?`
      : 'Roll back to the previous command line and restart?';
  const choice = await vscode.window.showErrorMessage(
    l10n.t('Kimi on {0} failed to start with the new parser flags. {1}', server.name, question),
    ROLL_BACK,
  );
  if (choice !== ROLL_BACK) return;
  try {
    const rolled = await rollbackParsersOn(session, ui, outcome.rollback);
    log.info(`[${server.name}] Rolled back ${rolled.kind === 'rolled-back' ? rolled.file : outcome.file}.`);
  } catch (error) {
    const message = errorText(error);
    log.error(`[${server.name}] Roll back failed: ${message}`);
    notifyFailure(host, error, `Kimi on ${server.name}: roll back failed: ${message}`);
    return;
  }
  await host.restartAfterChange(server);
}
