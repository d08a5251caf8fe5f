/**
 * What a user can do about a message, in the words of the front they use. The core marks the
 * place of a hint by its kind (util/hintMark.ts); `forFront` puts the front's words there:
 * VS Code names its palette command (by the title package.nls.json gives it), the CLI and MCP
 * (whose user has the CLI at hand) name what works there; in the display language, the palette's
 * titles as package.nls.<locale>.json gives them.
 */
import * as l10n from '@vscode/l10n';
import { HINT_KINDS, HINT_MARKS, type HintKind } from '../util/hintMark';

export type Front = 'vscode' | 'lm' | 'mcp' | 'cli';
export type { HintKind };

/**
 * The title of the palette command behind each VS Code hint, in the display language, as the
 * palette shows it (package.nls.json and package.nls.<locale>.json give the command the same
 * words; the front owns the command's id).
 */
export const HINT_TITLES: Readonly<Record<HintKind, () => string>> = {
  'copy-sudoers-rules': () => l10n.t('Copy sudoers rule'),
  'install-sudoers-rules': () => l10n.t('Copy sudoers rule'),
  'set-api-key': () => l10n.t('Set server API key'),
  'stop-watching': () => l10n.t('Stop watching'),
  'enable-parsers': () => l10n.t('Enable tool calling and thinking parsers'),
};

/** How the palette names a command (its category, "Kimi Service", is a product name). */
function palette(kind: HintKind): string {
  return `"Kimi Service: ${HINT_TITLES[kind]()}"`;
}

/** VS Code's words (the language-model tools run in VS Code too). */
function vscodeWords(kind: HintKind): string {
  switch (kind) {
    case 'copy-sudoers-rules':
      return l10n.t("{0} copies the sudoers rules that allow exactly the extension's commands", palette(kind));
    case 'install-sudoers-rules':
      return l10n.t('install the rules of {0}', palette(kind));
    case 'set-api-key':
      return l10n.t('set it with {0}', palette(kind));
    case 'stop-watching':
      return l10n.t('Run {0}', palette(kind));
    case 'enable-parsers':
      return l10n.t('the VS Code command {0}', palette(kind));
  }
}

/** The CLI's and MCP's words: where the front has its own way, else VS Code's. */
function outsideWords(kind: HintKind): string {
  switch (kind) {
    case 'copy-sudoers-rules':
      return l10n.t('docs/least-privilege.md gives the sudoers rules that allow exactly these commands');
    case 'install-sudoers-rules':
      return l10n.t('install the sudoers rules of docs/least-privilege.md');
    case 'set-api-key':
      return l10n.t('set it in KIMI_API_KEY for kimi-service');
    default:
      return vscodeWords(kind);
  }
}

/** A hint in a front's words. */
export function hintWords(kind: HintKind, front: Front): string {
  return front === 'vscode' || front === 'lm' ? vscodeWords(kind) : outsideWords(kind);
}

function isHintKind(kind: string): kind is HintKind {
  return (HINT_KINDS as readonly string[]).includes(kind);
}

/** A core message as the front's user reads it: each hint's mark replaced by the front's words. */
export function forFront(text: string, front: Front): string {
  return text.replace(HINT_MARKS, (mark, kind: string) => (isHintKind(kind) ? hintWords(kind, front) : mark));
}

/** `forFront` on every string of a JSON value (a tool's structured result). */
export function forFrontDeep<T>(value: T, front: Front): T {
  if (typeof value === 'string') return forFront(value, front) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => forFrontDeep(v, front)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, forFrontDeep(v, front)])) as T;
  return value;
}
