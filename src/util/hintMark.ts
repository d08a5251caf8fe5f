/**
 * What a user can do about a message, as a kind the core names and each front words its own way
 * (present/hints.ts): VS Code names its palette command, the CLI its own way, an agent its tool.
 * The core holds no front's words; a message carries the kind as a mark where the words go, so
 * the mark survives the broker's wire and a JSON line, and the front that shows it fills it in.
 */

export const HINT_KINDS = [
  /** The sudoers rules that allow exactly the extension's commands: where they come from. */
  'copy-sudoers-rules',
  /** The same rules, named as something to install. */
  'install-sudoers-rules',
  /** A server that wants an API key: where the user sets it. */
  'set-api-key',
  /** A second watch refused: how the user ends the watch under way. */
  'stop-watching',
  /** The server flags lack the parsers: how the user adds them. */
  'enable-parsers',
] as const;
export type HintKind = (typeof HINT_KINDS)[number];

/** The mark of a hint in a message's text. Printable, no quote or backslash: JSON leaves it as it is. */
export function hintMark(kind: HintKind): string {
  return `\u27e6hint:${kind}\u27e7`;
}

/** Every mark in a text (global: use with replace). */
export const HINT_MARKS = /\u27e6hint:([a-z-]+)\u27e7/g;
