// ETA benchmark: `npm run bench:eta -- [--first N] [--later N] [--hosts-per-case K] [--parallel P]
//   [--cases cold,jit,...] [--label NAME] [--dry] [--render out/bench-eta-NAME.json --minutes M --commit TEXT]`
//
// Each case is one load shape of the simulated host (docs/load-shapes.md), time-compressed
// (scripts/benchEta/cases.ts: the real logs' seconds x 0.12). For each case K simulated hosts
// (real sshd, systemd stand-ins, SGLang simulator) each run N/K first loads (no history: a new
// LoadInsights each time) and then N/K later loads (this host's history), P hosts at a time.
// Every load goes through the extension's own path: LoadInsights.forecast (ExecStart, fincore
// over SSH) -> prior -> ServerSession/LoadWatcher over the SSH transport -> LoadInsights.record,
// and the status bar's text (statusText of fronts/vscode/status/statusBarText.ts, which uses visibleEta and
// formatEta) is read every second against the time really left (the journal's ready line).
//
// Writes its rows into the one table of BENCHMARKS.md's section "ETA accuracy" (replacing the rows
// of the same case, loads and scale; the others are kept), and the raw samples to
// out/bench-eta-LABEL.json (`--label` names only that file, default "current").
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CASES, COLD_MBPS, SCALE, SHARDS, SHARD_BYTES, WARM_MBPS, type CaseSpec } from './benchEta/cases';
import { runUnit, type LoadResult } from './benchEta/runUnit';
import { rowOf, table, targetsLine, verdicts, type Row } from './benchEta/report';
import { BENCHMARKS_INTRO, gitHead, replaceSection, sectionOf } from './benchDoc';

const ETA_HEADING = '## ETA accuracy';
const REPO_ROOT = path.resolve(__dirname, '..');

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const num = (name: string, def: number) => Number(opt(name) ?? def);

const FIRST = num('first', 10);
const LATER = num('later', 10);
const PER_CASE = num('hosts-per-case', 2);
const PARALLEL = num('parallel', 14);
const LABEL = opt('label') ?? 'current';
const SELECTED: CaseSpec[] = (() => {
  const names = opt('cases')?.split(',').filter(Boolean);
  if (!names) return [...CASES];
  for (const n of names)
    if (!CASES.some((c) => c.name === n)) throw new Error(`unknown case ${n} (${CASES.map((c) => c.name).join(', ')})`);
  return CASES.filter((c) => names.includes(c.name));
})();

/** Splits n into k near-equal parts. */
const split = (n: number, k: number) => Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));

async function pool<T>(jobs: (() => Promise<T>)[], size: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, jobs.length) }, worker));
  return out;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const jobs: (() => Promise<LoadResult[]>)[] = [];
  const firsts = split(FIRST, PER_CASE);
  const laters = split(LATER, PER_CASE);
  const failures: string[] = [];
  for (const spec of SELECTED)
    for (let k = 0; k < PER_CASE; k++) {
      const failed: string[] = [];
      jobs.push(async () => {
        const r = await runUnit(spec, firsts[k]!, laters[k]!, (l) => console.log(l), failed);
        failures.push(...failed.map((f) => `${spec.name} (host ${k + 1}): ${f}`));
        return r;
      });
    }
  console.log(
    `ETA benchmark: ${SELECTED.length} cases x (${FIRST} first + ${LATER} later loads) on ${jobs.length} simulated hosts, ${PARALLEL} at a time`,
  );
  const from = opt('render');
  // --render FILE: the table of a run kept in out/ (its raw samples), without running it again
  const results: LoadResult[] = from
    ? (JSON.parse(fs.readFileSync(from, 'utf8')) as LoadResult[])
    : (await pool(jobs, PARALLEL)).flat();
  const minutes = from ? Number(opt('minutes') ?? 0) : (Date.now() - t0) / 60_000;
  const rows: Row[] = [];
  for (const spec of SELECTED)
    for (const kind of ['first', 'later'] as const) {
      const r = results.filter((x) => x.case === spec.name && x.kind === kind);
      if (r.length) rows.push(rowOf(r));
    }
  const text = table(rows);
  const checks = verdicts(rows);
  if (failures.length) checks.push(`loads not measured (did not get to ready): ${failures.join('; ')}`);
  console.log(`\n${text}\n\n${checks.join('\n')}\n\n${minutes.toFixed(1)} min`);

  fs.mkdirSync(path.join(REPO_ROOT, 'out'), { recursive: true });
  if (!from) fs.writeFileSync(path.join(REPO_ROOT, 'out', `bench-eta-${LABEL}.json`), JSON.stringify(results));
  if (process.argv.includes('--dry')) return;

  const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const commit = (opt('commit') ?? gitHead()).split(' ').pop()!;
  const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), shared with other jobs${from ? '' : ` (load average ${os.loadavg()[0]!.toFixed(1)} at the end)`}, Node ${process.version}`;
  const command = `${SCALE !== 0.12 ? `ETA_BENCH_SCALE=${SCALE} ` : ''}npm run bench:eta -- --first ${FIRST} --later ${LATER} --hosts-per-case ${PER_CASE} --parallel ${PARALLEL}${opt('cases') ? ` --cases ${opt('cases')}` : ''} --label ${LABEL}`;
  const run = `${commit}, ${date.slice(5)}`;
  const fresh = currentRows(text, `x${SCALE}`, run, checks);
  const out = path.join(REPO_ROOT, 'BENCHMARKS.md');
  const doc = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : BENCHMARKS_INTRO;
  const old = sectionOf(doc, ETA_HEADING) ?? '';
  // One current table: this run's rows replace the rows of the same case, loads and scale.
  const key = (row: string) =>
    row
      .split(' | ')
      .slice(0, 3)
      .join(' | ')
      .replace(/ \d+ \|/, ' |');
  const freshKeys = new Set(fresh.map(key));
  const keptRows = old
    .split('\n')
    .filter((l) => /^\| [a-zA-Z]+ \| (?:first|later) \d+ \| x[\d.]+ \|/.test(l) && !freshKeys.has(key(l)));
  const order = (row: string) => {
    const [c, loads, scale] = row.slice(2).split(' | ');
    const i = CASES.findIndex((x) => x.name === c);
    return `${String(i < 0 ? 99 : i).padStart(2, '0')} ${scale} ${loads!.startsWith('first') ? 0 : 1}`;
  };
  const tableRows = [...keptRows, ...fresh].sort((x, y) => order(x).localeCompare(order(y)));
  const runLine = `- ${run} UTC: ${machine}; time scale x ${SCALE} (150 s of post-shard processing or JIT compile -> ${(150 * SCALE).toFixed(0)} s); \`${command}\` (${minutes.toFixed(1)} min).`;
  const keptRuns = old
    .split('\n')
    .filter((l) => /^- \S+, \d\d-\d\d \d\d:\d\d UTC: /.test(l) && l !== runLine)
    .filter((l) => tableRows.some((r) => r.includes(` | ${l.slice(2, l.indexOf(' UTC: '))} | `)));
  const section = [
    intro(),
    [HEADER, SEPARATOR, ...tableRows].join('\n'),
    targetsLine().replace(/:$/, '.'),
    ['Runs (the "measured" column):', '', ...keptRuns, runLine].join('\n'),
  ].join('\n\n');
  fs.writeFileSync(out, replaceSection(doc, ETA_HEADING, section));
}

