/** BENCHMARKS.md is written by several benchmarks, each owning the `## ` sections it names. */

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
