import * as vscode from 'vscode';
import { errorText } from '../../util/errors';
import { maskSecrets } from '../../util/secrets';
import type { Controller } from './controller';
import type { FleetSession } from '../../fleet/fleet';
import { enableParsers, ParserChangeError, rollback, type ParserChangeDeps } from '../../target/systemd/parserDropIn';
import { enableParsersInDocker } from './dockerParserActions';
import { DEFAULT_PARSER, REASONING_PARSERS, TOOL_CALL_PARSERS } from '../../engine/parserNames';
import { VLLM_REASONING_PARSERS, VLLM_TOOL_CALL_PARSERS } from '../../engine/vllm/vllmParsers';

const ROLL_BACK = 'Roll back';
const APPLY = 'Apply and restart';

async function pickParser(kind: string, names: readonly string[]): Promise<string | undefined> {
  const ordered = [DEFAULT_PARSER, ...names.filter((n) => n !== DEFAULT_PARSER)];
  const picked = await vscode.window.showQuickPick(
    ordered.map((name) => ({
      label: name,
      description: name === DEFAULT_PARSER ? 'Kimi K2 / K2.6 (<think> markers)' : undefined,
    })),
    {
      title: `Kimi: ${kind} parser`,
      placeHolder: `--${kind === 'reasoning' ? 'reasoning-parser' : 'tool-call-parser'} (kimi_k2 for Kimi K2.6; SGLang's and vLLM's names)`,
    },
  );
  return picked?.label;
}

function changeDeps(session: FleetSession, log: vscode.LogOutputChannel): ParserChangeDeps {
  const name = session.profile.name;
  return {
    sudo: session.profile.sudo,
    host: session.profile.host,
    log: (line) => log.info(`[${name}] ${line}`),
    // File contents go on the command's stdin (never on a command line, never in this log).
    exec: async (command, options) => {
      const shown = maskSecrets(command.length > 400 ? `${command.slice(0, 400)}…` : command);
      log.info(
        `[${name}] $ ${shown}${options?.stdin !== undefined ? ` (${Buffer.byteLength(options.stdin)} bytes on stdin)` : ''}`,
      );
      return session.transport.exec(command, {
        timeoutMs: 60_000,
        ...(options?.stdin !== undefined ? { stdin: options.stdin } : {}),
      });
    },
    confirmDiff: async (diff) => {
      log.info(`[${name}] Proposed ExecStart change:\n${diff}`);
      const choice = await vscode.window.showWarningMessage(
        `Change the command line of ${session.profile.unit} on ${name} and restart it?`,
        {
          modal: true,
          detail: `${maskSecrets(diff)}\n\nThe change is written as a systemd drop-in (the unit file itself is not edited); the previous drop-in is kept as a backup.`,
        },
        APPLY,
      );
      return choice === APPLY;
    },
  };
}

const COPY_RULE = 'Copy sudoers rule';

/** A refusal by sudo offers the rules that allow the command; anything else, the log. */
function notifyFailure(controller: Controller, error: unknown, message: string): void {
  if (!(error instanceof ParserChangeError && error.sudoRefused)) {
    void controller.notify('error', message);
    return;
  }
  void vscode.window.showErrorMessage(maskSecrets(message), COPY_RULE, 'Show log').then((choice) => {
    if (choice === COPY_RULE) void vscode.commands.executeCommand('kimi.copySudoersRule');
    else if (choice === 'Show log') controller.showLog();
  });
}

/**
 * "Enable tool calling and thinking parsers": add the flags to the unit's command line as a
 * drop-in, reload, restart, watch; offer to roll back when the new command line fails.
 */
export async function enableParsersCommand(controller: Controller, log: vscode.LogOutputChannel): Promise<void> {
  const server = controller.idleServer();
  if (!server) return;
  // The unit (SGLang or vLLM) is read after the pick; enableParsers checks the name against its list.
  const reasoningParser = await pickParser('reasoning', [
    ...new Set([...REASONING_PARSERS, ...VLLM_REASONING_PARSERS]),
  ]);
  if (!reasoningParser) return;
  const toolCallParser = await pickParser('tool call', [...new Set([...TOOL_CALL_PARSERS, ...VLLM_TOOL_CALL_PARSERS])]);
  if (!toolCallParser) return;
  const session = await controller.openSession(server);
  if (!session) return;
  const deps = changeDeps(session, log);
  if (server.docker) {
    try {
      await session.transport.connect();
      await enableParsersInDocker(controller, server, deps, { reasoningParser, toolCallParser }, log);
    } catch (error) {
      log.error(`[${server.name}] Enabling parsers failed: ${errorText(error)}`);
      notifyFailure(controller, error, `Kimi on ${server.name}: could not enable the parsers: ${errorText(error)}`);
    }
    return;
  }
  let result;
  try {
    await session.transport.connect();
    result = await enableParsers(deps, server.unit, { reasoningParser, toolCallParser });
  } catch (error) {
    const message = errorText(error);
    log.error(`[${server.name}] Enabling parsers failed: ${message}`);
    notifyFailure(controller, error, `Kimi on ${server.name}: could not enable the parsers: ${message}`);
    return;
  }
  if (result.kind === 'cancelled') return;
  if (result.kind === 'already-set') {
    log.info(
      `[${server.name}] --reasoning-parser ${reasoningParser} and --tool-call-parser ${toolCallParser} are already set; nothing restarted.`,
    );
    void vscode.window.showInformationMessage(
      `Kimi on ${server.name}: the parsers are already set (${reasoningParser}, ${toolCallParser}). Nothing was restarted.`,
    );
    return;
  }
  log.info(
    `[${server.name}] Drop-in written: ${result.rollback.dropInPath}${result.rollback.backupPath ? ` (backup ${result.rollback.backupPath})` : ''}`,
  );
  const outcome = await controller.watch(server, 'restart');
  if (outcome?.end !== 'failed') return;
  const choice = await vscode.window.showErrorMessage(
    `Kimi on ${server.name} failed to start with the new parser flags. Roll back to the previous command line and restart?`,
    ROLL_BACK,
  );
  if (choice !== ROLL_BACK) return;
  try {
    await rollback(deps, result.rollback);
    log.info(`[${server.name}] Rolled back ${result.rollback.dropInPath}.`);
  } catch (error) {
    const message = errorText(error);
    log.error(`[${server.name}] Roll back failed: ${message}`);
    notifyFailure(controller, error, `Kimi on ${server.name}: roll back failed: ${message}`);
    return;
  }
  await controller.watch(server, 'restart');
}
