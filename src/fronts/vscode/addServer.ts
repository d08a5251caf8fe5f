import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { parseSettings, printable, type HostKeyPolicy } from '../../config/config';
import { collectConfigFiles } from '../../transport/ssh/sshInclude';
import { pathApi, sshDir, systemPathContext } from '../../transport/ssh/sshPaths';
import { TransportError } from '../../transport/transport';
import { createSession, type SessionUi } from '../../fleet/sessionFactory';
import {
  DISCOVERY_COMMAND,
  parseDiscovery,
  proposeServerName,
  serverNameProblem,
} from '../../target/systemd/unitDiscovery';
import { errorText } from '../../util/errors';
import { loginUid, parseTypedHost, serverEntry, sshHostAliases, type TypedHost } from '../../fleet/serverEntry';
import { refusalMessage } from '../../present/refusals';

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
 * "Kimi: Add server": pick a host, connect (host key policy as usual), list its units that
 * launch SGLang with one remote command, pick one, name it; the entry goes to the user's
 * kimi.servers. Nothing is written until every answer is given.
 */
export async function addServerCommand(ui: SessionUi, log: vscode.LogOutputChannel): Promise<void> {
  const config = vscode.workspace.getConfiguration('kimi');
  const rawServers = config.inspect<unknown[]>('servers')?.globalValue;
  const existing = (Array.isArray(rawServers) ? rawServers : []) as Record<string, unknown>[];
  const taken = [...(config.get<Record<string, unknown>[]>('servers') ?? []), ...existing].map((s) => String(s?.name));
  const target = await pickHost();
  if (!target) return;

  const probe = parseSettings({
    servers: [{ name: target.host, ...target, unit: 'kimi-add-server-probe.service' }],
    knownHostsFile: config.get<string>('knownHostsFile') ?? '~/.ssh/known_hosts',
    hostKeyPolicy: config.get<HostKeyPolicy>('hostKeyPolicy') ?? 'ask',
  });
  if (!probe.ok) {
    void vscode.window.showErrorMessage(`Kimi: cannot add ${printable(target.host)}: ${probe.errors[0]}`);
    return;
  }
  const profile = probe.settings.servers[0]!;
  const logLine = (level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string) => log[level](message);
  let found: { stdout: string; stderr: string; code: number | null };
  try {
    found = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Kimi: looking for SGLang units on ${target.host}…` },
      async () => {
        const session = await createSession(profile, probe.settings, ui, logLine);
        try {
          await session.transport.connect();
          return await session.transport.exec(DISCOVERY_COMMAND, { timeoutMs: 30_000 });
        } finally {
          session.dispose();
        }
      },
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
        `Kimi: cannot list the units of ${target.host}: ${errorText(error)}. Nothing was added.`,
      );
    }
    return;
  }
  const units = parseDiscovery(found.stdout);
  if (units.length === 0 && found.code !== 0) {
    const why = found.stderr.trim().split('\n').slice(-1)[0] ?? `exit status ${found.code}`;
    log.error(`[add server] ${target.host}: listing the units failed (${found.code}): ${found.stderr.trim()}`);
    void vscode.window.showErrorMessage(
      `Kimi: cannot list the units of ${target.host}: ${why || `exit status ${found.code}`}. Nothing was added.`,
    );
    return;
  }
  if (units.length === 0) {
    void vscode.window.showWarningMessage(
      `Kimi: no systemd unit on ${target.host} launches SGLang (python -m sglang.launch_server or sglang serve in its ExecStart). Nothing was added.`,
    );
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
    { title: `Kimi: add server (2/3): the SGLang unit on ${target.host}` },
  );
  if (!unitPick) return;
  const name = await vscode.window.showInputBox({
    title: 'Kimi: add server (3/3): its name',
    prompt: 'A short name, shown in the status bar, the servers view and messages',
    value: proposeServerName(target.host, unitPick.unit.unit, taken),
    validateInput: (value) => serverNameProblem(value, taken),
  });
  if (name === undefined || serverNameProblem(name, taken)) return;
  const entry = serverEntry(name, target, unitPick.unit, loginUid(found.stdout));
  const valid = parseSettings({ servers: [entry] });
  if (!valid.ok) {
    void vscode.window.showErrorMessage(
      `Kimi: the entry for ${printable(name)} would not be valid: ${valid.errors[0]} Nothing was added.`,
    );
    return;
  }
  await config.update('servers', [...existing, entry], vscode.ConfigurationTarget.Global);
  log.info(`[add server] Added ${JSON.stringify(entry)} to the user settings (kimi.servers).`);
  const shadowed = vscode.workspace.getConfiguration('kimi').inspect('servers')?.workspaceValue !== undefined;
  const note = shadowed
    ? ' The workspace settings also set kimi.servers and take precedence: add it there to use it in this workspace.'
    : '';
  const choice = await vscode.window.showInformationMessage(
    `Kimi: added ${name} (${unitPick.unit.unit} on ${target.host}, ${unitPick.unit.url}).${note}`,
    MAKE_ACTIVE,
  );
  if (choice === MAKE_ACTIVE) await vscode.commands.executeCommand('kimi.makeActive', name);
}
