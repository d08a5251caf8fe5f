/**
 * A command line shown as a unified diff, one option (`--flag value`) per line: what a parser
 * change does to it. Pure.
 */
import { findServerCommand } from './execStart';

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
export function groupArgs(argv: readonly string[]): string[][] {
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
