import { strict as assert } from 'node:assert';
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { etaText, formatEta } from '../../src/present/etaText';
import { estimateLoad } from '../../src/monitor/eta/etaLoad';
import { etaPendingText, etaTooltip } from '../../src/present/etaTooltip';
import type { RawEta } from '../../src/monitor/eta/etaPlan';
import { dampEta, MAX_MOVE, type ShownEta } from '../../src/monitor/eta/etaDamp';
import type { ServiceStatus } from '../../src/target/target';
import { runCase, runForeseenCompile, SHAPES, type HarnessResult } from '../util/etaHarness';
import { VIRTUAL_LIMITS } from '../util/etaTargets';

const GB = 1e9;
const UNIT: ServiceStatus = {
  loadState: 'loaded',
  activeState: 'active',
  subState: 'running',
  mainPid: 7,
  nRestarts: 0,
  result: 'success',
  execMainStartedAt: 0,
  dropInPaths: [],
  needDaemonReload: false,
};

function run(signals: Signal[]): LoadState {
  return signals.reduce((s, sig) => reduce(s, sig), initialState(0));
}

function started(prior: Extract<Signal, { kind: 'prior' }>['prior']): LoadState {
  return run([
    { kind: 'prior', at: 0, prior },
    { kind: 'restartRequested', at: 0 },
    { kind: 'tiedToRun', at: 0, unit: UNIT },
  ]);
}

const shape = (name: string) => SHAPES.find((s) => s.name === name)!;
const results = new Map<string, { first: HarnessResult; second: HarnessResult }>();
const caseOf = (name: string) => {
  if (!results.has(name)) results.set(name, runCase(shape(name)));
  return results.get(name)!;
};
/** The virtual loads with no quiet step and no forecast to correct. */
const PLAIN_SHAPES = [
  'plain cold',
  'plain cold, no shard lines',
  'read rate halves midway',
  'warm from the page cache',
];
/** The case's first load (or second, with history) moved its ETA no more than the limit within 10 s inside a phase. */
const noJumpAbove = (name: string, load: 'first' | 'second'): void => {
  const run = caseOf(name)[load];
  assert.ok(run.maxJump <= VIRTUAL_LIMITS.maxJump.value, `${name}: ${run.maxJump} (${run.jumpAt})`);
};
const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

describe('eta wording: one formatter, ranges when unsure', () => {
  it('formats a range in one unit, or across units, and one number when both ends read the same', () => {
    assert.equal(formatEta(240_000, 360_000), '4-6m left');
    assert.equal(formatEta(40_000, 55_000), '40-55s left');
    assert.equal(formatEta(45_000, 120_000), '45s-2m left');
    assert.equal(formatEta(300_000, 310_000), '5m left');
    assert.equal(formatEta(42_000), '42s left');
  });
  it('etaText: a range only when the ends are far enough apart, and nothing once disproved', () => {
    assert.equal(etaText({ readyAt: 300_000, lowAt: 240_000, highAt: 360_000 }, 0), '4-6m left');
    assert.equal(etaText({ readyAt: 300_000, lowAt: 290_000, highAt: 310_000 }, 0), '5m left');
    assert.equal(etaText({ readyAt: 300_000 }, 0), '5m left');
    assert.equal(etaText({ readyAt: 1000, lowAt: 500, highAt: 2000 }, 20_000), undefined);
  });
});

