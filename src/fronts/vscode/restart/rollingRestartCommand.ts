import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile, Settings } from '../../../config/config';
import type { FrontFleet } from '../../../fleet/fleetVerbs';
import { serverReport } from '../../../present/report';
import { rollingRestart, rollSummary, sameModelDefaults } from '../../../fleet/restart/rolling';
import { targetFor, targetIo } from '../../../target/target';
import { modelPathOf } from '../../../engine/execStart';
import { errorText } from '../../../util/errors';
import { confirmModal } from './restartDialog';
import { shownText } from '../output/shownText';

export interface RollingRestartDeps {
  readonly fleet: FrontFleet;
  readonly settings: Settings;
  readonly activeName: string | undefined;
  readonly log: vscode.LogOutputChannel;
  /** Runs the roll while the shell leaves these servers' parser checks to it. */
  readonly during: <T>(names: readonly string[], run: () => Promise<T>) => Promise<T>;
}

/** The model path of each server's command line (its target's state, on its own connection); undefined when unknown. */
async function modelPaths(
  fleet: FrontFleet,
  servers: readonly ServerProfile[],
): Promise<Map<string, string | undefined>> {
  const paths = await Promise.all(
    servers.map(async (server): Promise<[string, string | undefined]> => {
      try {
        const session = await fleet.connect(server);
        const state = await targetFor(server).readState(targetIo(session.transport, 15_000));
        return [server.name, modelPathOf(state.argv)];
      } catch {
        return [server.name, undefined];
      }
    }),
  );
  return new Map(paths);
}

/**
 * "Kimi Service: Restart servers one by one": pick the servers (the ones serving the active server's
 * model preselected), confirm, then restart each once the previous one is ready with verified
 * parsers, in a cancellable notification. The first failure stops the roll and is said.
 */
export async function rollingRestartCommand(deps: RollingRestartDeps, preselected?: string): Promise<void> {
  const { fleet, settings, log } = deps;
  const servers = settings.servers;
  if (servers.length === 0) {
    void vscode.window.showErrorMessage(
      l10n.t('Kimi: no server is configured. Add one with "Kimi Service: Add server".'),
    );
    return;
  }
  const paths = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: l10n.t('Kimi: reading the model of each server') },
    () => modelPaths(fleet, servers),
  );
  // From a row: that server and those serving the same model; else the active server's.
  const defaults = new Set(
    sameModelDefaults(
      servers.map((s) => s.name),
      paths,
      preselected ?? deps.activeName,
    ),
  );
  const picked = await vscode.window.showQuickPick(
    servers.map((server) => ({
      label: server.name,
      description: `${serverReport(fleet.snapshot(server)).state} · ${server.host ?? 'this machine'} · ${server.unit}`,
      detail: paths.get(server.name) ?? 'model path unknown (the host could not be asked)',
      picked: defaults.has(server.name),
      server,
    })),
    {
      title: l10n.t('Kimi: restart servers one by one'),
      placeHolder: l10n.t('Each restarts only once the previous one is ready with verified parsers'),
      canPickMany: true,
    },
  );
  if (!picked || picked.length === 0) return;
  const chosen = picked.map((p) => p.server);
  const names = chosen.map((s) => s.name).join(', then ');
  if (settings.confirmRestart) {
    const ok = await confirmModal(
      `Restart ${names}?`,
      'One at a time: the next server restarts only after the previous one is ready and its tool-calling and reasoning parsers pass. The first failure stops the roll.',
      'Restart',
    );
    if (!ok) return;
  }
  log.info(`Rolling restart of ${names}.`);
  const result = await deps
    .during(
      chosen.map((s) => s.name),
      async () =>
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: l10n.t('Kimi: rolling restart'), cancellable: true },
          (progress, token) => {
            const abort = new AbortController();
            const subscription = token.onCancellationRequested(() => abort.abort());
            return rollingRestart(fleet, chosen, {
              loadTimeoutMs: settings.loadTimeoutMs,
              signal: abort.signal,
              onProgress: (p) => progress.report({ message: p.text }),
              log: (line) => log.info(line),
            }).finally(() => subscription.dispose());
          },
        ),
    )
    .catch((error: unknown) => {
      log.error(`Rolling restart: ${errorText(error)}`);
      return undefined;
    });
  if (!result) return;
  const summary = rollSummary(result);
  log.info(summary);
  const show =
    result.kind === 'done'
      ? vscode.window.showInformationMessage
      : result.kind === 'cancelled'
        ? vscode.window.showWarningMessage
        : vscode.window.showErrorMessage;
  const showLog = l10n.t('Show log');
  const choice = await show(shownText(l10n.t('Kimi: {0}', summary)), showLog);
  if (choice === showLog) log.show(true);
}
