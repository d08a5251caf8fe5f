/**
 * BENCHMARKS.md is written by several benchmarks, each owning the `## ` section it names: one
 * current table per benchmark, with the date, the commit and the machine it was measured on. The
 * runs before are in git's history of the file, not in it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..');

/** What the title of a new BENCHMARKS.md says before the first benchmark's section. */
export const BENCHMARKS_INTRO = `# Benchmarks

One current table per benchmark, each with the date, the commit and the machine it was measured
on; earlier runs are in git's history of this file (\`git log -p BENCHMARKS.md\`). Each section is
written by its benchmark script, which replaces only its own section (scripts/benchDoc.ts).
`;

function bounds(lines: string[], heading: string): [number, number] | undefined {
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) return undefined;
  const next = lines.findIndex((l, i) => i > start && /^## /.test(l));
  return [start, next < 0 ? lines.length : next];
}

/** The section under `heading` (heading line included), or undefined. */
export function sectionOf(doc: string, heading: string): string | undefined {
  const lines = doc.split('\n');
  const found = bounds(lines, heading);
  return found ? lines.slice(found[0], found[1]).join('\n').trimEnd() : undefined;
}

/** `doc` with the section under `heading` replaced by `section` (appended when absent). */
export function replaceSection(doc: string, heading: string, section: string): string {
  const lines = doc.split('\n');
  const found = bounds(lines, heading);
  if (!found) return `${doc.replace(/\s*$/, '')}${doc.trim() ? '\n\n' : ''}${section.trimEnd()}\n`;
  const before = lines.slice(0, found[0]).join('\n').replace(/\s*$/, '');
  const after = lines.slice(found[1]).join('\n').trim();
  return `${before}${before ? '\n\n' : ''}${section.trimEnd()}\n${after ? `\n${after}\n` : ''}`;
}

/** Prints `section`; with `out` (a file's path) also replaces the section under `heading` there. */
export function publishSection(section: string, heading: string, out: string): void {
  process.stdout.write(`${section}\n`);
  if (out)
    fs.writeFileSync(out, replaceSection(fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '', heading, section));
}

/** The branch and short commit checked out ("main 1a2b3c4"), read from .git without running git. */
export function gitHead(): string {
  try {
    const head = fs.readFileSync(path.join(REPO_ROOT, '.git'), 'utf8');
    const dir = head.startsWith('gitdir:') ? head.slice(7).trim() : path.join(REPO_ROOT, '.git');
    const ref = fs.readFileSync(path.join(dir, 'HEAD'), 'utf8').trim();
    if (!ref.startsWith('ref:')) return ref.slice(0, 7);
    const name = ref.slice(5);
    const common = fs.existsSync(path.join(dir, 'commondir'))
      ? path.resolve(dir, fs.readFileSync(path.join(dir, 'commondir'), 'utf8').trim())
      : dir;
    for (const d of [dir, common]) {
      const f = path.join(d, name);
      if (fs.existsSync(f))
        return `${name.replace('refs/heads/', '')} ${fs.readFileSync(f, 'utf8').trim().slice(0, 7)}`;
    }
    return name;
  } catch {
    return 'unknown';
  }
}
