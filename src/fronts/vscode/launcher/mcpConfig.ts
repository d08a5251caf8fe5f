/**
 * "Kimi Service: Copy MCP configuration": the entry that runs this extension's MCP server
 * (`kimi-service mcp` once the launcher is installed, which outlives updates; else
 * `node <extension>/dist/mcp.js`) for Claude Code and Cursor, on the clipboard, or merged into
 * the workspace's `.mcp.json` (other servers kept). The JSON itself is built by mcp/clientConfig.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import {
  claudeMcpAddCommand,
  launcherMcpEntry,
  mcpConfigText,
  mcpServerEntry,
  mergeMcpConfig,
  userSettingsArgs,
  type McpServerEntry,
} from '../../mcp/clientConfig';
import { errorText } from '../../../util/errors';
import { installedLauncher, installLauncherCommand, type InstalledLauncher } from './launcherCommand';
import { launcherCommandFor, LAUNCHER_COMMAND } from './launcherScript';

type Action = 'copy' | 'write' | 'claude';

const INSTALL = `Install "${LAUNCHER_COMMAND}" command`;
const THIS_FOLDER = "Use this version's folder";

/** The entry for this installation: through the launcher when it is installed, else this version's folder. */
export function mcpEntryFor(context: vscode.ExtensionContext, launcher: InstalledLauncher | undefined): McpServerEntry {
  const storage = context.globalStorageUri.scheme === 'file' ? context.globalStorageUri.fsPath : undefined;
  const settingsArgs = userSettingsArgs(storage, (f) => fs.existsSync(f), path);
  if (launcher)
    return launcherMcpEntry(launcherCommandFor(launcher.path, launcher.onPath), settingsArgs, process.platform);
  return mcpServerEntry(path.join(context.extensionPath, 'dist', 'mcp.js'), settingsArgs);
}

export async function copyMcpConfigCommand(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): Promise<void> {
  let launcher = installedLauncher(context);
  if (!launcher) {
    const choice = await vscode.window.showInformationMessage(
      l10n.t(
        'Kimi: an MCP configuration that runs "{0} mcp" keeps working after updates and needs no node on PATH. Install the "{0}" command first? Otherwise the configuration names this version\'s folder, which the next update removes.',
        LAUNCHER_COMMAND,
      ),
      INSTALL,
      THIS_FOLDER,
    );
    if (choice === undefined) return;
    if (choice === INSTALL) {
      launcher = await installLauncherCommand(context, log);
      if (!launcher) return;
    }
  }
  const entry = mcpEntryFor(context, launcher);
  const folders = vscode.workspace.workspaceFolders ?? [];
  const items: (vscode.QuickPickItem & { action: Action })[] = [
    {
      label: '$(clippy) Copy to clipboard',
      description: 'the mcpServers entry for Claude Code (.mcp.json) and Cursor (.cursor/mcp.json)',
      action: 'copy',
    },
    ...(folders.length > 0
      ? [
          {
            label: '$(json) Write .mcp.json',
            description: `merge into ${folders.length === 1 ? folders[0]!.name : 'a workspace folder'}/.mcp.json (other servers are kept)`,
            action: 'write' as const,
          },
        ]
      : []),
    {
      label: '$(terminal) Copy "claude mcp add" command',
      description: 'adds it to Claude Code from a terminal',
      action: 'claude',
    },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: l10n.t('Kimi: MCP server configuration'),
    placeHolder: [entry.command, ...entry.args].join(' '),
  });
  if (!picked) return;
  if (picked.action === 'copy') {
    await vscode.env.clipboard.writeText(mcpConfigText(entry));
    log.info(`MCP configuration on the clipboard: ${JSON.stringify(entry)}`);
    void vscode.window.showInformationMessage(
      l10n.t('Kimi: MCP configuration copied. Paste it into .mcp.json (Claude Code) or .cursor/mcp.json (Cursor).'),
    );
    return;
  }
  if (picked.action === 'claude') {
    const command = claudeMcpAddCommand(entry);
    await vscode.env.clipboard.writeText(command);
    log.info(`On the clipboard: ${command}`);
    void vscode.window.showInformationMessage(l10n.t('Kimi: copied "{0}".', command));
    return;
  }
  const folder =
    folders.length === 1
      ? folders[0]
      : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Write .mcp.json in which folder?' });
  if (!folder) return;
  await writeMcpJson(vscode.Uri.joinPath(folder.uri, '.mcp.json'), entry, log);
}

async function writeMcpJson(uri: vscode.Uri, entry: McpServerEntry, log: vscode.LogOutputChannel): Promise<void> {
  let existing: string | undefined;
  try {
    existing = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch (error) {
    if (!(error instanceof vscode.FileSystemError && error.code === 'FileNotFound')) {
      void vscode.window.showErrorMessage(l10n.t('Kimi: cannot read {0}: {1}', uri.fsPath, errorText(error)));
      return;
    }
  }
  const merged = mergeMcpConfig(existing, entry);
  if (!merged.ok) {
    void vscode.window.showErrorMessage(
      l10n.t('Kimi: {0} is {1}; it was not changed. Fix it, or use "Copy to clipboard".', uri.fsPath, merged.error),
    );
    return;
  }
  try {
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(merged.text));
  } catch (error) {
    void vscode.window.showErrorMessage(l10n.t('Kimi: cannot write {0}: {1}', uri.fsPath, errorText(error)));
    return;
  }
  log.info(`${merged.replaced ? 'Updated' : 'Added'} the kimi MCP server in ${uri.fsPath}: ${JSON.stringify(entry)}`);
  const openButton = l10n.t('Open');
  const open = await vscode.window.showInformationMessage(
    merged.replaced
      ? l10n.t('Kimi: updated the "kimi" MCP server in {0}.', uri.fsPath)
      : l10n.t('Kimi: added the "kimi" MCP server in {0}.', uri.fsPath),
    openButton,
  );
  if (open === openButton) await vscode.window.showTextDocument(uri);
}
