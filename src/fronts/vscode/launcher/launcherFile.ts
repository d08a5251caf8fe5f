/**
 * Writes and refreshes the `kimi-service` launcher (its text: launcherScript.ts). Node's fs only,
 * so the integration test drives the same code as the command.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  launcherFileName,
  launcherRefresh,
  launcherText,
  type LauncherRefresh,
  type LauncherTarget,
} from './launcherScript';

/** The launcher's full path in `dir`. */
export function launcherPath(dir: string, platform: NodeJS.Platform): string {
  return path.join(dir, launcherFileName(platform));
}

/** Writes the launcher whole (a temporary file renamed over it), executable; creates `dir`. Returns its path. */
export function installLauncher(dir: string, target: LauncherTarget): string {
  const file = launcherPath(dir, target.platform);
  fs.mkdirSync(dir, { recursive: true });
  writeWhole(file, launcherText(target));
  return file;
}

/** The launcher's text, or undefined when there is no file. */
export function readLauncher(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * At activation, for a launcher the user installed: rewritten when it names another folder or
 * runtime than this extension's; a removed or foreign file is left as it is.
 */
export function refreshLauncher(file: string, target: LauncherTarget): LauncherRefresh {
  const wanted = launcherText(target);
  const action = launcherRefresh(readLauncher(file), wanted);
  if (action === 'rewrite') writeWhole(file, wanted);
  return action;
}

function writeWhole(file: string, text: string): void {
  const partial = `${file}.${process.pid}.partial`;
  fs.writeFileSync(partial, text, { mode: 0o755 });
  fs.chmodSync(partial, 0o755); // the umask may have taken the x bits away
  fs.renameSync(partial, file);
}
