/** The model folder and its tokenizer files in words: what could not be read or counted with, and why. */

export const NO_TOKENIZER = 'the model folder has neither tiktoken.model nor tokenizer.json';

export function folderHasNoTokenizer(folder: string): string {
  return `${folder} has neither tiktoken.model nor tokenizer.json`;
}

export function notJson(name: string, reason: string): string {
  return `${name} is not JSON: ${reason}`;
}

export function tokenizerUnloadable(reason: string): string {
  return `tokenizer.json could not be loaded: ${reason}`;
}

export const TIKTOKEN_EMPTY = 'tiktoken.model is empty';

export function tiktokenBadLine(line: number, text: string): string {
  return `tiktoken.model line ${line} is not "BASE64 RANK": ${text}`;
}

export function tiktokenBadRank(line: number, rank: number, last: number): string {
  return `tiktoken.model line ${line}: rank ${rank} is repeated or out of 0..${last}`;
}

export function counterWorkerEnded(code: number): string {
  return `the token counter's worker ended (exit ${code})`;
}

export const COUNTER_NO_COUNT = 'the token counter answered no count';
export const COUNTER_NOT_LOADED = 'the token counter did not load';

/** A read on the host that failed: its words, else its exit code. */
export function listingFailed(folder: string, stderr: string, code: number | null): string {
  return `listing ${folder} failed: ${stderr || `exit ${code}`}`;
}

export function folderUnreadable(folder: string): string {
  return `the model folder ${folder} is not readable on the host`;
}

export function fileTooLarge(path: string, bytes: number, limit: number): string {
  return `${path} is ${bytes} bytes, over the ${limit} read`;
}

export function readFailed(path: string, stderr: string, code: number | null): string {
  return `reading ${path} failed: ${stderr || `exit ${code}`}`;
}

export function changedWhileRead(path: string): string {
  return `${path} changed while it was read (or is not UTF-8 text): checksum mismatch`;
}
