/**
 * package.json as a user of a locale reads it: every `%key%` replaced by its text from
 * package.nls.json (or package.nls.LOCALE.json), as VS Code does when it loads the extension.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.join(__dirname, '..', '..');

/** The texts of package.nls.json (locale undefined) or of package.nls.LOCALE.json. */
export function manifestTexts(locale?: string): Record<string, string> {
  const file = path.join(REPO_ROOT, locale ? `package.nls.${locale}.json` : 'package.nls.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
}

/** Every `%key%` that package.json's text holds, in order. */
export function manifestKeys(): string[] {
  const raw = fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8');
  return [...raw.matchAll(/"%([A-Za-z0-9_.-]+)%"/g)].map((m) => m[1]!);
}

/** package.json with its `%key%` strings resolved; a key without a text stays as it is. */
export function localizedManifest<T>(locale?: string): T {
  const texts = { ...manifestTexts(), ...(locale ? manifestTexts(locale) : {}) };
  const raw = fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8');
  return JSON.parse(raw, (_key, value: unknown) => {
    if (typeof value !== 'string') return value;
    const key = /^%([A-Za-z0-9_.-]+)%$/.exec(value)?.[1];
    return key !== undefined && key in texts ? texts[key] : value;
  }) as T;
}
