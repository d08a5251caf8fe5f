/**
 * `npx tsx scripts/lm-tools.ts`: writes package.json's contributes.languageModelTools from
 * src/agent (the definition of the five tools), and the English of their picker texts into
 * package.nls.json (translations are kept by hand); `--check` only says whether both are up to
 * date (exit 1 if not). test/unit/agentTools.unit.test.ts checks the same.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { languageModelToolTexts, languageModelTools } from '../src/agent/lmContribution';

const file = path.join(__dirname, '..', 'package.json');
const nlsFile = path.join(__dirname, '..', 'package.nls.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { contributes: Record<string, unknown> };
const nls = JSON.parse(fs.readFileSync(nlsFile, 'utf8')) as Record<string, string>;
const wanted = languageModelTools();
const texts = languageModelToolTexts();
const same =
  JSON.stringify(pkg.contributes.languageModelTools) === JSON.stringify(wanted) &&
  Object.entries(texts).every(([key, text]) => nls[key] === text);
if (process.argv.includes('--check')) {
  process.stdout.write(
    same
      ? 'package.json languageModelTools: up to date\n'
      : 'package.json languageModelTools: out of date: run npx tsx scripts/lm-tools.ts\n',
  );
  process.exit(same ? 0 : 1);
}
pkg.contributes.languageModelTools = wanted;
fs.writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
fs.writeFileSync(nlsFile, `${JSON.stringify({ ...nls, ...texts }, null, 2)}\n`);
process.stdout.write(
  same ? 'package.json languageModelTools: unchanged\n' : 'package.json languageModelTools: written\n',
);
