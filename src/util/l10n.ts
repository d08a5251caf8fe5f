/**
 * Which translation the process shows, chosen once per process: the extension hands over VS Code's
 * bundle for its display language; the CLI and the MCP server read the POSIX locale (LC_ALL,
 * LC_MESSAGES, LANG) and load l10n/bundle.l10n.<locale>.json. Every user-facing sentence is written
 * as `l10n.t('Loading {0}%', pct)` with `import * as l10n from '@vscode/l10n'` in the file itself,
 * the shape @vscode/l10n-dev's extractor recognizes (`npm run l10n` writes l10n/bundle.l10n.json).
 * English needs no bundle: without one, l10n.t returns the English template filled in.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';

/** The translations, message → translated message. */
export type L10nBundle = Record<string, string | { message: string; comment: string[] }>;

/**
 * The locale a POSIX program shows its messages in, in VS Code's spelling: "zh_CN.UTF-8" → "zh-cn",
 * "de_DE@euro" → "de-de"; undefined for C/POSIX or nothing set (English). LC_ALL wins over
 * LC_MESSAGES, which wins over LANG, as setlocale(3) has it.
 */
export function localeFromEnv(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const raw = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((v) => v !== undefined && v !== '');
  if (raw === undefined) return undefined;
  const name = raw.split(/[.@]/)[0]!.toLowerCase().replace(/_/g, '-');
  if (name === '' || name === 'c' || name === 'posix') return undefined;
  return /^[a-z]{2,3}(?:-[a-z0-9]{2,8})?$/.test(name) ? name : undefined;
}

/** The bundle file names to try for a locale, the most specific first ("zh-cn", then "zh"). */
export function bundleNames(locale: string): string[] {
  const language = locale.split('-')[0]!;
  return [...new Set([locale, language])].map((l) => `bundle.l10n.${l}.json`);
}

/**
 * Where the translations are for a program in `dir`: l10n/ beside dist/ (the VSIX, a built checkout),
 * or the checkout's when it runs from src/fronts/<front>/.
 */
export function l10nDirs(dir: string): string[] {
  return [path.join(dir, '..', 'l10n'), path.join(dir, '..', '..', '..', 'l10n')];
}

/** Shows the messages of this bundle from now on (undefined: English). */
export function useBundle(bundle: L10nBundle | undefined): void {
  l10n.config({ contents: bundle ?? {} });
}

/**
 * The CLI's and the MCP server's set-up: the bundle of the environment's locale, from the first of
 * `dirs` that has one (dist/../l10n in the VSIX and the checkout). Returns the file used, if any;
 * a missing or unreadable bundle leaves English.
 */
export function useEnvLocale(
  env: Readonly<Record<string, string | undefined>>,
  dirs: readonly string[],
): string | undefined {
  const locale = localeFromEnv(env);
  if (locale === undefined || locale === 'en' || locale.startsWith('en-')) {
    useBundle(undefined);
    return undefined;
  }
  for (const name of bundleNames(locale)) {
    for (const dir of dirs) {
      const file = path.join(dir, name);
      let bundle: unknown;
      try {
        bundle = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch {
        continue;
      }
      if (typeof bundle !== 'object' || bundle === null) continue;
      useBundle(bundle as L10nBundle);
      return file;
    }
  }
  useBundle(undefined);
  return undefined;
}
