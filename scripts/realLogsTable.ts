/**
 * The table of the real-logs corpus (test/fixtures/real-logs): per fixture, whether the verdict
 * and the cause shown are right (test/util/realLogJudge, as the unit suite judges them), then per
 * class. `npx tsx scripts/realLogsTable.ts [--fixtures]` prints Markdown; unitTable() is also
 * printed by scripts/realLogsSurvey.ts next to the end-to-end figures.
 */
import { heldOutIds, splitOf } from '../test/util/heldOut';
import { judgeFixture } from '../test/util/realLogJudge';
import { loadFixtures } from '../test/util/replayLog';

const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s).replace(/\|/g, '\\|');

/** The corpus judged by the unit suite's judge: Markdown lines, per fixture (`fixtures`) then per class. */
export function unitTable(fixtures = false): string[] {
  const rows = loadFixtures().map((f) => ({ f, j: judgeFixture(f) }));
  const out: string[] = [];
  if (fixtures) {
    out.push(
      '| id | class | outcome | split | verdict right | cause shown | what the user sees |',
      '|---|---|---|---|---|---|---|',
    );
    for (const { f, j } of rows) {
      const failed = f.header.outcome === 'failed';
      const shown = failed ? j.shown.replace(/^Kimi on gpu1 failed: /, '') : j.shown;
      out.push(
        `| ${f.header.id} | ${f.header.class} | ${f.header.outcome} | ${splitOf(f.header.id)} | ${yes(j.verdict.length === 0)} | ${failed ? yes(j.cause.length === 0) : '-'} | ${cut(shown, 160)} |`,
      );
    }
    out.push('');
  }
  const classes = new Map<string, typeof rows>();
  for (const row of rows) classes.set(row.f.header.class, [...(classes.get(row.f.header.class) ?? []), row]);
  out.push('| class | logs | verdict right | cause shown |', '|---|---|---|---|');
  for (const [name, list] of [...classes].sort(([a], [b]) => a.localeCompare(b))) {
    const failures = list.filter((r) => r.f.header.outcome === 'failed');
    const causes = failures.length
      ? `${failures.filter((r) => r.j.cause.length === 0).length}/${failures.length}`
      : '-';
    out.push(
      `| ${name} | ${list.length} | ${list.filter((r) => r.j.verdict.length === 0).length}/${list.length} | ${causes} |`,
    );
  }
  const total = (name: string, list: typeof rows) => {
    const failures = list.filter((r) => r.f.header.outcome === 'failed');
    return `| ${name} | ${list.length} | ${list.filter((r) => r.j.verdict.length === 0).length}/${list.length} | ${failures.filter((r) => r.j.cause.length === 0).length}/${failures.length} |`;
  };
  out.push(total('**all**', rows));
  // The held-out part (test/util/heldOut.ts) scored on its own: the log rules were never tuned to it.
  const held = heldOutIds();
  for (const split of ['tuning', 'held out'] as const)
    out.push(
      total(
        `**${split}**`,
        rows.filter((r) => splitOf(r.f.header.id, held) === split),
      ),
    );
  return out;
}

if (require.main === module) console.log(unitTable(process.argv.includes('--fixtures')).join('\n'));
