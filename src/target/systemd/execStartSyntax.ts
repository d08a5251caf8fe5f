/**
 * systemd's ExecStart syntax (systemd.syntax(7), systemd.service(7)): the unit's effective
 * ExecStart read from `systemctl cat UNIT`, and the drop-in that replaces it with an edited
 * command line. Pure: no I/O. What the command line says is the engine's (engine/engine.ts).
 */
import { findServerCommand, groupArgs, type ServerCommandLocation } from '../../engine/engine';
import { emptyCommandLine, systemdPrefixExecutable, unbalancedQuote } from '../../present/words/targetWords';

/** One command of an ExecStart= line. `argv` holds literal values (`%%` -> `%`, `$$` -> `$`). */
export interface ExecCommand {
  /** Special executable prefixes as written: `-`, `@`, `:`, `+`, `!`, `!!`. */
  readonly prefix: string;
  readonly argv: readonly string[];
  /**
   * Specifiers (`%i`) and variables (`$X`, `${X}`) systemd expands at load/exec time. They are
   * left verbatim in `argv`; pass them to renderDropIn's `keepReferences` to keep them unescaped.
   */
  readonly references: readonly string[];
  /** File the line came from (`# /path` header of systemctl cat), if known. */
  readonly file?: string;
}

export interface ParsedUnit {
  /** Effective ExecStart commands after all files and `ExecStart=` resets. */
  readonly commands: readonly ExecCommand[];
  /** Files in the order systemctl cat printed them. */
  readonly files: readonly string[];
  readonly warnings: readonly string[];
}

interface LogicalLine {
  readonly text: string;
  readonly file?: string;
}

const FILE_HEADER = /^# (\/\S.*\.(?:service|conf))\s*$/;

/** Joins `\` continuations (the backslash becomes a space) and drops comments and blank lines. */
function logicalLines(text: string): { lines: LogicalLine[]; files: string[] } {
  const raw = text.replace(/\r\n?/g, '\n').split('\n');
  const lines: LogicalLine[] = [];
  const files: string[] = [];
  let file: string | undefined;
  // The pieces of a continued line, joined once at its end (re-joining at each piece is quadratic).
  let continuation: string[] | null = null;
  let previousBlank = true;
  for (const line of raw) {
    const trimmed = line.trim();
    if (continuation === null) {
      const header = previousBlank ? FILE_HEADER.exec(trimmed) : null;
      previousBlank = trimmed === '';
      if (header) {
        file = header[1];
        files.push(file);
        lines.push({ text: '[#file]', file });
        continue;
      }
      if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    } else if (trimmed.startsWith('#') || trimmed.startsWith(';')) {
      // systemd ignores comment lines inside a continued line
      continue;
    }
    // A continued line's pieces end in ' ', so its trailing backslashes are all this line's.
    const piece = continuation === null ? line.replace(/^\s+/, '') : line;
    if (endsWithOddBackslashes(piece)) {
      (continuation ??= []).push(piece.slice(0, -1) + ' ');
      continue;
    }
    const joined = continuation === null ? piece : continuation.join('') + piece;
    continuation = null;
    lines.push({ text: joined.trim(), file });
  }
  if (continuation !== null) lines.push({ text: continuation.join('').trim(), file });
  return { lines, files };
}

function endsWithOddBackslashes(s: string): boolean {
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/** Parses `systemctl cat UNIT` output (or a single unit file) into the effective ExecStart. */
export function parseSystemctlCat(text: string): ParsedUnit {
  const { lines, files } = logicalLines(text);
  const warnings: string[] = [];
  let section = '';
  let commands: ExecCommand[] = [];
  for (const { text: line, file } of lines) {
    if (line === '[#file]') {
      section = '';
      continue;
    }
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      section = sec[1].trim();
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0 || section !== 'Service') continue;
    if (line.slice(0, eq).trim() !== 'ExecStart') continue;
    const value = line.slice(eq + 1).trim();
    if (value === '') {
      commands = [];
      continue;
    }
    try {
      for (const c of parseExecValue(value)) commands.push({ ...c, file });
    } catch (e) {
      warnings.push(`${file ?? 'unit'}: ${(e as Error).message}`);
    }
  }
  return { commands, files, warnings };
}

const PREFIX_CHARS = new Set(['-', '@', ':', '+', '!', '|']);

/** Splits one ExecStart= value into commands (an unquoted lone `;` separates commands). */
export function parseExecValue(value: string): Omit<ExecCommand, 'file'>[] {
  const out: Omit<ExecCommand, 'file'>[] = [];
  let words: string[] = [];
  let refs: string[] = [];
  let prefix = '';
  let pos = 0;
  const flush = (): void => {
    if (words.length > 0) out.push({ prefix, argv: words, references: refs });
    words = [];
    refs = [];
    prefix = '';
  };
  for (;;) {
    while (pos < value.length && isSpace(value[pos])) pos++;
    if (pos >= value.length) break;
    if (value[pos] === ';' && (pos + 1 >= value.length || isSpace(value[pos + 1]))) {
      pos++;
      flush();
      continue;
    }
    const { word, next } = extractWord(value, pos);
    pos = next;
    let w = word;
    if (words.length === 0) {
      let i = 0;
      while (i < w.length && PREFIX_CHARS.has(w[i])) i++;
      prefix = w.slice(0, i);
      w = w.slice(i);
    }
    const { literal, references } = unescapeSpecifiers(w);
    words.push(literal);
    refs.push(...references);
  }
  flush();
  return out;
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n';
}