const HEADER =
  '| case | loads | scale | measured | load s | \\|err\\| 25 % med / worst | 50 % | 75 % | largest jump in 10 s (same phase) | ETA in every phase | s with ETA | truth in the range shown | breakdown \\|err\\| weights / after (truth) | targets |';
const SEPARATOR = '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';

/** report.table's rows with the run's scale and stamp after the loads, and each row's verdict at the end. */
function currentRows(text: string, scale: string, run: string, checks: readonly string[]): string[] {
  return text
    .split('\n')
    .slice(2)
    .map((line, i) => {
      const cells = line.split(' | ');
      const verdict = (checks[i] ?? '').replace(/^[^:]*: /, '');
      return [...cells.slice(0, 2), scale, run, ...cells.slice(2)].join(' | ').replace(/ \|$/, ` | ${verdict} |`);
    });
}

function intro(): string {
  return [
    ETA_HEADING,
    '',
    'What the status bar says is left, against what was really left, over the load shapes of [docs/load-shapes.md](docs/load-shapes.md) ' +
      "(`npm run bench:eta`, scripts/bench-eta.ts). Each load goes through the extension's own path over a real SSH connection to a simulated host: " +
      "the restart forecast (ExecStart, page-cache residency with fincore), the watcher, the load's record into the history; the status bar's text " +
      '(`statusText`, which shows `visibleEta`/`formatEta`) is read every second. ' +
      "**First** loads have no history (a new server); **later** loads have this server's history of its previous loads of the same shape. " +
      "One current table: a run replaces the rows of its cases, loads and scale and keeps the others; **measured** gives the commit and the date (UTC) of each row's run, the list under the table its machine and command; earlier runs are in git's history of this file.",
    '',
    "Time-compressed by each run's scale (the **scale** column; `ETA_BENCH_SCALE`, default 0.12): the real logs' seconds of the quiet steps times it, " +
      `${SHARDS} shards x ${SHARD_BYTES / 2 ** 20} MiB read at ${COLD_MBPS} MB/s cold, ${WARM_MBPS} MB/s from the page cache (~${Math.round((SHARDS * SHARD_BYTES) / 1e6 / COLD_MBPS)} s of weights), ` +
      'the watcher polling every second (the extension polls every 2 s by default); several hosts run in parallel (the command says how many), so the loads share the CPU. ' +
      "The estimator's own windows are not scaled (no ETA in the weights' first seconds until 4 s of samples and 2 % of the bytes give a rate, rates over 10-30 s, the bound's 10 s): at 25 % of a 25-s load that is a real limit of the bench, which a 10-minute load would not meet; at scale 0.12 a quiet step of 150 s lasts 18 s and falls after half of the load, where a first load cannot foresee it (at scale 1 half of the load falls inside it).",
    '',
    '- |err| = |shown - true left| / true left, at 25, 50 and 75 % of the load (restart to the ready line): median, and the worst (signed: + said too much time); "none" = loads with no ETA on screen then.',
    '- largest jump: the shown time against what an earlier reading implied for then (its time less the seconds gone), both floored at 5 s (a late poll and the rounding move a few seconds), within 10 s and one watcher phase (a quiet step the watcher names, e.g. a DeepGEMM compile inside graph capture, counts as a phase of its own).',
    '- ETA in every phase: loads in which each phase the watcher went through showed an ETA at least once before ready; "s with ETA" = share of the 1-s readings that had one.',
    '- truth in the range shown: share of the readings with an ETA whose range ("4-6m left"; one number is a range of itself) held the time really left, with 1 s of slack; the |err| columns take a range\'s middle.',
    "- breakdown: what the history keeps of the load (recordOf: the weights phase, and from its end to ready) against the journal's times (Load weight begin/end, ready line), median |difference|.",
  ].join('\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
