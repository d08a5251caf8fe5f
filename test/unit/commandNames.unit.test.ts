/**
 * No file below the fronts names a VS Code command: the core marks a hint by its kind
 * (util/hintMark.ts) and each front words it (present/hints.ts). A command is one of package.json's
 * contributes.commands, by its id or its palette title; `kimiService.<setting>` keys are settings,
 * the same in every front, and stay.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
/** Where a command may be named: the fronts, and present/ (each front's words). */
const ALLOWED = [path.join(SRC, 'fronts'), path.join(SRC, 'present'), path.join(SRC, 'extension.ts')];

interface Command {
  readonly id: string;
  readonly title: string;
}

function commands(): Command[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { commands: { command: string; title: string }[] };
  };
  const nls = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.json'), 'utf8')) as Record<string, string>;
  return manifest.contributes.commands.map((c) => ({
    id: c.command,
    title: /^%.*%$/.test(c.title) ? (nls[c.title.slice(1, -1)] ?? c.title) : c.title,
  }));
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (ALLOWED.some((allowed) => file === allowed)) return [];
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** The text of every string literal and template part of a file (comments are not text a user reads). */
function literals(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node))
      found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** What in `literal` names a command: its id, or its title as the palette shows it or quoted. */
function commandNamed(literal: string, all: readonly Command[]): string | undefined {
  for (const { id, title } of all) {
    if (new RegExp(`${id.replace(/\./g, '\\.')}(?![\\w.])`).test(literal)) return id;
    if (literal.includes(`Kimi Service: ${title}`) || literal.includes(`"${title}"`)) return title;
  }
  return undefined;
}

describe('no VS Code command below the fronts', function () {
  // It parses every file of src/: a guard against a hang, not a measure (10 s at load 25).
  this.timeout(60_000);
  const all = commands();

  it('the check sees an id, a palette title and a quoted title, and lets settings and comments be', () => {
    assert.equal(commandNamed('Run "Kimi Service: Stop watching" first.', all), 'Stop watching');
    assert.equal(commandNamed('then run "Stop watching"', all), 'Stop watching');
    assert.equal(commandNamed('executeCommand kimiService.copySudoersRule', all), 'kimiService.copySudoersRule');
    assert.equal(commandNamed('kimiService.servers: the name "a" is used twice.', all), undefined);
    assert.equal(commandNamed('kimiService.hostKeyPolicy', all), undefined);
    assert.deepEqual(literals('x.ts', '// "Kimi Service: Add server"\nconst a = `x ${1} "Show log" y`;'), [
      'x ',
      ' "Show log" y',
    ]);
  });

  it('no string in src/ outside fronts/ and present/ names a contributed command', () => {
    const files = sourceFiles(SRC);
    assert.ok(files.length > 100, `${files.length} files`);
    const found = files.flatMap((file) =>
      literals(file, fs.readFileSync(file, 'utf8')).flatMap((literal) => {
        const named = commandNamed(literal, all);
        return named ? [`${path.relative(ROOT, file)}: ${named} in ${JSON.stringify(literal.slice(0, 120))}`] : [];
      }),
    );
    assert.deepEqual(found, []);
  });
});
