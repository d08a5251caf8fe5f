/**
 * "Kimi Service: Report a problem": the diagnostic (src/present/diagnosticReport.ts), redacted
 * (src/util/redact.ts), opened in a new editor for the user to read first, with a button that
 * hands it to VS Code's issue reporter (as the extension's data). Nothing is sent by the extension.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { FleetVerbs } from '../../../fleet/fleetVerbs';
import type { ServerProfile } from '../../../config/config';
import { diagnosticReport } from '../../../present/diagnosticReport';
import { StateHistory } from '../../../present/stateHistory';
import type { LineTail } from '../../../util/lineTail';
import { redact } from '../../../util/redact';

export const REPORT_PROBLEM_COMMAND = 'kimiService.reportProblem';
function hostsOf(servers: readonly ServerProfile[]): string[] {
  return servers
    .flatMap((s) => [s.host, s.urlHost, ...(s.nodes ?? []).map((n) => n.host)])
    .filter((h): h is string => typeof h === 'string');
}

function usersOf(servers: readonly ServerProfile[]): string[] {
  return servers
    .flatMap((s) => [s.username, ...(s.nodes ?? []).map((n) => n.username)])
    .filter((u): u is string => typeof u === 'string');
}

/** The value of every setting the extension contributes, as the window reads it. */
function effectiveSettings(context: vscode.ExtensionContext): Record<string, unknown> {
  const contributed = (context.extension.packageJSON as { contributes?: { configuration?: unknown } }).contributes
    ?.configuration;
  const sections = ([] as { properties?: Record<string, unknown> }[]).concat(
    (contributed ?? []) as { properties?: Record<string, unknown> },
  );
  const config = vscode.workspace.getConfiguration();
  return Object.fromEntries(
    sections.flatMap((s) => Object.keys(s.properties ?? {})).map((key) => [key, config.get(key)]),
  );
}

export function registerReportProblem(
  context: vscode.ExtensionContext,
  fleet: FleetVerbs,
  tail: LineTail,
  knownSecrets: ReadonlySet<string>,
): vscode.Disposable[] {
  const history = new StateHistory();
  const subscription = fleet.onEvent((event) => {
    if (event.type === 'state') {
      const { verdict, phase } = event.state;
      history.record(event.server.name, phase && verdict === 'loading' ? `${verdict} (${phase})` : verdict, Date.now());
    } else if (event.type === 'refused')
      history.record(event.server.name, `refused: ${event.refusal.kind}`, Date.now());
  });
  const command = vscode.commands.registerCommand(REPORT_PROBLEM_COMMAND, async () => {
    const servers = fleet.servers;
    const text = diagnosticReport({
      extension: { id: context.extension.id, version: String(context.extension.packageJSON.version) },
      editor: { app: vscode.env.appName, version: vscode.version, remote: vscode.env.remoteName },
      platform: `${process.platform} ${process.arch}, Node ${process.versions.node}`,
      servers: fleet.snapshots().map((s) => ({
        profile: s.server,
        state: s.state?.verdict ?? 'not watched',
        history: history.of(s.server.name),
      })),
      settings: effectiveSettings(context),
      logLines: tail.last(),
      now: Date.now(),
    });
    const report = redact(text, {
      secrets: [...knownSecrets],
      hosts: hostsOf(servers),
      users: usersOf(servers),
      home: os.homedir(),
    });
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: report });
    await vscode.window.showTextDocument(document);
    const openReporter = l10n.t('Open issue reporter');
    const choice = await vscode.window.showInformationMessage(
      l10n.t(
        'Kimi: the problem report is in the new editor, with secrets, hosts and users masked. Read it (and edit it) before you share it.',
      ),
      openReporter,
    );
    if (choice === openReporter)
      await vscode.commands.executeCommand('workbench.action.openIssueReporter', {
        extensionId: context.extension.id,
        data: document.getText(),
      });
  });
  return [subscription, command];
}
