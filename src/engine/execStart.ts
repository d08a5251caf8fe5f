/**
 * The unit's effective ExecStart, read from `systemctl cat UNIT` output, and the edits the
 * parser change makes to it. Pure: no I/O. Syntax per systemd.syntax(7) and systemd.service(7).
 */

export { REASONING_PARSERS, TOOL_CALL_PARSERS, validateParserName } from './parserNames';

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
  if (quote !== null) throw new Error(`unbalanced ${quote} in ExecStart`);
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

export type ServerForm = 'launch_server' | 'sglang serve' | 'vllm serve' | 'vllm api_server';
export type Engine = 'sglang' | 'vllm';

export interface ServerCommandLocation {
  /** Index of the interpreter or the `sglang` / `vllm` executable. */
  readonly start: number;
  /** Index of the first server argument (after `-m sglang.launch_server`, `sglang serve`, `vllm serve`, ...). */
  readonly argsStart: number;
  readonly form: ServerForm;
  readonly engine: Engine;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function at(start: number, argsStart: number, form: ServerForm): ServerCommandLocation {
  return { start, argsStart, form, engine: form.startsWith('vllm') ? 'vllm' : 'sglang' };
}

/**
 * Finds `python[3] [opts] -m sglang.launch_server`, `sglang serve`, `vllm serve` or
 * `python -m vllm.entrypoints.openai.api_server`, also behind wrappers (env, numactl) and with
 * the console script run by its interpreter (`python3 /usr/bin/vllm serve`).
 */
export function findServerCommand(argv: readonly string[]): ServerCommandLocation | null {
  for (let i = 0; i < argv.length; i++) {
    const b = basename(argv[i]);
    if (/^python[0-9.]*$/.test(b)) {
      for (let j = i + 1; j < argv.length - 1; j++) {
        if (argv[j] === '-m') {
          const mod = argv[j + 1];
          if (mod === 'sglang.launch_server') return at(i, j + 2, 'launch_server');
          if ((mod === 'sglang.cli' || mod === 'sglang') && argv[j + 2] === 'serve')
            return at(i, j + 3, 'sglang serve');
          if (mod === 'vllm.entrypoints.openai.api_server') return at(i, j + 2, 'vllm api_server');
          if ((mod === 'vllm.entrypoints.cli.main' || mod === 'vllm') && argv[j + 2] === 'serve')
            return at(i, j + 3, 'vllm serve');
          break;
        }
        // Another interpreter word is the outer loop's: scanning on from each one would be quadratic.
        if (!argv[j].startsWith('-') || /^python[0-9.]*$/.test(basename(argv[j]))) break;
      }
    }
    if (b === 'sglang' && argv[i + 1] === 'serve') return at(i, i + 2, 'sglang serve');
    if (b === 'vllm' && argv[i + 1] === 'serve') return at(i, i + 2, 'vllm serve');
  }
  return null;
}

/** Which server the command line runs; undefined when it is neither SGLang nor vLLM. */
export function engineOf(argv: readonly string[]): Engine | undefined {
  return findServerCommand(argv)?.engine;
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

interface FlagHit {
  readonly index: number;
  /** `--flag=value` (one element) or `--flag value` (two elements, or one when value is missing). */
  readonly inline: boolean;
  readonly value: string | undefined;
}

function flagHits(argv: readonly string[], flag: string, from: number): FlagHit[] {
  const hits: FlagHit[] = [];
  for (let i = from; i < argv.length; i++) {
    const a = argv[i];
    if (a === flag) {
      const next = argv[i + 1];
      const hasValue = next !== undefined && !next.startsWith('--');
      hits.push({ index: i, inline: false, value: hasValue ? next : undefined });
      if (hasValue) i++;
    } else if (a.startsWith(flag + '=')) {
      hits.push({ index: i, inline: true, value: a.slice(flag.length + 1) });
    }
  }
  return hits;
}

function searchStart(argv: readonly string[]): number {
  return findServerCommand(argv)?.argsStart ?? 0;
}

/** Value of the last occurrence of `flag` (argparse keeps the last one). */
export function getFlag(argv: readonly string[], flag: string): string | undefined {
  const hits = flagHits(argv, flag, searchStart(argv));
  return hits.length > 0 ? hits[hits.length - 1].value : undefined;
}

/**
 * Sets `flag` to `value`: replaces the first occurrence in its own form (`--f v` or `--f=v`),
 * drops later duplicates, appends `--f v` when absent. Returns a new array.
 */
export function setFlag(argv: readonly string[], flag: string, value: string): string[] {
  const hits = flagHits(argv, flag, searchStart(argv));
  if (hits.length === 0) return [...argv, flag, value];
  const out: string[] = [];
  const byIndex = new Map(hits.map((h, n) => [h.index, { hit: h, first: n === 0 }]));
  for (let i = 0; i < argv.length; i++) {
    const entry = byIndex.get(i);
    if (!entry) {
      out.push(argv[i]);
      continue;
    }
    const { hit, first } = entry;
    if (!hit.inline && hit.value !== undefined) i++;
    if (!first) continue;
    if (hit.inline) out.push(`${flag}=${value}`);
    else out.push(flag, value);
  }
  return out;
}

/** Value of --model-path (or its alias --model); for `vllm serve`, its positional model (`vllm serve MODEL`). */
export function modelPathOf(argv: readonly string[]): string | undefined {
  const flag = getFlag(argv, '--model-path') ?? getFlag(argv, '--model');
  if (flag !== undefined) return flag;
  const loc = findServerCommand(argv);
  const first = loc?.form === 'vllm serve' ? argv[loc.argsStart] : undefined;
  return first !== undefined && !first.startsWith('-') ? first : undefined;
}

/** Adds a flag without a value (`--enable-auto-tool-choice`) unless it is there already. */
export function ensureSwitch(argv: readonly string[], flag: string): string[] {
  const from = searchStart(argv);
  const present = argv.some((a, i) => i >= from && (a === flag || a.startsWith(flag + '=')));
  return present ? [...argv] : [...argv, flag];
}

/** vLLM answers tool requests with `"auto" tool choice requires --enable-auto-tool-choice` without it. */
export const VLLM_AUTO_TOOL_CHOICE = '--enable-auto-tool-choice';

export interface ParserChoice {
  readonly toolCallParser: string;
  readonly reasoningParser: string;
}

export type ParserPlan =
  | { readonly kind: 'already-set' }
  | { readonly kind: 'change'; readonly newArgv: readonly string[]; readonly diff: string }
  | { readonly kind: 'unsupported'; readonly reason: string };

export function planParserChange(argv: readonly string[], choice: ParserChoice): ParserPlan {
  const loc = findServerCommand(argv);
  if (!loc) {
    return {
      kind: 'unsupported',
      reason: `no "python -m sglang.launch_server", "sglang serve" or "vllm serve" in ExecStart: ${argv.join(' ').slice(0, 200)}`,
    };
  }
  const withParsers = setFlag(
    setFlag(argv, '--tool-call-parser', choice.toolCallParser),
    '--reasoning-parser',
    choice.reasoningParser,
  );
  const newArgv = loc.engine === 'vllm' ? ensureSwitch(withParsers, VLLM_AUTO_TOOL_CHOICE) : withParsers;
  if (sameArgv(argv, newArgv)) return { kind: 'already-set' };
  return { kind: 'change', newArgv, diff: diffArgv(argv, newArgv) };
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** One line per option (`--flag value` together), unified-diff style. */
export function diffArgv(before: readonly string[], after: readonly string[]): string {
  const a = argvLines(before);
  const b = argvLines(after);
  if (a.length * b.length > MAX_DIFF_CELLS) return largeDiff(a, b);
  // LCS over lines: argv lists are short (tens of lines)
  const dp: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
    }
  }
  const out = ['--- ExecStart (current)', '+++ ExecStart (new)'];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    } else if (j < b.length && (i >= a.length || dp[i][j + 1] >= dp[i + 1][j])) {
      out.push(`+ ${b[j++]}`);
    } else {
      out.push(`- ${a[i++]}`);
    }
  }
  return out.join('\n') + '\n';
}