describe('eta of the whole load: range when unsure', () => {
  it('a first load with no bytes read yet: a wide range from the defaults, and the tooltip says so', () => {
    let s = started({ totalBytes: 20 * GB, residentBytes: 0, loads: 0 });
    s = reduce(s, { kind: 'journal', at: 1000, event: { type: 'phase', phase: 'starting' }, text: 'x' });
    s = reduce(s, {
      kind: 'gpu',
      at: 1500,
      usedMiB: 100,
      totalMiB: 640_000,
      perGpu: Array.from({ length: 8 }, (_, index) => ({ index, usedMiB: 10, totalMiB: 80_000 })),
    });
    assert.ok(s.eta);
    assert.match(etaText(s.eta, 1500)!, /^\d+[sm]?( \d+s)?-\d+[sm]( \d+s)? left$/);
    assert.match(
      etaTooltip(s, s.eta, 1500),
      /^ETA: .* left, from defaults for a 20\.0 GB model on 8 GPUs \(no previous load\)$/,
    );
  });
  it("with this server's previous load, the tooltip names it, and the range narrows as the bytes are read", () => {
    const s = started({ totalBytes: 20 * GB, afterWeightsMs: 20_000, coldBps: 400e6, loads: 1 });
    const withPhase = reduce(s, { kind: 'journal', at: 500, event: { type: 'phase', phase: 'starting' }, text: 'x' });
    assert.match(etaTooltip(withPhase, withPhase.eta!, 500), /, from this server's previous load$/);
    const texts = caseOf('plain cold').second.texts.filter((t) => t.phase === 'loading weights');
    const ratio = (text: string | undefined): number => {
      const m = /^(\d+)(s|m)?-(\d+)(s|m) left$/.exec(text ?? '');
      if (!m) return 1;
      const low = Number(m[1]) * ((m[2] ?? m[4]) === 'm' ? 60 : 1);
      return (Number(m[3]) * (m[4] === 'm' ? 60 : 1)) / low;
    };
    const ratios = texts.map((t) => ratio(t.text));
    // early: a range (the rate not yet measured); late: within 40 % (45 % once the ends are rounded to seconds)
    assert.ok(/-/.test(texts[0]!.text ?? ''), `${texts.map((t) => t.text)}`);
    assert.ok(ratios[ratios.length - 1]! < 1.45, `${texts.map((t) => t.text)}`);
  });
});

describe('eta of the whole load: damping', () => {
  const raw = (midMs: number, key = 'loading weights/'): RawEta => ({
    midMs,
    lowMs: midMs * 0.9,
    highMs: midMs * 1.1,
    basis: 'bytes',
    source: 'defaults',
    key,
  });
  const shown = (at: number, left: number, keySince = 0): ShownEta => ({
    at,
    readyAt: at + left,
    lowAt: at + left * 0.9,
    highAt: at + left * 1.1,
    basis: 'bytes',
    key: 'loading weights/',
    keySince,
  });
  it(`moves by at most ${MAX_MOVE}x within 10 s against the countdown, up or down, small steps included`, () => {
    const prev = shown(20_000, 60_000);
    // (75 s: above what the bound allows, 70 s, yet within 1.4x of the range's upper end, 56 s then)
    const near = (midMs: number): RawEta => ({ ...raw(midMs), lowMs: 1_000 });
    const up = dampEta(prev, near(75_000), 30_000);
    assert.ok(Math.abs((up.readyAt - 30_000) / 50_000 - MAX_MOVE) < 1e-9);
    const [lowSide, highSide] = [up.readyAt - up.lowAt!, up.highAt! - up.readyAt];
    assert.ok(Math.abs(lowSide - highSide) < 1e-6, 'the range is centred on what is shown');
    assert.ok(highSide <= 0.75 * (up.readyAt - 30_000) + 1e-6, 'and at most 75 % of it either side');
    assert.ok(up.highAt! - 30_000 >= 75_000, 'the range holds what the evidence says');
    const down = dampEta(prev, { ...raw(1_000), highMs: 60_000 }, 30_000);
    assert.ok(Math.abs(50_000 / (down.readyAt - 30_000) - MAX_MOVE) < 1e-9);
    // many small steps do not compound past the bound (each reading of the last 10 s is an anchor)
    let e = prev;
    for (let t = 20_250; t <= 30_000; t += 250) e = dampEta(e, near(75_000 - (t - 20_250)), t);
    assert.ok((e.readyAt - 30_000) / 50_000 <= MAX_MOVE + 1e-9, `${(e.readyAt - 30_000) / 50_000}`);
    // the first seconds of a phase are bound too, and so is the first evidence replacing a forecast
    const fresh: ShownEta = { ...shown(20_000, 60_000, 19_000), key: 'loading weights//forecast' };
    assert.ok(dampEta(fresh, near(90_000), 21_000).readyAt - 21_000 <= 59_000 * MAX_MOVE);
  });
  it('the evidence beats the forecast: far above the range shown, the estimate goes there at once, the range holds it', () => {
    const evidence = (t: number): RawEta => ({ ...raw(600_000 - (t - 30_000)), lowMs: 400_000 - (t - 30_000) });
    let e = dampEta(shown(20_000, 60_000), evidence(30_000), 30_000);
    assert.equal(e.readyAt - 30_000, 600_000);
    assert.ok(e.lowAt! - 30_000 <= 600_000 && e.highAt! - 30_000 >= 600_000);
    assert.match(e.reason ?? '', /outside the range shown before/);
    for (let t = 31_000; t <= 160_000; t += 1000) e = dampEta(e, evidence(t), t);
    const left = e.readyAt - 160_000;
    assert.ok(Math.abs(left - 470_000) / 470_000 < 0.05, `${left} ms left, the evidence says 470 000`);
  });
  it("the bound is the middle's only: the upper end follows the evidence's at once", () => {
    // the evidence's range widens (its middle within the bound): the upper end is not held back
    const wide: RawEta = { ...raw(60_000), lowMs: 30_000, highMs: 200_000 };
    const e = dampEta(shown(20_000, 60_000), wide, 21_000);
    assert.ok(e.readyAt - 21_000 <= 59_000 * MAX_MOVE);
    const high = e.highAt! - 21_000;
    assert.ok(high > 66_000 * MAX_MOVE, `upper end ${high} ms: bound like the middle`);
  });
  it('a phase change (or a quiet step beginning) moves freely', () => {
    const prev = shown(20_000, 60_000);
    assert.equal(dampEta(prev, raw(600_000, 'allocating KV cache/'), 21_000).readyAt, 21_000 + 600_000);
    assert.equal(dampEta(prev, raw(600_000, 'loading weights/post-shards'), 21_000).readyAt, 21_000 + 600_000);
  });
  it('in the virtual first loads too, no move above 1.5x within 10 s inside a phase (shapes with no quiet step)', () => {
    for (const name of [...PLAIN_SHAPES, 'half cached (forecast right)']) noJumpAbove(name, 'first');
  });
  it('in the virtual loads, no move above 1.5x within 10 s inside a phase once the server has history (plain shapes)', () => {
    for (const name of PLAIN_SHAPES) noJumpAbove(name, 'second');
  });
});

describe('eta of the whole load: every phase, the forecast corrected, quiet steps', () => {
  it('an ETA is shown in every phase and quiet step until ready, in every virtual load', () => {
    for (const s of SHAPES) {
      const { first, second } = caseOf(s.name);
      assert.deepEqual(first.phasesWithout, [], `${s.name} first`);
      assert.deepEqual(second.phasesWithout, [], `${s.name} second`);
      // (none only in the weights' first seconds, until the bytes give a rate: no forecast they could disprove at once)
      assert.ok(first.uncovered < 0.05, `${s.name}: no ETA ${first.uncovered}`);
    }
  });
  it("the weights' first seconds: no ETA until the bytes give a rate, and the tooltip says so", () => {
    let s = started({ totalBytes: 20 * GB, residentBytes: 20 * GB, loads: 0 });
    s = reduce(s, { kind: 'journal', at: 1000, event: { type: 'phase', phase: 'loading weights' }, text: 'x' });
    s = reduce(s, { kind: 'io', at: 2000, readBytes: 0.1 * GB, coldBytes: 0.1 * GB, totalBytes: 20 * GB });
    assert.equal(s.eta, undefined);
    assert.equal(etaPendingText(s, 2000), 'ETA: in a few seconds, once the bytes read give a rate');
    assert.equal(etaPendingText(s, 14_000), undefined, 'not past the first seconds');
    for (let t = 3000; t <= 7000; t += 1000)
      s = reduce(s, { kind: 'io', at: t, readBytes: (t / 1000) * 0.35 * GB, coldBytes: (t / 1000) * 0.35 * GB });
    assert.ok(s.eta, 'then from the read rate');
    assert.equal(etaPendingText(s, 7000), undefined);
  });
  it('files said cached but read cold: corrected from the read rate early, and the tooltip says why', () => {
    const { first } = caseOf('forecast said cached, read cold');
    assert.ok(Math.abs(first.errors[25]!) <= VIRTUAL_LIMITS.correctedAt25.value, `25%: ${first.errors[25]}`);
    assert.ok(Math.abs(first.errors[50]!) <= VIRTUAL_LIMITS.correctedAt50.value, `50%: ${first.errors[50]}`);
    let s = started({ totalBytes: 20 * GB, residentBytes: 20 * GB, loads: 0 });
    s = reduce(s, { kind: 'journal', at: 1000, event: { type: 'phase', phase: 'loading weights' }, text: 'x' });
    for (let t = 2000; t <= 14_000; t += 1000)
      s = reduce(s, {
        kind: 'io',
        at: t,
        readBytes: (t - 1000) * 350e3,
        coldBytes: (t - 1000) * 350e3,
        totalBytes: 20 * GB,
      });
    assert.ok(s.eta);
    // 20 GB - 4.55 GB at 350 MB/s: about 44 s of weights left, not the page cache's 5 s
    assert.ok(s.eta.readyAt - 14_000 > 40_000, `${s.eta.readyAt - 14_000}`);
    assert.match(
      etaTooltip(s, s.eta, 14_000),
      /reads slowed: these files were not in the page cache \(the forecast said 100 % cached\)/,
    );
  });
  it('reads slower than in previous loads: the tooltip says so, with both rates', () => {
    let s = started({ totalBytes: 20 * GB, afterWeightsMs: 20_000, coldBps: 400e6, loads: 2 });
    s = reduce(s, { kind: 'journal', at: 1000, event: { type: 'phase', phase: 'loading weights' }, text: 'x' });
    for (let t = 2000; t <= 30_000; t += 1000)
      s = reduce(s, { kind: 'io', at: t, readBytes: (t - 1000) * 100e3, totalBytes: 20 * GB });
    assert.match(
      etaTooltip(s, s.eta!, 30_000),
      /from this server's 2 previous loads; reads slowed: 100 MB\/s now, 400 MB\/s in previous loads$/,
    );
  });
  it('a silent phase after the last shard or a JIT compile: the estimate grows with the step, never "0s left"', () => {
    for (const name of ['silent 150 s after the last shard', 'DeepGEMM JIT 150 s in graph capture (no bar)']) {
      const { first } = caseOf(name);
      const inStep = first.texts.filter((t) => /post-shards|deepgemm/.test(t.phase));
      assert.ok(inStep.length > 10, name);
      assert.ok(
        inStep.every((t) => t.text !== undefined && !/^[0-4]s left$/.test(t.text)),
        `${name}: ${inStep.map((t) => t.text)}`,
      );
    }
    const s = estimateLoad(
      {
        ...started({ totalBytes: 1 * GB, loads: 0 }),
        phase: 'loading weights',
        phaseTimes: { starting: 0, 'loading weights': 1000 },
        activity: { kind: 'post-shards', since: 10_000 },
      },
      130_000,
    )!;
    assert.ok(s.midMs >= 120_000 && s.highMs > s.midMs && s.lowMs < s.midMs, JSON.stringify(s));
    assert.match(
      s.reason ?? '',
      /processing weights after the last shard: no bar, and no previous load to time it \(120 s so far\)/,
    );
  });
  it('piecewise CUDA graphs on a first load, its bars unseen (journald keeps a bar until it closes): about 45 s from its begin line, then half its time again', () => {
    const at = (elapsedS: number) =>
      estimateLoad(
        {
          ...started({ totalBytes: 15 * GB, loads: 0 }),
          phase: 'capturing CUDA graphs',
          phaseTimes: {
            starting: 0,
            'loading weights': 1000,
            'allocating KV cache': 90_000,
            'capturing CUDA graphs': 92_000,
          },
          cudaGraphBatches: { done: 36, total: 36 },
          activity: { kind: 'piecewise-graphs', since: 122_000 },
        },
        122_000 + elapsedS * 1000,
      )!;
    const [begin, mid, late] = [at(0), at(20), at(60)];
    // servekit-apertus8b: the step took 37 s, ready 15 s after it (52 s from its begin, 32 s at 20 s in).
    assert.ok(begin.midMs >= 45_000 && begin.midMs <= 55_000, JSON.stringify(begin));
    assert.ok(mid.midMs >= 25_000 && mid.midMs <= 35_000, JSON.stringify(mid));
    assert.ok(late.midMs >= 30_000, `past its usual length the step is expected to go on: ${JSON.stringify(late)}`);
    for (const e of [begin, mid, late]) assert.ok(e.lowMs < e.midMs && e.midMs < e.highMs, JSON.stringify(e));
    assert.match(
      begin.reason ?? '',
      /capturing piecewise CUDA graphs .*: no bar; such a step takes about 45 s in published logs \(0 s so far\)/,
    );
  });
  it("a silent step after the last shard, seen in the previous load: in the ETA from the weights' start on", () => {
    const { second } = caseOf('silent 150 s after the last shard');
    for (const f of [25, 50, 75] as const)
      assert.ok(Math.abs(second.errors[f]!) <= VIRTUAL_LIMITS.knownStep.value, `at ${f} %: ${second.errors[f]}`);
    // Still within the step history measured: no "taking longer" while it is not.
    const inStep = second.texts.filter((t) => /post-shards/.test(t.phase));
    assert.ok(inStep.length > 10);
    assert.ok(second.maxJump <= VIRTUAL_LIMITS.maxJump.value, `${second.maxJump}`);
  });
  it('a compile foreseen before the restart (an empty kernel cache) is in the ETA from the first second', () => {
    for (const shape of SHAPES.filter((s) => s.jit !== undefined)) {
      const foreseen = runForeseenCompile(shape);
      const unforeseen = runForeseenCompile(shape, false);
      const e50 = foreseen.errors[50];
      assert.ok(
        e50 !== undefined && Math.abs(e50) <= VIRTUAL_LIMITS.foreseenCompileAt50.value,
        `${shape.name}: ${e50} at 50 %`,
      );
      // counted from the first second: the first ETA shown already holds the compile's length
      const firstShown = (r: HarnessResult) => r.texts.find((t) => t.text !== undefined);
      // the middle of "63s-7m left" in seconds
      const seconds = (text: string | undefined) => {
        const ends = (text ?? '').replace(/ left$/, '').split('-');
        const unit = (/[sm]$/.exec(ends[ends.length - 1] ?? '') ?? ['s'])[0];
        const value = (e: string) =>
          Number(/\d+/.exec(e)?.[0] ?? 0) * ((/[sm]$/.exec(e)?.[0] ?? unit) === 'm' ? 60 : 1);
        return ends.reduce((sum, e) => sum + value(e), 0) / Math.max(1, ends.length);
      };
      assert.ok(
        seconds(firstShown(foreseen)?.text) >= seconds(firstShown(unforeseen)?.text) + 100,
        `${shape.name}: first shown ${firstShown(foreseen)?.text} foreseen, ${firstShown(unforeseen)?.text} not`,
      );
      assert.ok(Math.abs(unforeseen.errors[25]!) > 0.5, 'unforeseen, the compile is missing at 25 %');
      assert.ok(Math.abs(foreseen.errors[25]!) <= VIRTUAL_LIMITS.foreseenCompileAt50.value, `${foreseen.errors[25]}`);
    }
  });
  it('a JIT compile with its own bar goes at the rate of the bar', () => {
    const { first } = caseOf('DeepGEMM JIT 150 s in graph capture (bar)');
    assert.ok(Math.abs(first.errors[50]!) <= VIRTUAL_LIMITS.jitWithBar.value, `${first.errors[50]}`);
  });
});

describe('eta of the whole load: the targets, in the virtual loads (with margin)', () => {
  it('a first load: |error| at 50 % <= 15 % median; a read rate that halves and 200 GB are the worst', () => {
    // (not the piecewise shape: at its half the step has not begun, and nothing before it says a
    // build of SGLang will run one; from its begin line on it is timed, see its own test above)
    const e = SHAPES.filter((s) => !s.piecewise).map((s) => caseOf(s.name).first.errors[50]!);
    assert.ok(e.every((x) => x !== undefined));
    assert.ok(Math.abs(median(e)) <= VIRTUAL_LIMITS.firstMedian.value, `median ${median(e)}: ${e}`);
    // (the worst-case target of 30 % is not met: VIRTUAL_LIMITS.firstWorst says where and why)
    assert.ok(
      e.every((x) => Math.abs(x) <= VIRTUAL_LIMITS.firstWorst.value),
      `${e}`,
    );
  });
  it('once the server has one previous load: |error| at 50 % <= 10 % median (8 % here), <= 30 % worst', () => {
    const e = SHAPES.map((s) => caseOf(s.name).second.errors[50]!);
    assert.ok(e.every((x) => x !== undefined));
    assert.ok(Math.abs(median(e)) <= VIRTUAL_LIMITS.laterMedian.value, `median ${median(e)}: ${e}`);
    assert.ok(
      e.every((x) => Math.abs(x) <= VIRTUAL_LIMITS.laterWorst.value),
      `${e}`,
    );
  });
});
