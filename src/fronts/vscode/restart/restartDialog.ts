import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import { serverHosts, type ServerProfile } from '../../../config/config';
import type { LoadForecast } from '../../../monitor/forecast/loadInsights';
import type { FleetSession } from '../../../fleet/fleetTypes';
import { warmCache } from '../../../monitor/forecast/warmCache';

/**
 * A restart asked while a load is under way (the restart rule, docs/restart-rule.md): follow
 * that load (nothing is restarted), or restart anyway (the load starts over).
 */
export async function followOrRestart(server: ServerProfile, reason: string): Promise<'follow' | 'restart' | 'cancel'> {
  const follow = l10n.t('Follow this load');
  const restartAnyway = l10n.t('Restart anyway');
  const choice = await vscode.window.showWarningMessage(
    l10n.t('Kimi on {0} is loading already', server.name),
    {
      modal: true,
      detail: [
        `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`,
        l10n.t(
          '{0} watches it without restarting anything. {1} stops {2} on {3} and starts it again: the load starts over.',
          follow,
          restartAnyway,
          server.unit,
          serverHosts(server),
        ),
      ].join('\n\n'),
    },
    follow,
    restartAnyway,
  );
  if (choice === follow) return 'follow';
  if (choice === restartAnyway) return 'restart';
  return 'cancel';
}

/** The modal confirmation, with the forecast when there is one. */
export async function confirmRestart(
  server: ServerProfile,
  forecast: LoadForecast | undefined,
): Promise<'restart' | 'warm' | 'cancel'> {
  const restart = l10n.t('Restart');
  const warmThenRestart = l10n.t('Warm cache, then restart');
  const lines = [
    l10n.t('The model server on {0} stops now and is unavailable until it has loaded again.', serverHosts(server)),
  ];
  if (forecast?.text) lines.push(l10n.t('Expected load time: {0}.', forecast.text));
  if (forecast?.warning) lines.push(forecast.warning);
  if (forecast?.advice) lines.push(forecast.advice);
  // The forecast reads node rank 0's page cache only: no warming of one node of several.
  const canWarm =
    server.nodes === undefined &&
    forecast?.modelPath !== undefined &&
    forecast.totalBytes !== undefined &&
    forecast.residentBytes !== undefined &&
    forecast.residentBytes < forecast.totalBytes &&
    forecast.warning === undefined;
  if (canWarm)
    lines.push(
      l10n.t(
        '{0} reads the weights into the page cache while the old server keeps serving, so the downtime is the warm load time.',
        warmThenRestart,
      ),
    );
  const buttons = canWarm ? [restart, warmThenRestart] : [restart];
  const choice = await vscode.window.showWarningMessage(
    l10n.t('Restart {0} on {1}?', server.unit, server.name),
    { modal: true, detail: lines.join('\n\n') },
    ...buttons,
  );
  if (choice === restart) return 'restart';
  if (choice === warmThenRestart) return 'warm';
  return 'cancel';
}

/** Warms the page cache with progress and cancel; true when the restart should go on. */
export async function warmThenReport(
  session: FleetSession,
  modelPath: string,
  log: vscode.LogOutputChannel,
): Promise<boolean> {
  const name = session.profile.name;
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: l10n.t('Kimi on {0}: warming the page cache', name),
      cancellable: true,
    },
    async (progress, token) => {
      const abort = new AbortController();
      const subscription = token.onCancellationRequested(() => abort.abort());
      let reported = 0;
      try {
        const result = await warmCache(session.transport, modelPath, {
          signal: abort.signal,
          onProgress: (residency) => {
            if (!residency.totalBytes || residency.residentBytes === undefined) return;
            const percent = Math.floor((residency.residentBytes / residency.totalBytes) * 100);
            progress.report({
              increment: Math.max(0, percent - reported),
              message: l10n.t('{0}% of the weights cached', percent),
            });
            reported = Math.max(reported, percent);
          },
        });
        if (result.ok) {
          log.info(`[${name}] Page cache warmed; restarting.`);
          return true;
        }
        log.warn(
          `[${name}] Warming the cache ${result.cancelled ? 'cancelled' : `failed: ${result.reason}`}; nothing was restarted.`,
        );
        if (!result.cancelled)
          void vscode.window.showWarningMessage(
            l10n.t('Kimi on {0}: could not warm the cache: {1}. Nothing was restarted.', name, result.reason),
          );
        return false;
      } finally {
        subscription.dispose();
      }
    },
  );
}

/**
 * The confirmation of a change that restarts (a server's command line shown as its diff, a
 * rolling restart): a modal warning with the one button that goes on; true when it was chosen.
 */
export async function confirmModal(question: string, detail: string, goOn: string): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(question, { modal: true, detail }, goOn);
  return choice === goOn;
}
