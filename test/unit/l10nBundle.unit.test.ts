/**
 * The words shown at run time are in the bundles: every `l10n.t('...')` of src/ is a key of
 * l10n/bundle.l10n.json (as @vscode/l10n-dev's extractor finds it: `npm run l10n` rewrites the
 * file), every key has its translation in each l10n/bundle.l10n.LOCALE.json, and a translation
 * keeps the {N} placeholders, the `backquoted` names and the URLs of its English. The notifications
 * and the status bar text of the VS Code front are never written as bare literals.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { getL10nJson } from '@vscode/l10n-dev';

const ROOT = path.join(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
const L10N = path.join(ROOT, 'l10n');

type Bundle = Record<string, string | { message: string; comment: string[] }>;

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

function readBundle(file: string): Bundle {
  return JSON.parse(fs.readFileSync(path.join(L10N, file), 'utf8')) as Bundle;
}

const message = (value: Bundle[string]): string => (typeof value === 'string' ? value : value.message);

const LOCALES = fs
  .readdirSync(L10N)
  .map((f) => /^bundle\.l10n\.([a-z]{2,3}(?:-[a-z0-9]+)?)\.json$/.exec(f)?.[1])
  .filter((l): l is string => l !== undefined);

/** What a translation must keep of its English: placeholders, `code`, URLs (sorted, with repeats). */
export function keptParts(text: string): { placeholders: string[]; code: string[]; urls: string[] } {
  const all = (re: RegExp) => [...text.matchAll(re)].map((m) => m[0]).sort();
  return {
    placeholders: [...new Set(all(/\{\d+\}/g))].sort(),
    code: all(/`[^`]+`/g),
    urls: all(/https?:\/\/[^\s)"'`，。；）]+/g),
  };
}

/** The literals a VS Code front passes straight to the user: notification texts and status bar text. */
export function bareLiterals(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const isWords = (node: ts.Node): boolean =>
    ts.isStringLiteral(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) ||
    ts.isTemplateExpression(node) ||
    (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken && isWords(node.left));
  const where = (node: ts.Node) =>
    `${path.relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
      if (name && /^show(Information|Warning|Error)Message$/.test(name))
        for (const arg of node.arguments) if (isWords(arg)) found.push(`${where(arg)} ${name}(${arg.getText()})`);
      if (name && /^(showQuickPick|showInputBox|withProgress)$/.test(name))
        for (const arg of node.arguments)
          if (ts.isObjectLiteralExpression(arg))
            for (const prop of arg.properties)
              if (
                ts.isPropertyAssignment(prop) &&
                /^(title|prompt|placeHolder)$/.test(prop.name.getText()) &&
                isWords(prop.initializer)
              )
                found.push(`${where(prop)} ${name}({ ${prop.getText()} })`);
    }
    // item.text = '...' / item.tooltip = '...' on a status bar item.
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      /^(text|tooltip)$/.test(node.left.name.text) &&
      isWords(node.right)
    )
      found.push(`${where(node)} ${node.getText()}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('runtime words in the l10n bundles', function () {
  this.timeout(240_000); // reads every source file with the extractor: minutes on a busy machine
  const english = readBundle('bundle.l10n.json');

  it('every l10n.t message of src/ is in l10n/bundle.l10n.json, and the bundle has no stale key', async () => {
    const files = tsFiles(SRC)
      .map((file) => ({ file, contents: fs.readFileSync(file, 'utf8') }))
      .filter((f) => f.contents.includes('@vscode/l10n'));
    assert.ok(files.length > 10, `only ${files.length} files use @vscode/l10n`);
    const extracted = await getL10nJson(files.map((f) => ({ contents: f.contents, extension: '.ts' })));
    const missing = Object.keys(extracted).filter((k) => !(k in english));
    assert.deepEqual(missing, [], 'messages not in l10n/bundle.l10n.json: run `npm run l10n`, then translate them');
    const stale = Object.keys(english).filter((k) => !(k in extracted));
    assert.deepEqual(stale, [], 'keys no l10n.t uses any more: run `npm run l10n`');
  });

  it('has a translation bundle', () => {
    assert.ok(LOCALES.includes('zh-cn'), `locales: ${LOCALES.join(', ')}`);
  });

  for (const locale of LOCALES) {
    describe(`bundle.l10n.${locale}.json`, () => {
      const translated = readBundle(`bundle.l10n.${locale}.json`);

      it('translates every key of the English bundle, and only those', () => {
        assert.deepEqual(
          Object.keys(english).filter((k) => !(k in translated)),
          [],
          'keys without a translation',
        );
        assert.deepEqual(
          Object.keys(translated).filter((k) => !(k in english)),
          [],
          'translations of keys the English bundle does not have',
        );
      });

      it('keeps the placeholders, the `backquoted` names and the URLs of each English message', () => {
        const broken = Object.entries(translated).flatMap(([key, value]) => {
          const want = keptParts(key);
          const got = keptParts(message(value));
          return JSON.stringify(want) === JSON.stringify(got)
            ? []
            : [
                `${JSON.stringify(key)} → ${JSON.stringify(message(value))}: ${JSON.stringify(want)} ≠ ${JSON.stringify(got)}`,
              ];
        });
        assert.deepEqual(broken, []);
      });

      it('is not the English left in place', () => {
        const same = Object.entries(translated).filter(([k, v]) => k === message(v) && /[a-z]{3}/i.test(k));
        assert.ok(same.length < Object.keys(english).length / 20, `untranslated: ${same.map(([k]) => k).join(' | ')}`);
      });
    });
  }

  it('the checks above can fail: a lost placeholder, a changed `name`, a URL', () => {
    assert.notDeepEqual(keptParts('Restart {0} on {1}?'), keptParts('重启 {0}？'));
    assert.notDeepEqual(keptParts('run `kimi-service wait`'), keptParts('运行 `kimi-service 等待`'));
    assert.notDeepEqual(keptParts('see https://example.com/a'), keptParts('见网站'));
    assert.deepEqual(keptParts('Restart {0} on {1}?'), keptParts('重启 {1} 上的 {0}？'));
  });

  it('the VS Code front writes no notification, picker title or status bar text as a bare literal', () => {
    const found = tsFiles(path.join(SRC, 'fronts', 'vscode')).flatMap((file) =>
      bareLiterals(file, fs.readFileSync(file, 'utf8')),
    );
    assert.deepEqual(found, [], 'wrap these in l10n.t(...) (import * as l10n from "@vscode/l10n")');
  });

  it('the literal check finds a bare notification, a template, a title and a status bar text', () => {
    const code = [
      "vscode.window.showErrorMessage('Kimi: broken');",
      'vscode.window.showWarningMessage(`Kimi on ${name}`, l10n.t("Ok"));',
      "vscode.window.showQuickPick(items, { title: 'Pick one' });",
      "item.text = '$(check) Kimi: ready';",
      "vscode.window.showInformationMessage(l10n.t('Kimi: fine {0}', x), button);",
    ].join('\n');
    assert.equal(bareLiterals('x.ts', code).length, 4, bareLiterals('x.ts', code).join('\n'));
  });
});
