import * as fs from 'node:fs';
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { HostKeyPolicy } from '../../../config/config';
import { collectConfigFiles } from '../../../transport/ssh/sshInclude';
import { pathApi, sshDir, systemPathContext } from '../../../transport/ssh/sshPaths';
import { TransportError } from '../../../transport/transport';
import type { SessionUi } from '../../../fleet/sessions/sessionFactory';
import {
  DiscoveryError,
  discoverUnits,
  entryFor,
  nothingFoundMessage,
  type Discovery,
} from '../../../fleet/servers/discovery';
import { proposeServerName, serverNameProblem } from '../../../target/discovered';
import { errorText } from '../../../util/errors';
import { parseTypedHost, sshHostAliases, type TypedHost } from '../../../fleet/servers/serverEntry';
import { refusalMessage } from '../../../present/refusalWords';
import { updateKimiSetting, userSetting } from '../settings/settingsSource';

const OTHER_HOST = '$(edit) Another host…';

/** The Host aliases of ~/.ssh/config and the files it Includes (none when there is no config). */
async function configuredHosts(): Promise<string[]> {
  const ctx = systemPathContext();
  const file = pathApi(ctx.platform).join(sshDir(ctx), 'config');
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch {
    return [];
  }
  const files = await collectConfigFiles(text, ctx).catch(() => undefined);
  return sshHostAliases([text, ...(files ? files.texts.values() : [])]);
}

async function pickHost(): Promise<TypedHost | undefined> {
  const aliases = await configuredHosts();
  if (aliases.length > 0) {
    const picked = await vscode.window.showQuickPick(
      [...aliases.map((label) => ({ label, description: '~/.ssh/config' })), { label: OTHER_HOST, description: '' }],
      {
        title: l10n.t('Kimi: add server (1/3): the GPU host'),
        placeHolder: l10n.t('A host of ~/.ssh/config, or another one'),
      },
    );
    if (!picked) return undefined;
    if (picked.label !== OTHER_HOST) return { host: picked.label };
  }
  const typed = await vscode.window.showInputBox({
    title: l10n.t('Kimi: add server (1/3): the GPU host'),
    prompt: l10n.t('host, user@host or user@host:port (a ~/.ssh/config alias keeps its settings)'),
    validateInput: (value) => {
      const parsed = parseTypedHost(value);
      return typeof parsed === 'string' ? parsed : undefined;
    },
  });
  if (typed === undefined) return undefined;
  const parsed = parseTypedHost(typed);
  return typeof parsed === 'string' ? undefined : parsed;
}

/**
 * "Kimi Service: Add server": pick a host, connect (host key policy as usual), list its units that
 * launch SGLang with one remote command, pick one, name it; the entry goes to the user's
 * kimiService.servers. Nothing is written until every answer is given.
 */
export async function addServerCommand(ui: SessionUi, log: vscode.LogOutputChannel): Promise<void> {
  const config = vscode.workspace.getConfiguration('kimiService');
  const rawServers = config.inspect<unknown[]>('servers')?.globalValue;
  const existing = (Array.isArray(rawServers) ? rawServers : []) as Record<string, unknown>[];
  const taken = existing.map((s) => String(s?.name));
  const target = await pickHost();
  if (!target) return;

  const logLine = (level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string) =>
    log[level](`[add server] ${message}`);
  let discovery: Discovery;
  try {
    discovery = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: l10n.t('Kimi: looking for SGLang and vLLM servers on {0}…', target.host),
      },
      () =>
        discoverUnits(
          target,
          {
            knownHostsFile: userSetting<string>('knownHostsFile', '~/.ssh/known_hosts'),
            hostKeyPolicy: userSetting<HostKeyPolicy>('hostKeyPolicy', 'ask'),
          },
          ui,
          logLine,
        ),
    );
  } catch (error) {
    if (error instanceof TransportError) {
      const refusal = {
        kind: error.kind,
        message: error.message,
        ...(error.hostKeyChange ? { hostKeyChange: error.hostKeyChange } : {}),
      };
      const text = refusalMessage(target.host, refusal).text;
      log.error(`[add server] ${text}`);
      void vscode.window.showErrorMessage(l10n.t('{0} Nothing was added.', text));
    } else {
      log.error(`[add server] ${target.host}: ${errorText(error)}`);
      void vscode.window.showErrorMessage(
        error instanceof DiscoveryError
          ? l10n.t('Kimi: {0}. Nothing was added.', error.message)
          : l10n.t('Kimi: cannot list the units of {0}: {1}. Nothing was added.', target.host, errorText(error)),
      );
    }
    return;
  }
  const units = discovery.units;
  if (units.length === 0) {
    void vscode.window.showWarningMessage(l10n.t('Kimi: {0}. Nothing was added.', nothingFoundMessage(target.host)));
    return;
  }
  const unitPick = await vscode.window.showQuickPick(
    units.map((unit) => ({
      label: unit.unit,
      description: `${unit.activeState} · ${unit.url}`,
      detail: [unit.modelPath, unit.description !== unit.unit ? unit.description : undefined]
        .filter(Boolean)
        .join(' · '),
      unit,
    })),
    { title: l10n.t('Kimi: add server (2/3): the server on {0}', target.host) },
  );
  if (!unitPick) return;
  const name = await vscode.window.showInputBox({
    title: l10n.t('Kimi: add server (3/3): its name'),
    prompt: l10n.t('A short name, shown in the status bar, the servers view and messages'),
    value: proposeServerName(target.host, unitPick.unit.unit, taken),
    validateInput: (value) => serverNameProblem(value, taken),
  });
  if (name === undefined || serverNameProblem(name, taken)) return;
  let entry: Record<string, unknown>;
  try {
    entry = entryFor(discovery, unitPick.unit, taken, name);
  } catch (error) {
    void vscode.window.showErrorMessage(l10n.t('Kimi: {0} Nothing was added.', errorText(error)));
    return;
  }
  const written = await updateKimiSetting('servers', [...existing, entry]);
  log.info(`[add server] Added ${JSON.stringify(entry)} to the ${written.where} (kimiService.servers).`);
  const makeActive = l10n.t('Make active');
  const choice = await vscode.window.showInformationMessage(
    l10n.t(
      'Kimi: added {0} ({1} on {2}, {3}) to the {4}.',
      name,
      unitPick.unit.unit,
      target.host,
      unitPick.unit.url,
      written.where,
    ),
    makeActive,
  );
  if (choice === makeActive) await vscode.commands.executeCommand('kimiService.makeActive', name);
}
