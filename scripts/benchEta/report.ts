/** The ETA benchmark's table: per case, first loads and later loads apart. Pure. */
import { coverage, errorAt, inRangeShare, largestJump, median, pct, truthPhases, worst, type Jump } from './measure';
import type { LoadResult } from './runUnit';
import { ETA_TARGETS, type EtaLimit } from '../../test/util/etaTargets';

export interface Row {
  readonly case: string;
  readonly kind: 'first' | 'later';
  readonly loads: number;
  /** fraction -> [median |error|, worst signed error, loads without an ETA then] */
  readonly err: Record<25 | 50 | 75, { median: number | undefined; worst: number | undefined; missing: number }>;
  readonly jump: Jump | undefined;
  /** Loads with an ETA in every phase the watcher went through before ready. */
  readonly everyPhase: number;
  /** Phases that had no ETA in some load, with how many loads. */
  readonly missingPhases: Record<string, number>;
  /** Share of the 1-s samples before ready with an ETA. */
  readonly shownShare: number;
  /** Share of the readings with an ETA whose range held the true time left. */
  readonly inRange: number;
  /** Median |watcher - truth| of the weights phase and of everything after it, s; and the truth's medians. */
  readonly breakdown: { weightsErr?: number; afterErr?: number; weightsTrue?: number; afterTrue?: number };
  readonly meanLoadS: number;
}

export function rowOf(results: readonly LoadResult[]): Row {
  const r0 = results[0]!;
  const err = {} as Row['err'];
  for (const f of [25, 50, 75] as const) {
    const v = results.map((r) => errorAt(r.samples, r.truth, f / 100));
    const got = v.filter((x): x is number => x !== undefined);
    err[f] = { median: median(got.map(Math.abs)), worst: worst(got), missing: v.length - got.length };
  }
  let jump: Jump | undefined;
  let everyPhase = 0;
  const missingPhases: Record<string, number> = {};
  let samples = 0;
  let shown = 0;
  let held = 0;
  let withEta = 0;
  const wErr: number[] = [];
  const aErr: number[] = [];
  const wTrue: number[] = [];
  const aTrue: number[] = [];
  for (const r of results) {
    const j = largestJump(r.samples);
    if (j && (!jump || j.ratio > jump.ratio)) jump = j;
    const cov = coverage(r.samples, r.truth);
    let all = true;
    for (const [phase, c] of cov) {
      samples += c.samples;
      shown += c.shown;
      if (c.shown === 0) {
        all = false;
        missingPhases[phase] = (missingPhases[phase] ?? 0) + 1;
      }
    }
    if (all) everyPhase++;
    const range = inRangeShare(r.samples, r.truth);
    held += range.inRange;
    withEta += range.shown;
    const t = truthPhases(r.truth);
    const weights = t['loading weights'];
    if (weights !== undefined && r.phaseMs['loading weights'] !== undefined) {
      wErr.push(Math.abs(r.phaseMs['loading weights'] - weights) / 1000);
      wTrue.push(weights / 1000);
    }
    if (r.truth.weightsEnd !== undefined && r.afterWeightsMs !== undefined) {
      const after = r.truth.ready - r.truth.weightsEnd;
      aErr.push(Math.abs(r.afterWeightsMs - after) / 1000);
      aTrue.push(after / 1000);
    }
  }
  const opt = (k: string, v: number | undefined) => (v === undefined ? {} : { [k]: v });
  return {
    case: r0.case,
    kind: r0.kind,
    loads: results.length,
    err,
    jump,
    everyPhase,
    missingPhases,
    shownShare: samples ? shown / samples : 0,
    inRange: withEta ? held / withEta : 0,
    breakdown: {
      ...opt('weightsErr', median(wErr)),
      ...opt('afterErr', median(aErr)),
      ...opt('weightsTrue', median(wTrue)),
      ...opt('afterTrue', median(aTrue)),
    },
    meanLoadS: results.reduce((n, r) => n + (r.truth.ready - r.truth.start), 0) / results.length / 1000,
  };
}

const s1 = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(1));

function errCell(e: Row['err'][25]): string {
  return `${pct(e.median).replace('+', '')} / ${pct(e.worst)}${e.missing ? ` (${e.missing} none)` : ''}`;
}

/** The markdown table of all rows. */
export function table(rows: readonly Row[]): string {
  const head =
    '| case | loads | load s | \\|err\\| 25 % med / worst | 50 % | 75 % | largest jump in 10 s (same phase) | ETA in every phase | s with ETA | truth in the range shown | breakdown \\|err\\| weights / after (truth) |';
  const sep = '|---|---|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map((r) => {
    const jump = r.jump ? `${r.jump.ratio.toFixed(2)}x (${r.jump.from} -> ${r.jump.to}, ${r.jump.phase ?? '-'})` : '-';
    const missing = Object.entries(r.missingPhases)
      .map(([p, n]) => `${p} ${n}`)
      .join(', ');
    const b = r.breakdown;
    return `| ${r.case} | ${r.kind} ${r.loads} | ${r.meanLoadS.toFixed(0)} | ${errCell(r.err[25])} | ${errCell(r.err[50])} | ${errCell(r.err[75])} | ${jump} | ${r.everyPhase}/${r.loads}${missing ? ` (none in: ${missing})` : ''} | ${(r.shownShare * 100).toFixed(0)}% | ${(r.inRange * 100).toFixed(0)}% | ${s1(b.weightsErr)} / ${s1(b.afterErr)} s (${s1(b.weightsTrue)} / ${s1(b.afterTrue)} s) |`;
  });
  return [head, sep, ...lines].join('\n');
}

/** The targets' line above the verdicts (test/util/etaTargets.ts: the values and the date each was set). */
export function targetsLine(): string {
  const t = ETA_TARGETS;
  const p = (l: EtaLimit) => `${Math.round(l.value * 100)} %`;
  return `Targets (test/util/etaTargets.ts, set ${t.firstMedian.set}; at half of the load: first loads median <= ${p(t.firstMedian)} and worst <= ${p(t.firstWorst)}, later loads median <= ${p(t.laterMedian)}; no jump above ${t.maxJump.value}x within 10 s in one phase; an ETA in every phase):`;
}

/** The issue's targets, per row: which are met. */
export function verdicts(rows: readonly Row[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const e = r.err[50];
    const misses: string[] = [];
    const t = ETA_TARGETS;
    const share = (l: EtaLimit) => `${Math.round(l.value * 100)} %`;
    if (r.kind === 'first') {
      if (e.median === undefined || e.median > t.firstMedian.value)
        misses.push(`median ${pct(e.median).replace('+', '')} > ${share(t.firstMedian)}`);
      if (e.worst === undefined || Math.abs(e.worst) > t.firstWorst.value)
        misses.push(`worst ${pct(e.worst)} beyond ${share(t.firstWorst)}`);
    } else if (e.median === undefined || e.median > t.laterMedian.value)
      misses.push(`median ${pct(e.median).replace('+', '')} > ${share(t.laterMedian)}`);
    if (e.missing) misses.push(`${e.missing} loads without an ETA at half`);
    if (r.jump && r.jump.ratio > t.maxJump.value) misses.push(`jump ${r.jump.ratio.toFixed(2)}x`);
    if (r.everyPhase < r.loads) misses.push(`ETA missing in a phase in ${r.loads - r.everyPhase} loads`);
    out.push(`${r.case} ${r.kind}: ${misses.length ? `NOT met (${misses.join('; ')})` : 'met'}`);
  }
  return out;
}