/** Past this many LCS cells (1000 x 1000 lines) the table would take gigabytes for 100k-word command lines. */
const MAX_DIFF_CELLS = 1_000_000;

/** The common head and tail kept, the middle shown as removed then added: linear in the lines. */
function largeDiff(a: readonly string[], b: readonly string[]): string {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out = ['--- ExecStart (current)', '+++ ExecStart (new)'];
  for (let i = 0; i < head; i++) out.push(`  ${a[i]}`);
  for (let i = head; i < a.length - tail; i++) out.push(`- ${a[i]}`);
  for (let j = head; j < b.length - tail; j++) out.push(`+ ${b[j]}`);
  for (let i = a.length - tail; i < a.length; i++) out.push(`  ${a[i]}`);
  return out.join('\n') + '\n';
}

function argvLines(argv: readonly string[]): string[] {
  return groupArgs(argv).map((g) => g.map(displayArg).join(' '));
}

function displayArg(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a);
}

/** Groups argv for display: the program part, then each `--option` with its values. */
function groupArgs(argv: readonly string[]): string[][] {
  const loc = findServerCommand(argv);
  const head = loc ? loc.argsStart : Math.min(1, argv.length);
  const groups: string[][] = [];
  if (head > 0) groups.push(argv.slice(0, head));
  for (let i = head; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('-') && !/^-\d/.test(a)) groups.push([a]);
    else if (groups.length > 0 && groups[groups.length - 1][0].startsWith('-') && head <= i)
      groups[groups.length - 1].push(a);
    else groups.push([a]);
  }
  return groups;
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
  if (newArgv.length === 0) throw new Error('empty command line');
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
  if (prefix === '' && /^[-@:+!|]/.test(a)) throw new Error(`executable "${a}" starts with a systemd prefix character`);
  return q;
}

/** SGLang's `--api-key K` / `--api-key=K` (the last one wins); undefined when absent or empty. */
export function apiKeyFromArgv(argv: readonly string[]): string | undefined {
  return getFlag(argv, '--api-key') || undefined;
}
