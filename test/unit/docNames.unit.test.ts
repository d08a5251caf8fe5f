/**
 * The words a user reads (README, docs/*.md, the walkthrough's pages and steps) name only commands,
 * settings and contributions the extension has: a renamed or removed one fails here.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { localizedManifest } from '../util/manifest';

const ROOT = path.join(__dirname, '..', '..');

interface Manifest {
  contributes: Record<string, unknown> & {
    commands: { command: string; title: string }[];
    configuration: { properties: Record<string, unknown> } | { properties: Record<string, unknown> }[];
    views: Record<string, { id: string }[]>;
    viewsContainers: Record<string, { id: string }[]>;
    walkthroughs: { id: string; steps: { description: string; completionEvents?: string[] }[] }[];
  };
}

/** kimiService.* names that are not contributions, each with the source file that makes it. */
const MADE_BY_CODE: readonly { readonly name: string; readonly prefix?: true; readonly file: string }[] = [
  // setContext keys: the walkthrough steps' completion events.
  { name: 'kimiService.parsersVerified', file: 'src/fronts/vscode/walkthrough.ts' },
  { name: 'kimiService.chatModelOffered', file: 'src/fronts/vscode/walkthrough.ts' },
  // SecretStorage keys of kept SSH passwords: kimiService.sshPassword.<user@host:port>.
  { name: 'kimiService.sshPassword.', prefix: true, file: 'src/fronts/vscode/secrets/keptPasswords.ts' },
];

function manifest(): Manifest {
  return localizedManifest<Manifest>();
}

/** Every kimiService.* name the extension has. */
function knownNames(pkg: Manifest): Set<string> {
  const c = pkg.contributes;
  const settings = (Array.isArray(c.configuration) ? c.configuration : [c.configuration]).flatMap((s) =>
    Object.keys(s.properties),
  );
  const views = Object.values(c.views).flatMap((list) => list.map((v) => v.id));
  return new Set([
    ...c.commands.map((x) => x.command),
    ...settings,
    ...views,
    // VS Code makes `<view id>.focus` for every view.
    ...views.map((id) => `${id}.focus`),
    ...Object.values(c.viewsContainers).flatMap((list) => list.map((v) => v.id)),
    ...c.walkthroughs.map((w) => w.id),
  ]);
}

/** The texts a user reads, by where they are. */
function texts(pkg: Manifest): [string, string][] {
  const md = (dir: string) =>
    fs
      .readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.md'))
      .map((f): [string, string] => [`${dir}/${f}`, fs.readFileSync(path.join(ROOT, dir, f), 'utf8')]);
  const steps = pkg.contributes.walkthroughs.flatMap((w) =>
    w.steps.map((s): [string, string] => [
      `package.json walkthrough ${w.id}`,
      [s.description, ...(s.completionEvents ?? [])].join('\n'),
    ]),
  );
  return [
    ['README.md', fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')],
    ...md('docs'),
    ...md('media/walkthrough'),
    ...steps,
  ];
}

/** What in `text` names something the extension does not have. */
function unknownNames(text: string, pkg: Manifest): string[] {
  const known = knownNames(pkg);
  const wrong: string[] = [];
  for (const [name] of text.matchAll(/kimiService\.[A-Za-z0-9_.]*[A-Za-z0-9_]/g)) {
    if (known.has(name)) continue;
    if (MADE_BY_CODE.some((m) => (m.prefix ? `${name}.`.startsWith(m.name) : name === m.name))) continue;
    wrong.push(name);
  }
  const c = pkg.contributes;
  for (const m of text.matchAll(/contributes\.([A-Za-z]+)(?:\[\d*\])?(?:\.([A-Za-z]+))?/g)) {
    const [whole, point, property] = m as unknown as [string, string, string | undefined];
    if (!(point in c)) {
      wrong.push(whole);
      continue;
    }
    const items = ([] as unknown[]).concat(c[point]);
    if (property && !items.some((i) => typeof i === 'object' && i !== null && property in i)) wrong.push(whole);
  }
  // "**Kimi Service: Title**": a command of that title (the palette's category and title).
  const titles = new Set(c.commands.map((x) => x.title));
  for (const [, title] of text.matchAll(/\*\*Kimi Service: ([^*]+)\*\*/g))
    if (!titles.has(title!)) wrong.push(`Kimi Service: ${title}`);
  return wrong;
}

describe('docs, README and walkthrough name what package.json has', () => {
  it('every kimiService.* command or setting, contribution and "Kimi Service: …" command they name exists', () => {
    const pkg = manifest();
    const wrong = texts(pkg).flatMap(([where, text]) => unknownNames(text, pkg).map((n) => `${where}: ${n}`));
    assert.deepEqual(wrong, []);
  });

  it('names a bogus command, setting, contribution or property as wrong, and the real ones as right', () => {
    const pkg = manifest();
    assert.deepEqual(
      unknownNames(
        'Run `kimiService.restartService` with `kimiService.servers`, open `kimiService.servers.focus` ' +
          '(`contributes.languageModelTools`, `contributes.languageModelChatProviders[0].configuration`), ' +
          '**Kimi Service: Show log**, `kimiService.sshPassword.me@gpu1:22`.',
        pkg,
      ),
      [],
    );
    assert.deepEqual(
      unknownNames(
        '`kimiService.restartEverything`, `kimiService.chatModel.bogus`, `contributes.mcpServerDefinitionProviders`, ' +
          '`contributes.languageModelChatProviders[0].managementCommand`, **Kimi Service: Make coffee**',
        pkg,
      ),
      [
        'kimiService.restartEverything',
        'kimiService.chatModel.bogus',
        'contributes.mcpServerDefinitionProviders',
        'contributes.languageModelChatProviders[0].managementCommand',
        'Kimi Service: Make coffee',
      ],
    );
  });

  it('the names made by code (context keys, secret storage keys) are still made there', () => {
    for (const { name, file } of MADE_BY_CODE)
      assert.ok(fs.readFileSync(path.join(ROOT, file), 'utf8').includes(name), `${name} in ${file}`);
  });
});
