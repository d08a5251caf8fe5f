/**
 * "Kimi Service: Suggest a faster load": the suggestions for the active server's last load (each with
 * its evidence, the published figure and its source) in a QuickPick; the one picked goes
 * through the parsers' drop-in, diff, confirmation, restart and roll back. After a long load
 * the ready notification's companion says "1 suggestion for a faster load: ..." with a button.
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
  adviceSessionOf,
  applyAdvice,
  argsEditorOf,
  gatherAdvice,
  type AdviceReport,
  type AdviceSession,
} from '../../../fleet/checks/loadAdvice';
import { LoadHistoryStore, type MementoLike } from '../../../monitor/history/history';
import type { LoadState } from '../../../monitor/state/loadStateTypes';
import { MIN_PHASE_MS, type Advice } from '../../../engine/advice/rules';
import { ParserChangeError, type ParserChangeDeps } from '../../../target/argsEdit';
import { shellLine } from '../../../transport/shell';
import { adviceHeader, adviceSummary, versionLine } from '../../../present/adviceText';

const APPLY = 'Apply and restart';
const ROLL_BACK = 'Roll back';
const SHOW = 'Show suggestions';
const OPEN_SOURCE = 'Open source';

async function gather(
  host: ActionHost,
  server: ServerProfile,
  history: MementoLike,
  log: vscode.LogOutputChannel,
  state?: LoadState,
): Promise<{ session: AdviceSession; report: AdviceReport } | undefined> {
  const fleetSession = await host.openSession(server);
  if (!fleetSession) return undefined;
  const session = adviceSessionOf(fleetSession);
  if (!session) {
    void vscode.window.showInformationMessage(
      l10n.t("Kimi on {0}: suggestions read one host's log; a multi-node server is not covered yet.", server.name),
    );
    return undefined;
  }
  await session.transport.connect();
  const records = new LoadHistoryStore(history).list(server.name, server.unit);
  // The live watch knows the page cache at the restart; the history has it for an earlier load.
  const prior = state?.prior;
  const share =
    prior?.residentBytes !== undefined && prior.totalBytes
      ? Math.min(1, prior.residentBytes / prior.totalBytes)
      : undefined;
  const report = await gatherAdvice(session, {
    records,
    log: (l) => log.info(`[${server.name}] ${l}`),
    ...(share !== undefined ? { residentShareAtStart: share } : {}),
  });
  log.info(`[${server.name}] ${adviceHeader(server.name, report.result, report.log.totalMs)}`);
  for (const h of report.result.heldBack) log.info(`[${server.name}] ${l10n.t('not advised: {0}', h.reason)}`);
  log.info(`[${server.name}] ${versionLine(report.engine, report.version)}`);
  return { session, report };
}

function pickItem(advice: Advice): vscode.QuickPickItem & { advice: Advice } {
  return {
    label: advice.title,
    description: advice.notApplicable ? l10n.t('(not applied from here)') : advice.action,
    detail: l10n.t('{0}. Published: {1} ({2})', advice.evidence.join('; '), advice.figure, advice.sources.join(', ')),
    advice,
  };
}

export async function suggestFasterLoadCommand(
  host: ActionHost,
  log: vscode.LogOutputChannel,
  history: MementoLike,
): Promise<void> {
  const server = host.requireServer();
  if (!server) return;
  let gathered;
  try {
    gathered = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: l10n.t('Kimi: reading the last load of {0}', server.name),
      },
      () => gather(host, server, history, log),
    );
  } catch (error) {
    log.error(`[${server.name}] Suggestions could not be read: ${errorText(error)}`);
    void host.notify('error', `Kimi on ${server.name}: the last load could not be read: ${errorText(error)}`);
    return;
  }
  if (!gathered) return;
  const { session, report } = gathered;
  if (report.result.advice.length === 0) {
    void vscode.window.showInformationMessage(
      l10n.t(
        'Kimi on {0}: {1}.',
        server.name,
        adviceHeader(server.name, report.result, report.log.totalMs).replace(`${server.name}: `, ''),
      ),
    );
    return;
  }
  const picked = await vscode.window.showQuickPick(report.result.advice.map(pickItem), {
    title: l10n.t(
      'Kimi: suggestions for a faster load of {0} ({1})',
      server.name,
      versionLine(report.engine, report.version),
    ),
    placeHolder: l10n.t('Each is shown because this load shows its reason; pick one to see the change'),
    matchOnDetail: true,
  });
  if (!picked) return;
  const advice = picked.advice;
  if (!advice.change || advice.notApplicable) {
    const choice = await vscode.window.showInformationMessage(
      l10n.t('Kimi on {0}: {1}', server.name, advice.title),
      {
        modal: true,
        detail: `${advice.action}\n\n${advice.notApplicable ?? ''}\n\n${l10n.t('Published: {0}', advice.figure)}`,
      },
      OPEN_SOURCE,
    );
    if (choice === OPEN_SOURCE && advice.sources[0]?.startsWith('https://'))
      void vscode.env.openExternal(vscode.Uri.parse(advice.sources[0]));
    return;
  }
  await applyAndWatch(host, server, session, advice, log);
}

function changeDeps(session: AdviceSession, log: vscode.LogOutputChannel, advice: Advice): ParserChangeDeps {
  const name = session.profile.name;
  return {
    sudo: session.profile.sudo,
    ...(session.profile.host !== undefined ? { host: session.profile.host } : {}),
    log: (line) => log.info(`[${name}] ${line}`),
    exec: (request, options) => {
      const command = shellLine(request);
      log.info(`[${name}] $ ${maskSecrets(command.length > 400 ? `${command.slice(0, 400)}…` : command)}`);
      return session.transport.exec(command, {
        timeoutMs: 60_000,
        ...(options?.stdin !== undefined ? { stdin: options.stdin } : {}),
      });
    },
    confirmDiff: async (diff) => {
      log.info(`[${name}] Proposed ExecStart change:\n${diff}`);
      const editor = argsEditorOf(session.profile);
      const how =
        editor.how === 'systemd-drop-in'
          ? 'The change is written as a systemd drop-in (the unit file itself is not edited); the previous drop-in is kept as a backup.'
          : `The change is written to ${editor.file({}) ?? 'the command line'}; the previous file is kept next to it (.kimi-backup).`;
      return confirmModal(
        `Change the command line of ${session.profile.unit} on ${name} and restart it? (${advice.title})`,
        `${maskSecrets(diff)}\n\nPublished: ${advice.figure}\n\n${how}`,
        APPLY,
      );
    },
  };
}

async function applyAndWatch(
  host: ActionHost,
  server: ServerProfile,
  session: AdviceSession,
  advice: Advice,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const deps = changeDeps(session, log, advice);
  let result;
  try {
    result = await applyAdvice(deps, server, advice);
  } catch (error) {
    const message = errorText(error);
    log.error(`[${server.name}] Applying "${advice.title}" failed: ${message}`);
    void host.notify('error', `Kimi on ${server.name}: could not apply "${advice.title}": ${message}`);
    if (error instanceof ParserChangeError && error.sudoRefused)
      void vscode.commands.executeCommand('kimiService.copySudoersRule');
    return;
  }
  if (result.kind === 'cancelled') return;
  if (result.kind === 'already-set') {
    void vscode.window.showInformationMessage(l10n.t('Kimi on {0}: already set. Nothing was restarted.', server.name));
    return;
  }
  if (result.kind === 'manual') {
    void vscode.window.showInformationMessage(l10n.t('Kimi on {0}: {1}', server.name, advice.title), {
      modal: true,
      detail: shownText(result.advice),
    });
    return;
  }
  log.info(
    `[${server.name}] ${argsEditorOf(server).how === 'systemd-drop-in' ? 'Drop-in written' : 'Written'}: ${result.file}`,
  );
  const outcome = (await host.restartAfterChange(server))?.outcome;
  if (outcome?.end !== 'failed') return;
  const choice = await vscode.window.showErrorMessage(
    l10n.t(
      'Kimi on {0} failed to start with {1}. Roll back to the previous command line and restart?',
      server.name,
      String(advice.change?.flag),
    ),
    ROLL_BACK,
  );
  if (choice !== ROLL_BACK) return;
  try {
    await result.undo.run(deps);
  } catch (error) {
    void host.notify('error', `Kimi on ${server.name}: roll back failed: ${errorText(error)}`);
    return;
  }
  await host.restartAfterChange(server);
}

/**
 * After a ready load long enough for advice to matter: "Kimi on X: 1 suggestion for a faster
 * load: ..." with a button that opens the command. Quiet when there is nothing to suggest.
 */
export async function offerAdviceAfterReady(
  host: ActionHost,
  server: ServerProfile,
  state: LoadState,
  history: MementoLike,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const start = state.restartRequestedAt ?? state.processStartedAt;
  if (start === undefined || state.readyAt === undefined || state.readyAt - start < MIN_PHASE_MS) return;
  try {
    const gathered = await gather(host, server, history, log, state);
    const summary = gathered && adviceSummary(gathered.report.result);
    if (!summary) return;
    const choice = await vscode.window.showInformationMessage(l10n.t('Kimi on {0}: {1}', server.name, summary), SHOW);
    if (choice === SHOW) void vscode.commands.executeCommand('kimiService.suggestFasterLoad');
  } catch (error) {
    log.info(`[${server.name}] No suggestions after the load: ${errorText(error)}`);
  }
}
