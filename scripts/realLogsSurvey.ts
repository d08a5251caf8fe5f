/**
 * Every published log of test/fixtures/real-logs replayed end to end (the simulated GPU host
 * through the real sshd, watched by the extension's own session: test/integration/realLogReplay.ts),
 * one after the other, judged as the integration test judges them: the verdict, the cause shown
 * and false stalls. Prints the table per class, then the unit suite's (scripts/realLogsTable.ts)
 * for comparison, and writes both to docs/real-logs.md under "## Measured end to end" (replacing
 * that section). Several minutes.
 *
 *   npx tsx scripts/realLogsSurvey.ts [--only ID,ID] [--no-write]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  byClass,
  headers,
  ReplayHosts,
  STALL_HOLD_MS,
  STALL_MS,
  TIMING,
  type ReplayJudgement,
} from '../test/integration/realLogReplay';
import { heldOutIds, splitOf } from '../test/util/heldOut';
import { unitTable } from './realLogsTable';

const DOC = path.join(__dirname, '..', 'docs', 'real-logs.md');
const HEADING = '## Measured end to end';
/** A fixture whose replay and judgement take longer than this is judged wrong and the survey goes on. */
const FIXTURE_BUDGET_MS = 120_000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: over ${ms / 1000} s`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const frac = (n: number, of: number) => (of ? `${n}/${of}` : '-');

function classTable(results: readonly ReplayJudgement[]): string[] {
  const out = ['| class | logs | verdict right | cause shown | false stalls |', '|---|---|---|---|---|'];
  const row = (name: string, list: readonly ReplayJudgement[]) => {
    const failed = list.filter((r) => r.header.outcome === 'failed');
    const moving = list.filter((r) => r.header.outcome !== 'hang');
    const stalls = moving.filter((r) => r.falseStalls.length).length;
    return `| ${name} | ${list.length} | ${frac(list.filter((r) => !r.verdict.length).length, list.length)} | ${frac(failed.filter((r) => !r.cause.length).length, failed.length)} | ${moving.length ? `${stalls} of ${moving.length}` : '-'} |`;
  };
  const classes = new Map<string, ReplayJudgement[]>();
  for (const r of results) classes.set(r.header.class, [...(classes.get(r.header.class) ?? []), r]);
  for (const [name, list] of [...classes].sort(([a], [b]) => a.localeCompare(b))) out.push(row(name, list));
  out.push(row('**all**', results).replace(/^\| \*\*all\*\* \| (\d+)/, '| **all** | **$1**'));
  // The held-out part (test/util/heldOut.ts) scored on its own: the log rules were never tuned to it.
  const held = heldOutIds();
  for (const split of ['tuning', 'held out'] as const)
    out.push(
      row(
        `**${split}**`,
        results.filter((r) => splitOf(r.header.id, held) === split),
      ),
    );
  return out;
}

function problems(results: readonly ReplayJudgement[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    for (const [what, list] of [
      ['verdict', r.verdict],
      ['cause', r.cause],
      ['false stall', r.falseStalls],
    ] as const) {
      for (const p of list) out.push(`- ${r.header.id} (${r.header.class}), ${what}: ${p.split('\n')[0]}`);
    }
  }
  return out;
}

/** Words into lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function section(results: readonly ReplayJudgement[], seconds: number, date: string): string {
  const wrong = problems(results);
  const prose = [
    'Every fixture replayed as a live server (docs/replay.md) on the simulated GPU host, through the real sshd, and watched by',
    `the extension's own session (\`npx tsx scripts/realLogsSurvey.ts\`, ${date}: ${results.length} logs in ${Math.round(seconds)} s, one after the other),`,
    'judged by `test/integration/realLogReplay.ts` as `test/integration/realLogs.int.test.ts` judges one log per class.',
    `Replayed at ${TIMING.speed}x with no silence longer than ${TIMING.maxGapMs / 1000} s, and \`stalled\` after ${STALL_MS / 1000} s without a move`,
    `(${(STALL_MS / 1000) * TIMING.speed} s of the log's own clock). A single long silence of a log is ${TIMING.maxGapMs / 1000} s here and can never be a stall`,
    'on its own, so **false stalls** counts the ready and failed logs during which `stalled` was shown at all: a move of',
    'the log (a phase or progress line, HTTP opening, bytes read, GPU memory) was not counted as one. A hang is right when',
    `it becomes \`stalled\` and stays so (${STALL_HOLD_MS / 1000} s watched, the process alive); a failure's cause is right when the`,
    "header's `cause` is in the line named as the cause and no line that only echoes the end comes before it in the",
    'notification; a ready log is right when it is ready not before its ready line and stays up. **held out**: the',
    'fixtures of test/fixtures/real-logs/HELD-OUT.txt (a fixed hash of the id picks them), to which the log rules are',
    'not to be tuned; **tuning**: the others. The split was drawn on 2026-12-02, after the rules had been written against',
    'the whole corpus: the held-out score says something about the changes made from then on, not about those before.',
  ].join(' ');
  return [
    HEADING,
    '',
    ...wrap(prose, 100),
    '',
    ...classTable(results),
    '',
    wrong.length ? 'Wrong:' : 'Nothing was wrong.',
    ...(wrong.length ? ['', ...wrong] : []),
    '',
    "The unit suite (`npx tsx scripts/realLogsTable.ts`: every log's lines through the real reader and reducer, no host), for comparison:",
    '',
    ...unitTable(),
    '',
  ].join('\n');
}

function writeSection(text: string): void {
  const doc = fs.readFileSync(DOC, 'utf8');
  const at = doc.indexOf(`\n${HEADING}\n`);
  let next = -1;
  if (at >= 0) {
    const m = /\n## /.exec(doc.slice(at + HEADING.length + 2));
    next = m ? at + HEADING.length + 2 + m.index : -1;
  }
  const before = at >= 0 ? doc.slice(0, at) : doc.replace(/\n*$/, '');
  const after = next >= 0 ? doc.slice(next) : '';
  fs.writeFileSync(DOC, `${before}\n\n${text}${after ? after : ''}`.replace(/\n{3,}/g, '\n\n'));
}

async function main(): Promise<void> {
  const only = arg('--only')?.split(',');
  const picked = headers()
    .filter((h) => !only || only.includes(h.id))
    .sort(byClass);
  const hosts = new ReplayHosts();
  const stop = () => void hosts.stop().finally(() => process.exit(130));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const started = Date.now();
  const results: ReplayJudgement[] = [];
  try {
    await hosts.start(picked.map((h) => h.engine));
    for (const [i, h] of picked.entries()) {
      let r: ReplayJudgement;
      try {
        r = await within(FIXTURE_BUDGET_MS, h.id, hosts.judge(h));
      } catch (e) {
        const message = (e as Error).message;
        r = {
          header: h,
          verdict: [message],
          cause: h.outcome === 'failed' ? [message] : [],
          falseStalls: [],
          shown: '',
          ms: FIXTURE_BUDGET_MS,
        };
      }
      results.push(r);
      const bad = [...r.verdict, ...r.cause, ...r.falseStalls];
      console.error(
        `${String(i + 1).padStart(2)}/${picked.length} ${h.id} (${h.outcome}) ${(r.ms / 1000).toFixed(1)} s ${bad.length ? `WRONG: ${bad.map((b) => b.split('\n')[0]).join(' | ')}` : 'right'}`,
      );
    }
  } finally {
    await hosts.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  const text = section(results, seconds, new Date().toISOString().slice(0, 10));
  console.log(text);
  if (!process.argv.includes('--no-write') && !only) writeSection(text);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
