/**
 * `npx tsx scripts/lm-tools.ts`: writes package.json's contributes.languageModelTools from
 * src/agent (the definition of the five tools); `--check` only says whether it is up to date
 * (exit 1 if not). test/unit/agentDefinition.unit.test.ts checks the same.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { languageModelTools } from '../src/agent/lmContribution';

const file = path.join(__dirname, '..', 'package.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { contributes: Record<string, unknown> };
const wanted = languageModelTools();
const same = JSON.stringify(pkg.contributes.languageModelTools) === JSON.stringify(wanted);
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
process.stdout.write(
  same ? 'package.json languageModelTools: unchanged\n' : 'package.json languageModelTools: written\n',
);
