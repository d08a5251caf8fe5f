/**
 * The server's command line inside a batch script: the first command (continued lines joined)
 * that runs SGLang or vLLM, from its program on (`srun ... python -m sglang.launch_server ...`
 * gives `python -m sglang.launch_server ...`), and where it ends in the text (where flags are
 * added). Words split as a shell would for plain and quoted words; `$VAR` stays as written. Pure.
 */

const SERVER = /(sglang|vllm)/;

/** Shell-like words of one line: quotes group, backslash escapes; a `#` word starts a comment. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word = (word ?? '') + line.charAt(++i);
      else word = (word ?? '') + c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word = word ?? '';
    } else if (c === '\\' && i + 1 < line.length) word = (word ?? '') + line.charAt(++i);
    else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) break;
    else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The end of a line's command: before a comment, and before a trailing `&` (a server started in the background). */
export function commandEnd(line: string): number {
  let quote: '"' | "'" | undefined;
  let end = line.length;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(line.charAt(i - 1)))) {
      end = i;
      break;
    }
  }
  let code = line.slice(0, end).trimEnd();
  if (/[^&]&$/.test(code)) code = code.slice(0, -1).trimEnd();
  return code.length;
}

/** The server command of a script: its words, and the offset in the text where it ends (flags go there). */
export interface ScriptServerCommand {
  readonly argv: string[];
  readonly endOffset: number;
}

export function serverCommandOfScript(text: string): ScriptServerCommand | undefined {
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < lines.length; ) {
    // One logical line: physical lines ending with a backslash continue it.
    const parts: string[] = [];
    let last = i;
    let lastStart = offset;
    for (;;) {
      const physical = (lines[last] ?? '').replace(/\r$/, '');
      const continued = /\\$/.test(physical);
      parts.push(continued ? physical.slice(0, -1) : physical);
      if (!continued || last + 1 >= lines.length) break;
      lastStart += (lines[last] ?? '').length + 1;
      last++;
    }
    const joined = parts.join(' ').trim();
    if (!joined.startsWith('#') && SERVER.test(joined)) {
      const words = shellWords(joined);
      const start = words.findIndex((w) => /(^|\/)python[0-9.]*$/.test(w) || /(^|\/)(vllm|sglang)$/.test(w));
      if (start >= 0) {
        const lastLine = parts[parts.length - 1] ?? '';
        return { argv: words.slice(start).filter((w) => w !== '&'), endOffset: lastStart + commandEnd(lastLine) };
      }
    }
    for (let k = i; k <= last; k++) offset += (lines[k] ?? '').length + 1;
    i = last + 1;
  }
  return undefined;
}

export function serverArgvOfScript(text: string): string[] {
  return serverCommandOfScript(text)?.argv ?? [];
}
