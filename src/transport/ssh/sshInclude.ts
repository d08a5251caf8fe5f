/**
 * ssh_config(5) `Include`, which the `ssh-config` package does not follow: the included files
 * are inlined into the text before it is parsed. Globs (`*`, `?`, `[...]`) are expanded in
 * lexical order, relative paths are relative to ~/.ssh, nesting is limited to 16 levels (as
 * OpenSSH's READCONF_MAX_DEPTH). An Include inside a `Host` block applies only when that block
 * matches the host; after the inlined text the enclosing block is opened again, so the lines
 * that follow the Include keep their meaning.
 *
 * `expandIncludes` is pure: it reads from a snapshot of the files, which `collectConfigFiles`
 * (the fs wrapper at the bottom) makes by following every Include once.
 */
import * as fs from 'node:fs';
import { matchPattern } from './knownHosts';
import { expandTilde, isAbsolutePath, pathApi, sshDir, type PathContext } from './sshPaths';
import { SshConfigSyntaxError } from '../errors';
import { includeInMatch, includeTooDeep } from '../../present/words/sshWords';

export const MAX_INCLUDE_DEPTH = 16;

/** The files Include lines can reach: texts by absolute path, glob matches by absolute pattern. */
export interface ConfigFiles {
  readonly texts: ReadonlyMap<string, string>;
  readonly globs: ReadonlyMap<string, readonly string[]>;
}

export const NO_FILES: ConfigFiles = { texts: new Map(), globs: new Map() };

export interface Expanded {
  readonly text: string;
  /** Things the user should read in the log (an Include that could not be honoured). */
  readonly notes: readonly string[];
}

/** `Keyword value` or `Keyword=value`; undefined for blank lines and comments. */
export function splitDirective(line: string): { keyword: string; value: string } | undefined {
  const m = /^\s*([A-Za-z][A-Za-z0-9]*)(?:\s*=\s*|\s+)(.*?)\s*$/.exec(line);
  if (!m || line.trim().startsWith('#')) return undefined;
  return { keyword: m[1], value: m[2] };
}

/** Whitespace-separated arguments; double quotes group (and are removed). */
export function splitArgs(value: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(value); m; m = re.exec(value)) out.push(m[1] ?? m[2]);
  return out;
}

