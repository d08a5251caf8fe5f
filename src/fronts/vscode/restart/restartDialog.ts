import * as vscode from 'vscode';
import { serverHosts, type ServerProfile } from '../../../config/config';
import type { LoadForecast } from '../../../monitor/forecast/loadInsights';
import type { FleetSession } from '../../../fleet/fleetTypes';
import { warmCache } from '../../../monitor/forecast/warmCache';

const RESTART = 'Restart';
const WARM_THEN_RESTART = 'Warm cache, then restart';
const FOLLOW = 'Follow this load';
const RESTART_ANYWAY = 'Restart anyway';

/**
 * A restart asked while a load is under way (the restart rule, docs/restart-rule.md): follow
 * that load (nothing is restarted), or restart anyway (the load starts over).
 */
export async function followOrRestart(server: ServerProfile, reason: string): Promise<'follow' | 'restart' | 'cancel'> {
  const choice = await vscode.window.showWarningMessage(
    `Kimi on ${server.name} is loading already`,
    {
      modal: true,
      detail: [
        `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`,
        `${FOLLOW} watches it without restarting anything. ${RESTART_ANYWAY} stops ${server.unit} on ${serverHosts(server)} and starts it again: the load starts over.`,
      ].join('\n\n'),
    },
    FOLLOW,
    RESTART_ANYWAY,
  );
  if (choice === FOLLOW) return 'follow';
  if (choice === RESTART_ANYWAY) return 'restart';
  return 'cancel';
}

/** The modal confirmation, with the forecast when there is one. */
export async function confirmRestart(
  server: ServerProfile,
  forecast: LoadForecast | undefined,
): Promise<'restart' | 'warm' | 'cancel'> {
  const lines = [`The model server on ${serverHosts(server)} stops now and is unavailable until it has loaded again.`];
  if (forecast?.text) lines.push(`Expected load time: ${forecast.text}.`);
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
      `${WARM_THEN_RESTART} reads the weights into the page cache while the old server keeps serving, so the downtime is the warm load time.`,
    );
  const buttons = canWarm ? [RESTART, WARM_THEN_RESTART] : [RESTART];
  const choice = await vscode.window.showWarningMessage(
    `Restart ${server.unit} on ${server.name}?`,
    { modal: true, detail: lines.join('\n\n') },
    ...buttons,
  );
  if (choice === RESTART) return 'restart';
  if (choice === WARM_THEN_RESTART) return 'warm';
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
      title: `Kimi on ${name}: warming the page cache`,
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
              message: `${percent}% of the weights cached`,
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
            `Kimi on ${name}: could not warm the cache: ${result.reason}. Nothing was restarted.`,
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