/** systemd's extract_first_word with UNQUOTE|CUNESCAPE: quotes may appear inside a word. */
function extractWord(s: string, start: number): { word: string; next: number } {
  let word = '';
  let quote: string | null = null;
  let i = start;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') {
      if (s[i + 1] === ';' && quote === null) {
        word += ';';
        i += 2;
        continue;
      }
      const { text, length } = cUnescape(s, i + 1);
      word += text;
      i += 1 + length;
      continue;
    }
    if (quote !== null) {
      if (c === quote) quote = null;
      else word += c;
      i++;
      continue;
    }
    if (isSpace(c)) break;
    if (c === '"' || c === "'") quote = c;
    else word += c;
    i++;
  }
  if (quote !== null) throw new Error(unbalancedQuote(quote));
  return { word, next: i };
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  s: ' ',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

function cUnescape(s: string, i: number): { text: string; length: number } {
  const c = s[i];
  if (c === undefined) return { text: '', length: 0 };
  if (c in SIMPLE_ESCAPES) return { text: SIMPLE_ESCAPES[c], length: 1 };
  const hex = (n: number): { text: string; length: number } | null => {
    const digits = s.slice(i + 1, i + 1 + n);
    const code = parseInt(digits, 16);
    // Past U+10FFFF is no character (String.fromCodePoint would throw): kept as written, like an unknown escape.
    return digits.length === n && /^[0-9a-fA-F]+$/.test(digits) && code <= 0x10ffff
      ? { text: String.fromCodePoint(code), length: 1 + n }
      : null;
  };
  if (c === 'x') return hex(2) ?? { text: c, length: 1 };
  if (c === 'u') return hex(4) ?? { text: c, length: 1 };
  if (c === 'U') return hex(8) ?? { text: c, length: 1 };
  const oct = s.slice(i, i + 3);
  if (/^[0-3][0-7]{2}$/.test(oct)) return { text: String.fromCharCode(parseInt(oct, 8)), length: 3 };
  // systemd rejects unknown escapes with a warning; keeping the character is the lenient reading
  return { text: c, length: 1 };
}

/** `%%` -> `%`, `$$` -> `$`; other specifiers and variables stay verbatim and are reported. */
function unescapeSpecifiers(w: string): { literal: string; references: string[] } {
  let literal = '';
  const references: string[] = [];
  for (let i = 0; i < w.length; i++) {
    const c = w[i];
    const n = w[i + 1];
    if ((c === '%' || c === '$') && n === c) {
      literal += c;
      i++;
      continue;
    }
    if (c === '%' && n !== undefined) {
      references.push(c + n);
      literal += c + n;
      i++;
      continue;
    }
    if (c === '$') {
      const m = /^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)/.exec(w.slice(i));
      if (m) {
        references.push(m[0]);
        literal += m[0];
        i += m[0].length - 1;
        continue;
      }
    }
    literal += c;
  }
  return { literal, references };
}

/** The server command among the effective ExecStart commands. */
export function findServerInUnit(
  unit: ParsedUnit,
): { command: ExecCommand; index: number; location: ServerCommandLocation } | null {
  for (let index = 0; index < unit.commands.length; index++) {
    const command = unit.commands[index];
    const location = findServerCommand(command.argv);
    if (location) return { command, index, location };
  }
  return null;
}

/** One argument in systemd ExecStart syntax, parsed back to exactly `arg`. */
export function quoteSystemdArg(arg: string, keepReferences: readonly string[] = []): string {
  let escaped = '';
  for (let i = 0; i < arg.length; i++) {
    const ref = keepReferences.find((r) => arg.startsWith(r, i));
    if (ref) {
      escaped += ref;
      i += ref.length - 1;
    } else if (arg[i] === '%' || arg[i] === '$') {
      escaped += arg[i] + arg[i];
    } else {
      escaped += arg[i];
    }
  }
  if (escaped !== '' && /^[A-Za-z0-9_@%$+=:,./-]+$/.test(escaped)) return escaped;
  let quoted = '"';
  for (const ch of escaped) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') quoted += '\\\\';
    else if (ch === '"') quoted += '\\"';
    else if (ch === '\n') quoted += '\\n';
    else if (ch === '\t') quoted += '\\t';
    else if (ch === '\r') quoted += '\\r';
    else if (code < 0x20 || code === 0x7f) quoted += '\\x' + code.toString(16).padStart(2, '0');
    else quoted += ch;
  }
  return quoted + '"';
}

export interface RenderOptions {
  /** ExecStart prefix of the original command (`-`, `+`, ...), kept as is. */
  readonly prefix?: string;
  /** Specifiers/variables (ExecCommand.references) to leave unescaped so systemd still expands them. */
  readonly keepReferences?: readonly string[];
}

/**
 * The drop-in that replaces ExecStart: `ExecStart=` clears the list, then the full command,
 * one option per continuation line.
 */
export function renderDropIn(newArgv: readonly string[], comment: string, options: RenderOptions = {}): string {
  if (newArgv.length === 0) throw new Error(emptyCommandLine());
  const keep = options.keepReferences ?? [];
  const groups = groupArgs(newArgv);
  const lines = groups.map((g, n) =>
    g
      .map((a, k) =>
        n === 0 && k === 0
          ? (options.prefix ?? '') + quoteFirst(a, keep, options.prefix ?? '')
          : quoteSystemdArg(a, keep),
      )
      .join(' '),
  );
  const commentLines = comment
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => `# ${l}`);
  return [...commentLines, '[Service]', 'ExecStart=', 'ExecStart=' + lines.join(' \\\n    '), ''].join('\n');
}

/** argv[0] may start with a prefix character only if quoting keeps systemd from reading it as one. */
function quoteFirst(a: string, keep: readonly string[], prefix: string): string {
  const q = quoteSystemdArg(a, keep);
  // systemd strips prefix characters from the extracted first word, quoted or not
  if (prefix === '' && /^[-@:+!|]/.test(a)) throw new Error(systemdPrefixExecutable(a));
  return q;
}
