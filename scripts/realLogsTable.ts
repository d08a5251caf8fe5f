/**
 * The table of the real-logs corpus (test/fixtures/real-logs): per fixture, whether the verdict
 * and the cause shown are right (test/util/realLogJudge, as the unit suite judges them), then per
 * class. `npx tsx scripts/realLogsTable.ts [--fixtures]` prints Markdown.
 */
import { judgeFixture } from '../test/util/realLogJudge';
import { loadFixtures } from '../test/util/replayLog';

const rows = loadFixtures().map((f) => ({ f, j: judgeFixture(f) }));
const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s).replace(/\|/g, '\\|');

if (process.argv.includes('--fixtures')) {
  console.log('| id | class | outcome | verdict right | cause shown | what the user sees |');
  console.log('|---|---|---|---|---|---|');
  for (const { f, j } of rows) {
    const failed = f.header.outcome === 'failed';
    const shown = failed ? j.shown.replace(/^Kimi on gpu1 failed: /, '') : j.shown;
    console.log(`| ${f.header.id} | ${f.header.class} | ${f.header.outcome} | ${yes(j.verdict.length === 0)} | ${failed ? yes(j.cause.length === 0) : '-'} | ${cut(shown, 160)} |`);
  }
  console.log('');
}

const classes = new Map<string, typeof rows>();
for (const row of rows) classes.set(row.f.header.class, [...(classes.get(row.f.header.class) ?? []), row]);
console.log('| class | logs | verdict right | cause shown |');
console.log('|---|---|---|---|');
for (const [name, list] of [...classes].sort(([a], [b]) => a.localeCompare(b))) {
  const failures = list.filter((r) => r.f.header.outcome === 'failed');
  const causes = failures.length ? `${failures.filter((r) => r.j.cause.length === 0).length}/${failures.length}` : '-';
  console.log(`| ${name} | ${list.length} | ${list.filter((r) => r.j.verdict.length === 0).length}/${list.length} | ${causes} |`);
}
const failures = rows.filter((r) => r.f.header.outcome === 'failed');
console.log(`| **all** | ${rows.length} | ${rows.filter((r) => r.j.verdict.length === 0).length}/${rows.length} | ${failures.filter((r) => r.j.cause.length === 0).length}/${failures.length} |`);
