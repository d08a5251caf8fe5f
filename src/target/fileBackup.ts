/**
 * A file on the host rewritten with its previous content kept next to it (FILE.kimi-backup): read,
 * back up, write (the content on stdin, never on a command line), read back; put back from the
 * backup; and the backup found again from the host alone. What the kinds that edit a file of the
 * user's (a batch script) share.
 */
import type { HostCommand } from '../transport/shell';
import { ParserChangeError, type ParserChangeDeps } from './argsEdit';
import { compareFailed, notWrittenBack, stepFailed } from '../present/words/targetWords';
import { keepingBackupOf, readingFile, restoringFile, writingFile } from '../present/words/editStepWords';

export const BACKUP_SUFFIX = '.kimi-backup';

export interface FileBackup {
  readonly file: string;
  readonly backup: string;
}

type Deps = Pick<ParserChangeDeps, 'exec' | 'sudo'>;

async function must(deps: Deps, what: string, command: HostCommand, stdin?: string): Promise<string> {
  const r = await deps.exec(command, stdin === undefined ? undefined : { stdin });
  if (r.code !== 0)
    throw new ParserChangeError(stepFailed(what, r.code ?? r.signal ?? '?', r.stderr.trim().slice(0, 300)));
  return r.stdout;
}

export function readHostFile(deps: Deps, file: string): Promise<string> {
  return must(deps, readingFile(file), { argv: ['cat', '--', file], sudo: deps.sudo });
}

/** Keeps FILE.kimi-backup, writes `text`, reads it back (else puts the backup back and throws). */
export async function writeWithBackup(deps: Deps, file: string, text: string): Promise<FileBackup> {
  const saved = { file, backup: `${file}${BACKUP_SUFFIX}` };
  await must(deps, keepingBackupOf(file), { argv: ['cp', '-p', '--', file, saved.backup], sudo: deps.sudo });
  await must(deps, writingFile(file), { argv: ['tee', '--', file], sudo: deps.sudo, discardStdout: true }, text);
  if ((await readHostFile(deps, file)) !== text) {
    await restoreBackup(deps, saved);
    throw new ParserChangeError(notWrittenBack(file));
  }
  return saved;
}

export async function restoreBackup(deps: Deps, saved: FileBackup): Promise<void> {
  await must(deps, restoringFile(saved.file), { argv: ['cp', '--', saved.backup, saved.file], sudo: deps.sudo });
}

/** The backup when there is one and it differs from the file; undefined when there is nothing to put back. */
export async function findBackup(deps: Deps, file: string): Promise<FileBackup | undefined> {
  const backup = `${file}${BACKUP_SUFFIX}`;
  const r = await deps.exec({ argv: ['cmp', '-s', '--', file, backup], sudo: deps.sudo });
  // cmp: 0 the same, 1 different, 2 trouble (a file missing)
  if (r.code === 1) return { file, backup };
  if (r.code === 0) return undefined;
  const exists = await deps.exec({ argv: ['test', '-e', backup], sudo: deps.sudo });
  if (exists.code !== 0) return undefined;
  throw new ParserChangeError(compareFailed(file, backup, r.stderr.trim().slice(0, 300)));
}
