import * as fs from 'node:fs';
import * as vscode from 'vscode';
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
const MAKE_ACTIVE = 'Make active';

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
        title: 'Kimi: add server (1/3): the GPU host',
        placeHolder: 'A host of ~/.ssh/config, or another one',
      },
    );
    if (!picked) return undefined;
    if (picked.label !== OTHER_HOST) return { host: picked.label };
  }
  const typed = await vscode.window.showInputBox({
    title: 'Kimi: add server (1/3): the GPU host',
    prompt: 'host, user@host or user@host:port (a ~/.ssh/config alias keeps its settings)',
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
        title: `Kimi: looking for SGLang and vLLM servers on ${target.host}…`,
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
      void vscode.window.showErrorMessage(`${text} Nothing was added.`);
    } else {
      log.error(`[add server] ${target.host}: ${errorText(error)}`);
      void vscode.window.showErrorMessage(
        error instanceof DiscoveryError
          ? `Kimi: ${error.message}. Nothing was added.`
          : `Kimi: cannot list the units of ${target.host}: ${errorText(error)}. Nothing was added.`,
      );
    }
    return;
  }
  const units = discovery.units;
  if (units.length === 0) {
    void vscode.window.showWarningMessage(`Kimi: ${nothingFoundMessage(target.host)}. Nothing was added.`);
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
    { title: `Kimi: add server (2/3): the server on ${target.host}` },
  );
  if (!unitPick) return;
  const name = await vscode.window.showInputBox({
    title: 'Kimi: add server (3/3): its name',
    prompt: 'A short name, shown in the status bar, the servers view and messages',
    value: proposeServerName(target.host, unitPick.unit.unit, taken),
    validateInput: (value) => serverNameProblem(value, taken),
  });
  if (name === undefined || serverNameProblem(name, taken)) return;
  let entry: Record<string, unknown>;
  try {
    entry = entryFor(discovery, unitPick.unit, taken, name);
  } catch (error) {
    void vscode.window.showErrorMessage(`Kimi: ${errorText(error)} Nothing was added.`);
    return;
  }
  const written = await updateKimiSetting('servers', [...existing, entry]);
  log.info(`[add server] Added ${JSON.stringify(entry)} to the ${written.where} (kimiService.servers).`);
  const choice = await vscode.window.showInformationMessage(
    `Kimi: added ${name} (${unitPick.unit.unit} on ${target.host}, ${unitPick.unit.url}) to the ${written.where}.`,
    MAKE_ACTIVE,
  );
  if (choice === MAKE_ACTIVE) await vscode.commands.executeCommand('kimiService.makeActive', name);
}
