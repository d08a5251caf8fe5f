/**
 * "Kimi Service: Install 'kimi-service' command in PATH", as the editor's own "Shell Command:
 * Install 'code' command in PATH": the launcher (launcherScript.ts) in a user bin folder, kept
 * pointing at this extension's folder at each activation once the user installed it. Nothing is
 * written unless the user ran the command.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import { errorText } from '../../../util/errors';
import { installLauncher, launcherPath, readLauncher, refreshLauncher } from './launcherFile';
import { dirOnPath, LAUNCHER_COMMAND, LAUNCHER_MARK, launcherDir, type LauncherTarget } from './launcherScript';

/**
 * globalState: the launcher's path, once the user installed it (what activation refreshes). Per
 * machine: the state is the same in local and remote windows, and each machine has its own file.
 */
const INSTALLED_KEY = `kimiService.launcherPath.${os.hostname()}`;

export interface InstalledLauncher {
  readonly path: string;
  /** Its folder is on the extension host's PATH, so agents can run the bare command. */
  readonly onPath: boolean;
}

/** This extension host's runtime and this installation's CLI. */
function targetHere(context: vscode.ExtensionContext): LauncherTarget {
  return {
    platform: process.platform,
    runtime: process.execPath,
    // code-server's extension host is plain Node; VS Code desktop's is Electron.
    electron: process.versions.electron !== undefined,
    cliScript: path.join(context.extensionPath, 'dist', 'cli.js'),
  };
}

function dirHere(): string {
  return launcherDir(process.platform, process.env, os.homedir(), path);
}

function onPathHere(file: string): boolean {
  return dirOnPath(path.dirname(file), process.env.PATH, process.platform, path);
}

/** The launcher the user installed, if it is still there. */
export function installedLauncher(context: vscode.ExtensionContext): InstalledLauncher | undefined {
  const file = context.globalState.get<string>(INSTALLED_KEY);
  if (file === undefined) return undefined;
  try {
    if (!readLauncher(file)?.includes(LAUNCHER_MARK)) return undefined;
  } catch {
    return undefined;
  }
  return { path: file, onPath: onPathHere(file) };
}

/** Installs (or rewrites) the launcher and says where it is; undefined when it could not be written. */
export async function installLauncherCommand(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): Promise<InstalledLauncher | undefined> {
  const dir = dirHere();
  let file: string;
  try {
    file = installLauncher(dir, targetHere(context));
  } catch (error) {
    void vscode.window.showErrorMessage(
      l10n.t('Kimi: could not write {0}: {1}', launcherPath(dir, process.platform), errorText(error)),
    );
    return undefined;
  }
  await context.globalState.update(INSTALLED_KEY, file);
  const onPath = onPathHere(file);
  log.info(`Installed the ${LAUNCHER_COMMAND} command: ${file} runs ${targetHere(context).cliScript}.`);
  if (onPath) {
    void vscode.window.showInformationMessage(
      l10n.t(
        'Kimi: "{0}" is installed ({1}). Agents can run "{0} mcp"; it keeps working after updates.',
        LAUNCHER_COMMAND,
        file,
      ),
    );
  } else {
    void vscode.window.showWarningMessage(
      process.platform === 'win32'
        ? l10n.t(
            'Kimi: "{0}" is installed as {1}, but {2} is not on PATH. Add {2} to your user Path, or use the full path.',
            LAUNCHER_COMMAND,
            file,
            dir,
          )
        : l10n.t(
            'Kimi: "{0}" is installed as {1}, but {2} is not on PATH. Add it to PATH in your shell\'s profile (export PATH="{2}:$PATH"), or use the full path.',
            LAUNCHER_COMMAND,
            file,
            dir,
          ),
    );
  }
  return { path: file, onPath };
}

/** At activation: a launcher the user installed is pointed at this extension's folder (an update moved it). */
export async function refreshInstalledLauncher(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const file = context.globalState.get<string>(INSTALLED_KEY);
  if (file === undefined) return;
  try {
    const action = refreshLauncher(file, targetHere(context));
    if (action === 'rewrite')
      log.info(`Updated the ${LAUNCHER_COMMAND} command (${file}) for this version of the extension.`);
    if (action === 'removed' || action === 'foreign') {
      log.info(`The ${LAUNCHER_COMMAND} command at ${file} was removed or replaced; it is left as it is.`);
      await context.globalState.update(INSTALLED_KEY, undefined);
    }
  } catch (error) {
    log.warn(`Could not update the ${LAUNCHER_COMMAND} command at ${file}: ${errorText(error)}`);
  }
}
