/**
 * The model folder and its tokenizer files in words, in the display language: what could not be
 * read or counted with, and why. File names and what the host said stay as they are.
 */
import * as l10n from '@vscode/l10n';

export function noTokenizer(): string {
  return l10n.t('the model folder has neither tiktoken.model nor tokenizer.json');
}

export function folderHasNoTokenizer(folder: string): string {
  return l10n.t('{0} has neither tiktoken.model nor tokenizer.json', folder);
}

export function notJson(name: string, reason: string): string {
  return l10n.t('{0} is not JSON: {1}', name, reason);
}

export function tokenizerUnloadable(reason: string): string {
  return l10n.t('tokenizer.json could not be loaded: {0}', reason);
}

export function tiktokenEmpty(): string {
  return l10n.t('tiktoken.model is empty');
}

export function tiktokenBadLine(line: number, text: string): string {
  return l10n.t('tiktoken.model line {0} is not "BASE64 RANK": {1}', line, text);
}

export function tiktokenBadRank(line: number, rank: number, last: number): string {
  return l10n.t('tiktoken.model line {0}: rank {1} is repeated or out of 0..{2}', line, rank, last);
}

export function counterWorkerEnded(code: number): string {
  return l10n.t("the token counter's worker ended (exit {0})", code);
}

export function counterNoCount(): string {
  return l10n.t('the token counter answered no count');
}

export function counterNotLoaded(): string {
  return l10n.t('the token counter did not load');
}

/** A read on the host that failed: its words, else its exit code. */
export function listingFailed(folder: string, stderr: string, code: number | null): string {
  return stderr
    ? l10n.t('listing {0} failed: {1}', folder, stderr)
    : l10n.t('listing {0} failed: exit {1}', folder, String(code));
}

export function folderUnreadable(folder: string): string {
  return l10n.t('the model folder {0} is not readable on the host', folder);
}

export function fileTooLarge(path: string, bytes: number, limit: number): string {
  return l10n.t('{0} is {1} bytes, over the {2} read', path, bytes, limit);
}

export function readFailed(path: string, stderr: string, code: number | null): string {
  return stderr
    ? l10n.t('reading {0} failed: {1}', path, stderr)
    : l10n.t('reading {0} failed: exit {1}', path, String(code));
}

export function changedWhileRead(path: string): string {
  return l10n.t('{0} changed while it was read (or is not UTF-8 text): checksum mismatch', path);
}
