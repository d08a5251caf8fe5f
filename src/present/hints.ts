/**
 * What a user can do about a message, in the words of the front they use. The core marks the
 * place of a hint by its kind (util/hintMark.ts); `forFront` puts the front's words there:
 * VS Code names its palette command (by the title package.nls.json gives it), the CLI and MCP
 * (whose user has the CLI at hand) name what works there.
 */
import { HINT_KINDS, HINT_MARKS, type HintKind } from '../util/hintMark';

export type Front = 'vscode' | 'lm' | 'mcp' | 'cli';
export type { HintKind };

/** A palette command a hint names in VS Code: its id (package.json) and its title (package.nls.json). */
export interface PaletteCommand {
  readonly command: string;
  readonly title: string;
}

/** The palette command behind each VS Code hint. */
export const HINT_COMMANDS: Record<HintKind, PaletteCommand> = {
  'copy-sudoers-rules': { command: 'kimiService.copySudoersRule', title: 'Copy sudoers rule' },
  'install-sudoers-rules': { command: 'kimiService.copySudoersRule', title: 'Copy sudoers rule' },
  'set-api-key': { command: 'kimiService.setApiKey', title: 'Set server API key' },
  'stop-watching': { command: 'kimiService.stopWatching', title: 'Stop watching' },
  'enable-parsers': { command: 'kimiService.enableParsers', title: 'Enable tool calling and thinking parsers' },
};

/** How the palette names a command. */
function palette(kind: HintKind): string {
  return `"Kimi Service: ${HINT_COMMANDS[kind].title}"`;
}

/** VS Code's words (the language-model tools run in VS Code too). */
const VSCODE_WORDS: Record<HintKind, string> = {
  'copy-sudoers-rules': `${palette('copy-sudoers-rules')} copies the sudoers rules that allow exactly the extension's commands`,
  'install-sudoers-rules': `install the rules of ${palette('install-sudoers-rules')}`,
  'set-api-key': `set it with ${palette('set-api-key')}`,
  'stop-watching': `Run ${palette('stop-watching')}`,
  'enable-parsers': `the VS Code command ${palette('enable-parsers')}`,
};

/** The CLI's and MCP's words: where the front has its own way, else VS Code's. */
const OUTSIDE_WORDS: Record<HintKind, string> = {
  ...VSCODE_WORDS,
  'copy-sudoers-rules': 'docs/least-privilege.md gives the sudoers rules that allow exactly these commands',
  'install-sudoers-rules': 'install the sudoers rules of docs/least-privilege.md',
  'set-api-key': 'set it in KIMI_API_KEY for kimi-service',
};

/** A hint in a front's words. */
export function hintWords(kind: HintKind, front: Front): string {
  return (front === 'vscode' || front === 'lm' ? VSCODE_WORDS : OUTSIDE_WORDS)[kind];
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
