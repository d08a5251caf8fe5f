/**
 * The server's command line inside a batch script: the first command (continued lines joined)
 * that runs SGLang or vLLM, from its program on (`srun ... python -m sglang.launch_server ...`
 * gives `python -m sglang.launch_server ...`). Words split as a shell would for plain and
 * quoted words; `$VAR` stays as written. Pure.
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

export function serverArgvOfScript(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const line of joined) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#') || !SERVER.test(trimmed)) continue;
    const words = shellWords(trimmed);
    const start = words.findIndex((w) => /(^|\/)python[0-9.]*$/.test(w) || /(^|\/)(vllm|sglang)$/.test(w));
    if (start >= 0) return words.slice(start).filter((w) => w !== '&');
  }
  return [];
}
