/**
 * Says, once per window, which user-only settings (config/userOnlySettings) a workspace or folder
 * sets: a warning notification and a log line per setting and file. The values themselves are
 * never read (settingsSource.ts takes the user's). VS Code drops workspace values of
 * machine-scoped settings before an extension sees them, so the settings files are read here.
 */
import * as vscode from 'vscode';
import { SECTION } from '../../../config/namespace';
import {
  USER_ONLY_KEYS,
  ignoredSettingsNotice,
  notYetReported,
  reportId,
  userOnlyKeysInInspect,
  userOnlyKeysInSettingsText,
  type IgnoredSetting,
} from '../../../config/userOnlySettings';

type Log = Pick<vscode.LogOutputChannel, 'warn' | 'debug'>;

async function readText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined; // no such file: nothing set there
  }
}

function label(uri: vscode.Uri): string {
  return uri.scheme === 'file' ? uri.fsPath : uri.toString();
}

/** Every user-only setting this window's workspace and folders set, with the file it is in. */
export async function findIgnoredSettings(): Promise<IgnoredSetting[]> {
  const found: IgnoredSetting[] = [];
  const inFile = async (uri: vscode.Uri, workspaceFile: boolean) => {
    const text = await readText(uri);
    if (text === undefined) return;
    for (const key of userOnlyKeysInSettingsText(text, { workspaceFile }))
      found.push({ setting: `${SECTION}.${key}`, where: label(uri) });
  };
  const workspaceFile = vscode.workspace.workspaceFile;
  if (workspaceFile && workspaceFile.scheme !== 'untitled') await inFile(workspaceFile, true);
  for (const folder of vscode.workspace.workspaceFolders ?? [])
    await inFile(vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'), false);
  // A host that does not filter by scope hands the values over: said too (same setting, its scope).
  const config = vscode.workspace.getConfiguration(SECTION);
  for (const key of USER_ONLY_KEYS) found.push(...userOnlyKeysInInspect(key, config.inspect(key)));
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const folderConfig = vscode.workspace.getConfiguration(SECTION, folder.uri);
    for (const key of USER_ONLY_KEYS)
      found.push(
        ...userOnlyKeysInInspect(
          key,
          { workspaceFolderValue: folderConfig.inspect(key)?.workspaceFolderValue },
          folder.name,
        ),
      );
  }
  return found;
}

/** Looks now, and again when the settings or the folders change; each finding is said once per window. */
export function watchIgnoredSettings(log: Log): vscode.Disposable {
  const reported = new Set<string>();
  let disposed = false;
  let running: Promise<void> = Promise.resolve();
  const look = () => {
    running = running.then(async () => {
      if (disposed) return;
      const fresh = notYetReported(await findIgnoredSettings(), reported);
      if (fresh.length === 0 || disposed) return;
      for (const item of fresh) reported.add(reportId(item));
      const { warning, logLines } = ignoredSettingsNotice(fresh);
      for (const line of logLines) log.warn(line);
      void vscode.window.showWarningMessage(warning);
    });
    running = running.catch((error: unknown) =>
      log.debug(`Settings: could not look for ignored settings: ${String(error)}`),
    );
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/.vscode/settings.json');
  const subscriptions = [
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) look();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(look),
    watcher,
    watcher.onDidCreate(look),
    watcher.onDidChange(look),
  ];
  look();
  return new vscode.Disposable(() => {
    disposed = true;
    for (const subscription of subscriptions) subscription.dispose();
  });
}
