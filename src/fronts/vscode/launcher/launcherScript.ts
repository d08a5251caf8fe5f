/**
 * The `kimi-service` launcher: a small script in a user bin folder that runs the installed
 * extension's CLI (dist/cli.js) with the Node the editor ships, so an agent's configuration names
 * one stable command that survives updates and needs no `node` on PATH. Pure: the folder, the
 * file's text, whether the folder is on PATH and whether an existing file needs a rewrite.
 */
import { singleQuoted } from '../../../transport/shell';

/** The command agents run, and the file's name without its extension. */
export const LAUNCHER_COMMAND = 'kimi-service';

/** A line every launcher carries: a file without it was not written by the extension and is left alone. */
export const LAUNCHER_MARK = 'Kimi Service launcher';

export interface LauncherTarget {
  readonly platform: NodeJS.Platform;
  /** The runtime that runs the CLI: the extension host's `process.execPath`. */
  readonly runtime: string;
  /** True when that runtime is Electron (VS Code desktop), which acts as Node only with ELECTRON_RUN_AS_NODE=1. */
  readonly electron: boolean;
  /** The installed extension's dist/cli.js. */
  readonly cliScript: string;
}

export interface PathApi {
  join(...parts: string[]): string;
  resolve(...parts: string[]): string;
}

/**
 * Where the launcher goes: `~/.local/bin` on Linux and macOS (on PATH in most login shells), and
 * `%LOCALAPPDATA%\Programs\kimi-service\bin` on Windows, beside where user installs put programs.
 */
export function launcherDir(
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  pathApi: PathApi,
): string {
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA || pathApi.join(home, 'AppData', 'Local');
    return pathApi.join(local, 'Programs', LAUNCHER_COMMAND, 'bin');
  }
  return pathApi.join(home, '.local', 'bin');
}

/** The launcher's file name: a batch file on Windows (found through PATHEXT), else a shell script. */
export function launcherFileName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? `${LAUNCHER_COMMAND}.cmd` : LAUNCHER_COMMAND;
}

/** A word for a POSIX shell: single-quoted, a quote inside closed, escaped and reopened. */
export const shQuote = singleQuoted;

/**
 * A path for a batch file: double-quoted, `%` doubled so that cmd does not expand it. A path with
 * a double quote (not a legal file name on Windows) or a line break cannot be written safely.
 */
export function cmdQuote(word: string): string {
  if (/["\r\n]/.test(word))
    throw new Error(`cannot write a path with a double quote or a line break in a batch file: ${word}`);
  return `"${word.replace(/%/g, '%%')}"`;
}

/** The launcher's text for that runtime and CLI. */
export function launcherText(target: LauncherTarget): string {
  if (target.platform === 'win32') {
    return [
      '@echo off',
      `rem ${LAUNCHER_MARK}: runs the installed extension's CLI with the editor's own runtime.`,
      `rem Written by "Install 'kimi-service' command in PATH"; rewritten when the extension is updated.`,
      'setlocal DisableDelayedExpansion',
      ...(target.electron ? ['set ELECTRON_RUN_AS_NODE=1'] : []),
      `${cmdQuote(target.runtime)} ${cmdQuote(target.cliScript)} %*`,
      'exit /b %ERRORLEVEL%',
      '',
    ].join('\r\n');
  }
  if (/\n/.test(target.runtime + target.cliScript))
    throw new Error('cannot write a launcher for a path with a line break');
  const env = target.electron ? 'ELECTRON_RUN_AS_NODE=1 ' : '';
  return [
    '#!/bin/sh',
    `# ${LAUNCHER_MARK}: runs the installed extension's CLI with the editor's own runtime.`,
    `# Written by "Install 'kimi-service' command in PATH"; rewritten when the extension is updated.`,
    `${env}exec ${shQuote(target.runtime)} ${shQuote(target.cliScript)} "$@"`,
    '',
  ].join('\n');
}

/** True when `dir` is one of PATH's folders (compared as resolved paths; without case on Windows). */
export function dirOnPath(
  dir: string,
  pathValue: string | undefined,
  platform: NodeJS.Platform,
  pathApi: PathApi,
): boolean {
  if (!pathValue) return false;
  const norm = (p: string) => {
    const resolved = pathApi.resolve(p.replace(/^"(.*)"$/, '$1'));
    const trimmed = resolved.length > 1 ? resolved.replace(/[\\/]+$/, '') : resolved;
    return platform === 'win32' ? trimmed.toLowerCase() : trimmed;
  };
  const wanted = norm(dir);
  return pathValue
    .split(platform === 'win32' ? ';' : ':')
    .filter((entry) => entry !== '')
    .some((entry) => norm(entry) === wanted);
}

/** What to do at activation with a launcher the user installed. */
export type LauncherRefresh =
  /** The file is gone: the user removed it, and it is not written again. */
  | 'removed'
  /** The file is not the extension's (no mark): left alone. */
  | 'foreign'
  /** It already runs this extension's CLI with this runtime. */
  | 'current'
  /** It names another folder (an update moved the extension) or another runtime: rewritten. */
  | 'rewrite';

export function launcherRefresh(existing: string | undefined, wanted: string): LauncherRefresh {
  if (existing === undefined) return 'removed';
  if (!existing.includes(LAUNCHER_MARK)) return 'foreign';
  return existing === wanted ? 'current' : 'rewrite';
}

/** The MCP client entry once the launcher is installed: the bare command when its folder is on PATH. */
export function launcherCommandFor(launcherPath: string, onPath: boolean): string {
  return onPath ? LAUNCHER_COMMAND : launcherPath;
}
