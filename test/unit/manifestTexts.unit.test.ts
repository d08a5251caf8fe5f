/**
 * The words of package.json (commands, settings, views, walkthrough, the agent tools' names) live in package.nls.json,
 * and every translation (package.nls.LOCALE.json) has each of them, with the same links, the same
 * setting names and the same line breaks: a string added in English only, or a translation that
 * lost a link, fails here.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { localizedManifest, manifestKeys, manifestTexts, REPO_ROOT } from '../util/manifest';

const LOCALES = fs
  .readdirSync(REPO_ROOT)
  .map((f) => /^package\.nls\.([a-z]{2}(?:-[a-z]{2})?)\.json$/.exec(f)?.[1])
  .filter((l): l is string => l !== undefined);

/** Where a user reads the manifest's words: [what, text] for each. */
function shownTexts(pkg: Manifest): [string, string][] {
  const out: [string, string][] = [];
  const c = pkg.contributes;
  for (const cmd of c.commands) out.push([`command ${cmd.command}`, cmd.title]);
  const schema = (o: Schema, where: string): void => {
    for (const k of ['description', 'markdownDescription'] as const) if (o[k] !== undefined) out.push([where, o[k]!]);
    for (const [i, d] of (o.enumDescriptions ?? []).entries()) out.push([`${where} enum ${i}`, d]);
    for (const [name, sub] of Object.entries(o.properties ?? {})) schema(sub, `${where}.${name}`);
    if (o.items) schema(o.items, `${where}[]`);
  };
  for (const [name, sub] of Object.entries(c.configuration.properties)) schema(sub, `setting ${name}`);
  for (const p of c.languageModelChatProviders) schema(p.configuration, `chat provider ${p.vendor}`);
  for (const v of Object.values(c.views).flat()) out.push([`view ${v.id}`, v.name]);
  // The tools picker shows these; modelDescription and the input schema are read by the model, in English.
  for (const t of c.languageModelTools)
    out.push([`tool ${t.name}`, t.displayName], [`tool ${t.name}`, t.userDescription]);
  for (const w of c.viewsWelcome) out.push([`welcome ${w.view}`, w.contents]);
  for (const w of c.walkthroughs) {
    out.push([`walkthrough ${w.id}`, w.title], [`walkthrough ${w.id}`, w.description]);
    for (const s of w.steps) out.push([`step ${s.id}`, s.title], [`step ${s.id}`, s.description]);
  }
  out.push(['description', pkg.description], ['Restricted Mode', pkg.capabilities.untrustedWorkspaces.description]);
  return out;
}

interface Schema {
  description?: string;
  markdownDescription?: string;
  enumDescriptions?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
}
interface Manifest {
  description: string;
  capabilities: { untrustedWorkspaces: { description: string } };
  contributes: {
    commands: { command: string; title: string }[];
    configuration: { properties: Record<string, Schema> };
    languageModelChatProviders: { vendor: string; configuration: Schema }[];
    languageModelTools: { name: string; displayName: string; userDescription: string }[];
    views: Record<string, { id: string; name: string }[]>;
    viewsWelcome: { view: string; contents: string }[];
    walkthroughs: {
      id: string;
      title: string;
      description: string;
      steps: { id: string; title: string; description: string; media: { markdown: string } }[];
    }[];
  };
}

/** What a translation must keep as it is: link targets, setting and command names, line breaks. */
function invariants(text: string): { links: string[]; names: string[]; lines: number } {
  return {
    links: [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!),
    names: [...text.matchAll(/kimiService\.[A-Za-z.]+[A-Za-z]|docs\/[a-z-]+\.md|--[a-z-]+/g)].map((m) => m[0]).sort(),
    lines: text.split('\n').length,
  };
}

describe('package.json words in package.nls.json, and their translations', () => {
  it('every text a user reads in package.json is a %key% of package.nls.json, and every key is used', () => {
    const raw = JSON.parse(fs.readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as Manifest;
    const inline = shownTexts(raw).filter(([, text]) => !/^%[A-Za-z0-9_.-]+%$/.test(text));
    assert.deepEqual(inline, [], 'texts written in package.json instead of package.nls.json');
    const keys = manifestKeys();
    const texts = manifestTexts();
    assert.deepEqual(
      keys.filter((k) => !(k in texts)),
      [],
      'keys without a text',
    );
    assert.deepEqual(
      Object.keys(texts).filter((k) => !keys.includes(k)),
      [],
      'texts no key uses',
    );
    for (const [what, text] of shownTexts(localizedManifest<Manifest>())) assert.ok(text.trim() !== '', what);
  });

  it('there is a Simplified Chinese translation', () => {
    assert.ok(LOCALES.includes('zh-cn'), `locales: ${LOCALES.join(', ')}`);
  });

  for (const locale of LOCALES)
    it(`${locale}: every key translated, with the same links, names and line breaks`, () => {
      const english = manifestTexts();
      const translated = manifestTexts(locale);
      assert.deepEqual(Object.keys(translated).sort(), Object.keys(english).sort());
      for (const [key, text] of Object.entries(english)) {
        const t = translated[key]!;
        assert.ok(t.trim() !== '', `${key}: empty`);
        assert.deepEqual(invariants(t), invariants(text), `${key}: ${t}`);
      }
    });

  for (const locale of LOCALES)
    it(`${locale}: each walkthrough step has its page, naming the same settings, commands and code as the English one`, () => {
      const steps = (m: Manifest) => m.contributes.walkthroughs.flatMap((w) => w.steps.map((s) => s.media.markdown));
      const english = steps(localizedManifest<Manifest>());
      const translated = steps(localizedManifest<Manifest>(locale));
      const code = (page: string) =>
        [...fs.readFileSync(`${REPO_ROOT}/${page}`, 'utf8').matchAll(/`[^`\n]+`/g)]
          .map((m) => m[0])
          .filter((c) => /^[\x20-\x7e]+$/.test(c))
          .sort();
      assert.equal(translated.length, english.length);
      for (const [i, page] of translated.entries()) {
        assert.notEqual(page, english[i], `${locale}: step ${i} shows the English page`);
        assert.ok(fs.existsSync(`${REPO_ROOT}/${page}`), page);
        assert.deepEqual(code(page).filter(latin), code(english[i]!).filter(latin), page);
      }
    });
});

/** A code span a translation keeps as it is: ASCII (a setting, a flag, a command line), not a state the status bar translates. */
function latin(span: string): boolean {
  return !/^`(?:restarting|loading|warming up|ready|failed|stalled)\b/.test(span);
}