/** OpenSSH `Host` matching: any pattern matches and no negated pattern does (case-insensitive). */
export function hostLineMatches(patterns: readonly string[], host: string): boolean {
  let matched = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    if (matchPattern(host, pattern)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

export function hasGlob(p: string): boolean {
  return /[*?[]/.test(p);
}

/** glob(3) for one path segment: `*`, `?`, `[...]`/`[!...]`; a leading dot must be matched literally. */
export function globSegmentMatches(name: string, pattern: string): boolean {
  if (name.startsWith('.') && !pattern.startsWith('.')) return false;
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith('!')) body = '^' + body.slice(1);
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(re + '$', 's').test(name);
}

/** An Include argument as an absolute path pattern: `~` expanded, relative to ~/.ssh. */
export function includePath(arg: string, ctx: PathContext): string {
  const p = expandTilde(arg, ctx);
  return isAbsolutePath(p, ctx.platform) ? p : pathApi(ctx.platform).join(sshDir(ctx), p);
}

/** Every Include argument of a text (whatever block it is in), for the collector. */
export function includeArgs(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const d = splitDirective(line);
    if (d && d.keyword.toLowerCase() === 'include') out.push(...splitArgs(d.value));
  }
  return out;
}

/** The files an Include argument names, in the order OpenSSH reads them. */
function filesOf(arg: string, files: ConfigFiles, ctx: PathContext): string[] {
  const p = includePath(arg, ctx);
  return hasGlob(p) ? [...(files.globs.get(p) ?? [])] : [p];
}

/**
 * The text with every Include (that applies to `host`) replaced by the files it names.
 * Throws when nesting is deeper than MAX_INCLUDE_DEPTH (an Include loop).
 */
export function expandIncludes(text: string, files: ConfigFiles, host: string, ctx: PathContext): Expanded {
  const notes: string[] = [];
  const out = expandText(text, files, host, ctx, 0, notes, '(config)');
  return { text: out, notes: [...new Set(notes)] };
}

function expandText(
  text: string,
  files: ConfigFiles,
  host: string,
  ctx: PathContext,
  depth: number,
  notes: string[],
  from: string,
): string {
  if (!/^\s*include\b/im.test(text)) return text;
  const out: string[] = [];
  /** The line that opened the current block (undefined: top level, before any Host/Match). */
  let header: { line: string; kind: 'host' | 'match'; applies: boolean } | undefined;
  for (const line of text.split(/\r?\n/)) {
    const d = splitDirective(line);
    const keyword = d?.keyword.toLowerCase();
    if (d && keyword === 'host') {
      header = { line, kind: 'host', applies: hostLineMatches(splitArgs(d.value), host) };
      out.push(line);
      continue;
    }
    if (d && keyword === 'match') {
      header = { line, kind: 'match', applies: false };
      out.push(line);
      continue;
    }
    if (!d || keyword !== 'include') {
      out.push(line);
      continue;
    }
    if (header?.kind === 'match') {
      notes.push(includeInMatch(line.trim()));
      continue;
    }
    if (header && !header.applies) continue; // a Host block for other hosts: not read (as OpenSSH)
    if (depth + 1 > MAX_INCLUDE_DEPTH) {
      throw new SshConfigSyntaxError(includeTooDeep(MAX_INCLUDE_DEPTH, from, line.trim()));
    }
    for (const arg of splitArgs(d.value)) {
      for (const file of filesOf(arg, files, ctx)) {
        const included = files.texts.get(file);
        if (included === undefined) continue; // missing or unreadable: OpenSSH ignores it too
        out.push(`# ---- Include ${file}`);
        out.push(expandText(included, files, host, ctx, depth + 1, notes, file));
      }
    }
    // Back to the block the Include was in, for the lines that follow it.
    out.push(header ? header.line : 'Host *');
  }
  return out.join('\n');
}

// ---- fs wrapper ----

/** Reads every file any Include of `text` (recursively) can reach; missing files are skipped. */
export async function collectConfigFiles(text: string, ctx: PathContext): Promise<ConfigFiles> {
  const texts = new Map<string, string>();
  const globs = new Map<string, string[]>();
  const visit = async (t: string, depth: number): Promise<void> => {
    if (depth >= MAX_INCLUDE_DEPTH) return; // expandIncludes reports the loop
    for (const arg of includeArgs(t)) {
      let p: string;
      try {
        p = includePath(arg, ctx);
      } catch {
        continue; // ~user of an unknown user: expandIncludes has no file for it
      }
      let list: string[] = [p];
      if (hasGlob(p)) {
        if (!globs.has(p)) globs.set(p, await globFiles(p, ctx.platform));
        list = globs.get(p)!;
      }
      for (const file of list) {
        if (texts.has(file)) continue;
        let content: string;
        try {
          content = await fs.promises.readFile(file, 'utf8');
        } catch {
          continue;
        }
        texts.set(file, content);
        await visit(content, depth + 1);
      }
    }
  };
  await visit(text, 0);
  return { texts, globs };
}

/** Files (not directories) matching an absolute glob pattern, sorted. */
async function globFiles(pattern: string, platform: NodeJS.Platform): Promise<string[]> {
  const api = pathApi(platform);
  const root = api.parse(pattern).root;
  const segments = pattern
    .slice(root.length)
    .split(platform === 'win32' ? /[\\/]+/ : /\/+/)
    .filter(Boolean);
  let current = [root];
  for (const [i, seg] of segments.entries()) {
    const last = i === segments.length - 1;
    const next: string[] = [];
    for (const dir of current) {
      if (!hasGlob(seg)) {
        next.push(api.join(dir, seg));
        continue;
      }
      let names: string[];
      try {
        names = await fs.promises.readdir(dir);
      } catch {
        continue;
      }
      for (const name of names.sort()) if (globSegmentMatches(name, seg)) next.push(api.join(dir, name));
    }
    current = next;
    if (last) break;
  }
  const files: string[] = [];
  for (const f of current) {
    try {
      if ((await fs.promises.stat(f)).isFile()) files.push(f);
    } catch {
      // gone
    }
  }
  return files.sort();
}
