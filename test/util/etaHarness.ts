/**
 * Virtual-time ETA harness. Pure: a load shape (phases, read rates, page cache, quiet steps, as the
 * real logs show them) becomes the signal stream the watcher would feed the reducer (journal
 * events, io/cpu/gpu samples every second, HTTP, the completion), on a virtual clock. The state's
 * ETA is read every 250 ms as a status bar would; out come the error at 25/50/75 % of the load
 * and the largest move within 10 s. A first load runs with the defaults' prior, a second with the
 * history of the first (monitor/history/history.ts), as the extension does.
 * `npx tsx test/util/etaHarness.ts` prints every case.
 */
import { initialState, reduce } from '../../src/monitor/state/loadState';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { appendRecord, priorFrom, recordOf, type LoadRecord } from '../../src/monitor/history/history';
import type { LoadPrior } from '../../src/monitor/eta/eta';
import { etaText } from '../../src/present/etaText';
import type { JournalEvent } from '../../src/engine/events';
import type { ServiceStatus } from '../../src/target/target';
import { runningUnit } from './loadFixtures';

const MB = 1e6;
/** Times left below this are not compared for jumps (2 s against 4 s is no jump a user sees). */
export const JUMP_FLOOR_MS = 5_000;

export interface LoadShape {
  readonly name: string;
  readonly totalBytes: number;
  readonly shards: number;
  readonly gpus: number;
  readonly startingMs: number;
  /** The weights, in order: a share of the bytes read at a rate, cold (storage) or warm (page cache). */
  readonly reads: readonly { readonly share: number; readonly bps: number; readonly cold: boolean }[];
  /** Share of the model the forecast said was cached before the restart. */
  readonly forecastResident: number;
  /** Quiet processing after the last shard (CPU busy, no line), ms. */
  readonly postShardsMs: number;
  readonly kvMs: number;
  /** A JIT compile inside the first CUDA-graph capture: its length, and whether it prints a bar. */
  readonly jit?: { readonly ms: number; readonly bar: boolean };
  readonly graphs: { readonly batches: number; readonly msPerBatch: number };
  /** SGLang 2026's piecewise CUDA graphs after the decode ones: its compile and capture bars, each seen when it closes. */
  readonly piecewise?: { readonly compileMs: number; readonly captureMs: number };
  readonly warmupMs: number;
  /** Shard lines printed (false: old engines with no shard bar). */
  readonly shardLines: boolean;
}

export interface HarnessResult {
  readonly totalMs: number;
  /** (shown ready time - real ready time) / real time left, at 25, 50, 75 % of the load; undefined: none shown. */
  readonly errors: Readonly<Record<25 | 50 | 75, number | undefined>>;
  /** Largest ratio between the time left shown and the countdown of what was shown up to 10 s before, within one phase. */
  readonly maxJump: number;
  readonly jumpAt: string;
  /** Share of the load's duration (after the first 10 s) with no ETA shown. */
  readonly uncovered: number;
  /** Phases in which no ETA was ever shown. */
  readonly phasesWithout: readonly string[];
  readonly final: LoadState;
  readonly texts: readonly { readonly at: number; readonly text: string | undefined; readonly phase: string }[];
}

const UNIT: ServiceStatus = runningUnit({ execMainStartedAt: 0 });

type Timed = { readonly at: number; readonly signal: Signal };

/** The signal stream of one load (journal lines and host samples), ordered by time, and its ready time. */
export function signalsOf(shape: LoadShape): { signals: Timed[]; readyAt: number } {
  const out: Timed[] = [];
  const journal = (at: number, event: JournalEvent, text: string = event.type): void => {
    out.push({ at, signal: { kind: 'journal', at, event, text } });
  };
  const total = shape.totalBytes;
  let t = shape.startingMs;
  journal(t, { type: 'phase', phase: 'loading weights' }, 'Load weight begin.');
  // The read as a piecewise-linear curve: (time, bytes, coldBytes).
  const curve: { at: number; bytes: number; cold: number }[] = [{ at: t, bytes: 0, cold: 0 }];
  for (const r of shape.reads) {
    const prev = curve[curve.length - 1]!;
    const bytes = r.share * total;
    const ms = (bytes / r.bps) * 1000;
    curve.push({ at: prev.at + ms, bytes: prev.bytes + bytes, cold: prev.cold + (r.cold ? bytes : 0) });
  }
  const weightsEnd = curve[curve.length - 1]!.at;
  const at = (time: number): { bytes: number; cold: number } => {
    if (time <= curve[0]!.at) return { bytes: 0, cold: 0 };
    for (let i = 1; i < curve.length; i++) {
      const a = curve[i - 1]!;
      const b = curve[i]!;
      if (time <= b.at) {
        const f = (time - a.at) / Math.max(1, b.at - a.at);
        return { bytes: a.bytes + f * (b.bytes - a.bytes), cold: a.cold + f * (b.cold - a.cold) };
      }
    }
    const last = curve[curve.length - 1]!;
    return { bytes: last.bytes, cold: last.cold };
  };
  if (shape.shardLines) {
    for (let k = 1; k <= shape.shards; k++) {
      // time when k/shards of the bytes are read
      const target = (k / shape.shards) * total;
      let lo = curve[0]!.at;
      let hi = weightsEnd;
      for (let i = 0; i < 40; i++) {
        const mid = (lo + hi) / 2;
        if (at(mid).bytes < target) lo = mid;
        else hi = mid;
      }
      journal(hi, { type: 'shards', done: k, total: shape.shards, percent: Math.round((k / shape.shards) * 100) });
    }
  }
  t = weightsEnd + shape.postShardsMs;
  journal(t, { type: 'weightsLoaded', modelType: 'DeepseekV3ForCausalLM' }, 'Load weight end.');
  journal(t + 10, { type: 'kvCache' }, 'KV Cache is allocated.');
  t += shape.kvMs;
  journal(t, { type: 'cudaGraphBatches', done: 0, total: shape.graphs.batches });
  const cpuBusyUntil = t + (shape.jit?.ms ?? 0);
  if (shape.jit) {
    journal(
      t + 100,
      { type: 'activity', activity: 'deepgemm', edge: 'start' },
      'Entering DeepGEMM JIT Pre-Compile session',
    );
    if (shape.jit.bar) {
      for (let k = 1; k <= 20; k++)
        journal(t + (k / 20) * shape.jit.ms - 50, {
          type: 'activity',
          activity: 'deepgemm',
          edge: 'progress',
          done: k * 100,
          total: 2000,
        });
    }
    t += shape.jit.ms;
  }
  for (let b = 1; b <= shape.graphs.batches; b++)
    journal(t + b * shape.graphs.msPerBatch, { type: 'cudaGraphBatches', done: b, total: shape.graphs.batches });
  t += shape.graphs.batches * shape.graphs.msPerBatch;
  journal(t + 10, { type: 'graphsCaptured' });
  if (shape.piecewise) {
    const { compileMs, captureMs } = shape.piecewise;
    const step = (edge: 'start' | 'end'): JournalEvent => ({ type: 'activity', activity: 'piecewise-graphs', edge });
    const bar = (done: number): JournalEvent => ({
      type: 'activity',
      activity: 'piecewise-graphs',
      edge: 'progress',
      done,
      total: 116,
    });
    journal(t + 20, step('start'), 'Capture piecewise CUDA graph begin.');
    journal(t + 20 + compileMs, bar(58));
    journal(t + 20 + compileMs + captureMs, bar(116));
    journal(t + 30 + compileMs + captureMs, step('end'), 'Capture piecewise CUDA graph end.');
    t += 30 + compileMs + captureMs;
  }
  journal(t + 20, { type: 'httpUp' });
  t += shape.warmupMs;
  journal(t, { type: 'ready' });
  const readyAt = t + 500;
  out.push({
    at: readyAt,
    signal: { kind: 'completion', at: readyAt, ok: true, detail: '1-token completion answered' },
  });
  // Host samples every second: bytes, CPU (busy while processing or compiling), GPU memory.
  let cpu = 0;
  for (let s = 1000; s < readyAt; s += 1000) {
    const r = at(s);
    const busy = s < weightsEnd || (s >= weightsEnd && s < cpuBusyUntil) ? 1.5 : 0.05;
    cpu += busy;
    out.push({ at: s, signal: { kind: 'io', at: s, readBytes: r.bytes, coldBytes: r.cold, totalBytes: total } });
    out.push({ at: s + 1, signal: { kind: 'cpu', at: s + 1, cpuSeconds: cpu } });
    const used = 2000 + Math.min(1, r.bytes / total) * 60_000 + (s > weightsEnd + shape.postShardsMs ? 10_000 : 0);
    out.push({
      at: s + 2,
      signal: {
        kind: 'gpu',
        at: s + 2,
        usedMiB: used * shape.gpus,
        totalMiB: 80_000 * shape.gpus,
        perGpu: Array.from({ length: shape.gpus }, (_, i) => ({ index: i, usedMiB: used, totalMiB: 80_000 })),
      },
    });
    out.push({ at: s + 3, signal: { kind: 'tick', at: s + 3, stallMs: 600_000 } });
  }
  out.sort((a, b) => a.at - b.at);
  return { signals: out, readyAt };
}

/** Runs one load through the reducer on the virtual clock. */
export function runLoad(shape: LoadShape, prior: LoadPrior): HarnessResult {
  const { signals, readyAt } = signalsOf(shape);
  let s = initialState(0);
  for (const sig of [
    { kind: 'prior', at: 0, prior },
    { kind: 'restartRequested', at: 0 },
    { kind: 'tiedToRun', at: 0, unit: UNIT },
  ] as Signal[])
    s = reduce(s, sig);
  s = reduce(s, { kind: 'journal', at: 1, event: { type: 'phase', phase: 'starting' }, text: 'starting' });
  const shown: { at: number; readyAt: number | undefined; left: number | undefined; key: string; phase: string }[] = [];
  const texts: { at: number; text: string | undefined; phase: string }[] = [];
  const phasesSeen = new Set<string>();
  const phasesShown = new Set<string>();
  let i = 0;
  for (let now = 0; now < readyAt; now += 250) {
    while (i < signals.length && signals[i]!.at <= now) s = reduce(s, signals[i++]!.signal);
    if (s.readyAt !== undefined) break;
    const text = etaText(s.eta, now);
    const phase = `${s.phase ?? '-'}${s.activity ? `/${s.activity.kind}` : ''}`;
    phasesSeen.add(phase);
    if (text !== undefined) phasesShown.add(phase);
    const left = s.eta && text !== undefined ? s.eta.readyAt - now : undefined;
    shown.push({
      at: now,
      readyAt: text !== undefined ? s.eta?.readyAt : undefined,
      left,
      key: s.eta?.key ?? '',
      phase,
    });
    if (now % 5000 === 0) texts.push({ at: now, text, phase });
  }
  while (i < signals.length) s = reduce(s, signals[i++]!.signal);
  const errors: Record<25 | 50 | 75, number | undefined> = { 25: undefined, 50: undefined, 75: undefined };
  for (const f of [25, 50, 75] as const) {
    const t = (f / 100) * readyAt;
    const p = [...shown].reverse().find((x) => x.at <= t);
    errors[f] = p?.readyAt !== undefined ? (p.readyAt - readyAt) / (readyAt - t) : undefined;
  }
  let maxJump = 1;
  let jumpAt = '';
  for (let a = 0; a < shown.length; a++) {
    const x = shown[a]!;
    if (x.readyAt === undefined) continue;
    for (let b = a + 1; b < shown.length && shown[b]!.at - x.at <= 10_000; b++) {
      const y = shown[b]!;
      if (y.readyAt === undefined || y.phase !== x.phase) continue;
      const countdown = Math.max(JUMP_FLOOR_MS, x.readyAt - y.at);
      const left = Math.max(JUMP_FLOOR_MS, y.readyAt - y.at);
      const j = Math.max(left / countdown, countdown / left);
      if (j > maxJump) {
        maxJump = j;
        jumpAt = `${(x.at / 1000).toFixed(1)}-${(y.at / 1000).toFixed(1)} s ${x.phase}->${y.phase} ${(countdown / 1000).toFixed(0)}->${(left / 1000).toFixed(0)} s`;
      }
    }
  }
  const late = shown.filter((x) => x.at >= 10_000);
  const uncovered = late.length ? late.filter((x) => x.readyAt === undefined).length / late.length : 0;
  const phasesWithout = [...phasesSeen].filter((p) => !phasesShown.has(p) && p !== '-');
  return { totalMs: readyAt, errors, maxJump, jumpAt, uncovered, phasesWithout, final: s, texts };
}

/** The page cache's read rate of the later loads' newly cached quarter. */
const WARM_BPS = 3000 * MB;

/**
 * The same server's next load is not the same load: another page-cache residency. A quarter of
 * the weights is now cached (read at the page cache's rate) where the first load read at most
 * half of them from the cache, else a quarter of them was evicted (read cold, at the shape's first
 * cold rate, or 400 MB/s); the forecast says what is really cached now, as fincore would.
 */
export function laterShape(shape: LoadShape): LoadShape {
  const cached = shape.reads.filter((r) => !r.cold).reduce((sum, r) => sum + r.share, 0);
  const warmer = cached <= 0.5;
  const coldBps = shape.reads.find((r) => r.cold)?.bps ?? 400 * MB;
  const quarter = warmer ? { share: 0.25, bps: WARM_BPS, cold: false } : { share: 0.25, bps: coldBps, cold: true };
  return {
    ...shape,
    name: `${shape.name} (later: ${warmer ? 'a quarter more cached' : 'a quarter evicted'})`,
    forecastResident: cached * 0.75 + (warmer ? 0.25 : 0),
    reads: [quarter, ...shape.reads.map((r) => ({ ...r, share: r.share * 0.75 }))],
  };
}

/**
 * A first load (defaults: the model's size and the forecast), then the next one (laterShape: another
 * page-cache residency) with the first one's history.
 */
export function runCase(shape: LoadShape): { first: HarnessResult; second: HarnessResult } {
  const forecastOf = (s: LoadShape) => ({ residentBytes: s.forecastResident * s.totalBytes, totalBytes: s.totalBytes });
  const forecast = forecastOf(shape);
  const first = runLoad(shape, priorFrom([], forecast));
  const record = recordOf(first.final, 'ready', first.totalMs, forecast.residentBytes);
  const later = laterShape(shape);
  const second = runLoad(later, priorFrom([record], forecastOf(later)));
  return { first, second };
}

/**
 * "Forecast warm, load cold": the server's previous load read every byte from the page
 * cache, the forecast before this restart says 100 % cached again, and the files are evicted as
 * the load starts, so every byte is read cold: the history's warm rates and the forecast are both
 * wrong, and only the bytes read say so.
 */
export function runForecastWarmLoadCold(shape: LoadShape): HarnessResult {
  const total = shape.totalBytes;
  const warm: LoadShape = { ...shape, forecastResident: 1, reads: [{ share: 1, bps: 2500 * MB, cold: false }] };
  const forecast = { residentBytes: total, totalBytes: total };
  const previous = runLoad(warm, priorFrom([], forecast));
  const record = recordOf(previous.final, 'ready', previous.totalMs, total);
  return runLoad({ ...shape, forecastResident: 1 }, priorFrom([record], forecast));
}

/**
 * "Cold compile foreseen": a first load whose kernel cache was read empty before the
 * restart, so its prior holds the DeepGEMM compile at the published logs' length (the ETA counts
 * it from the first second); `foresee: false` is the same load unforeseen.
 */
export function runForeseenCompile(shape: LoadShape, foresee = true): HarnessResult {
  const forecast = { residentBytes: shape.forecastResident * shape.totalBytes, totalBytes: shape.totalBytes };
  const step = {
    kind: 'deepgemm',
    ms: 150_000,
    lowMs: 60_000,
    highMs: 1_200_000,
    dir: '/root/.cache/deep_gemm',
    from: 'published logs',
  } as const;
  return runLoad(shape, { ...priorFrom([], forecast), ...(foresee ? { foreseenSteps: [step] } : {}) });
}

/**
 * The record Fleet keeps of a first look at a server already serving (a window reload, a CLI
 * `status`): the process started an hour before the watch, the journal's phases read at once.
 */
export function lateWatchRecord(watchAt: number): LoadRecord {
  const signals: Signal[] = [
    { kind: 'tiedToRun', at: watchAt, unit: { ...UNIT, execMainStartedAt: watchAt - 3_600_000 } },
    {
      kind: 'journal',
      at: watchAt + 5,
      event: { type: 'phase', phase: 'loading weights' },
      text: 'Load weight begin.',
    },
    { kind: 'journal', at: watchAt + 6, event: { type: 'weightsLoaded' }, text: 'Load weight end.' },
    { kind: 'journal', at: watchAt + 7, event: { type: 'kvCache' }, text: 'KV Cache is allocated.' },
    { kind: 'journal', at: watchAt + 8, event: { type: 'ready' }, text: 'ready' },
    { kind: 'completion', at: watchAt + 20, ok: true, detail: '1-token completion answered' },
  ];
  return recordOf(signals.reduce(reduce, initialState(watchAt)), 'ready', watchAt + 20);
}

/** A second load whose history holds the first and then `reloads` late watches (newest first). */
export function runAfterReloads(shape: LoadShape, reloads: number): HarnessResult {
  const forecast = { residentBytes: shape.forecastResident * shape.totalBytes, totalBytes: shape.totalBytes };
  const first = runLoad(shape, priorFrom([], forecast));
  let records: LoadRecord[] = [recordOf(first.final, 'ready', first.totalMs, forecast.residentBytes)];
  for (let k = 1; k <= reloads; k++) records = appendRecord(records, lateWatchRecord(first.totalMs + k * 60_000));
  return runLoad(shape, priorFrom(records, forecast));
}

const GB = 1e9;
const base = {
  totalBytes: 20 * GB,
  shards: 16,
  gpus: 8,
  startingMs: 12_000,
  forecastResident: 0,
  // after the weights as sg-llmsinclouds-qwq32b has them: 13 batch sizes in 7.2 s, 5 s to ready
  postShardsMs: 500,
  kvMs: 1_000,
  graphs: { batches: 13, msPerBatch: 550 },
  warmupMs: 4_000,
  shardLines: true,
};

/** Load shapes taken from the real logs (docs/real-logs.md) and the issue's measurements. */
export const SHAPES: readonly LoadShape[] = [
  { ...base, name: 'plain cold', reads: [{ share: 1, bps: 400 * MB, cold: true }] },
  { ...base, name: 'plain cold, no shard lines', shardLines: false, reads: [{ share: 1, bps: 400 * MB, cold: true }] },
  {
    ...base,
    name: 'half cached (forecast right)',
    forecastResident: 0.5,
    reads: [
      { share: 0.5, bps: 300 * MB, cold: true },
      { share: 0.5, bps: 3000 * MB, cold: false },
    ],
  },
  {
    ...base,
    name: 'forecast said cached, read cold',
    forecastResident: 1,
    reads: [{ share: 1, bps: 350 * MB, cold: true }],
  },
  {
    ...base,
    name: 'read rate halves midway',
    reads: [
      { share: 0.5, bps: 500 * MB, cold: true },
      { share: 0.5, bps: 250 * MB, cold: true },
    ],
  },
  {
    ...base,
    name: 'silent 150 s after the last shard',
    postShardsMs: 150_000,
    reads: [{ share: 1, bps: 400 * MB, cold: true }],
  },
  {
    ...base,
    name: 'DeepGEMM JIT 150 s in graph capture (bar)',
    jit: { ms: 150_000, bar: true },
    reads: [{ share: 1, bps: 400 * MB, cold: true }],
  },
  {
    ...base,
    name: 'DeepGEMM JIT 150 s in graph capture (no bar)',
    jit: { ms: 150_000, bar: false },
    reads: [{ share: 1, bps: 400 * MB, cold: true }],
  },
  {
    ...base,
    name: 'piecewise CUDA graphs after the decode ones (SGLang 2026)',
    piecewise: { compileMs: 22_000, captureMs: 15_000 },
    reads: [{ share: 1, bps: 400 * MB, cold: true }],
  },
  {
    ...base,
    name: 'graphs grow with batch sizes (long capture)',
    graphs: { batches: 160, msPerBatch: 600 },
    reads: [{ share: 1, bps: 400 * MB, cold: true }],
  },
  {
    ...base,
    name: '200 GB on 8 GPUs, 1 min of graph capture',
    totalBytes: 200 * GB,
    shards: 64,
    postShardsMs: 10_000,
    kvMs: 8_000,
    graphs: { batches: 36, msPerBatch: 1_500 },
    warmupMs: 5_000,
    reads: [{ share: 1, bps: 1500 * MB, cold: true }],
  },
  {
    ...base,
    name: 'small model on 1 GPU, short phases after the weights',
    totalBytes: 2 * GB,
    gpus: 1,
    shards: 2,
    startingMs: 6_000,
    postShardsMs: 500,
    kvMs: 1_000,
    graphs: { batches: 8, msPerBatch: 300 },
    warmupMs: 1_500,
    reads: [{ share: 1, bps: 40 * MB, cold: true }],
  },
  {
    ...base,
    name: 'warm from the page cache',
    forecastResident: 1,
    reads: [{ share: 1, bps: 2500 * MB, cold: false }],
  },
];

const row = (name: string, which: string, r: HarnessResult): string =>
  `${name.padEnd(46)} ${which} ${(r.totalMs / 1000).toFixed(0).padStart(4)} s | 25%: ${pct(r.errors[25]).padStart(5)} 50%: ${pct(r.errors[50]).padStart(5)} 75%: ${pct(r.errors[75]).padStart(5)} | max 10 s move ${r.maxJump.toFixed(2)}x${process.env.JUMPS ? ` (${r.jumpAt})` : ''} | no ETA ${(r.uncovered * 100).toFixed(0)}%${r.phasesWithout.length ? ` (${r.phasesWithout.join(', ')})` : ''}`;

const pct = (x: number | undefined): string =>
  x === undefined ? '  none' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;

export function report(shapes: readonly LoadShape[] = SHAPES): string[] {
  const lines: string[] = [];
  for (const shape of shapes) {
    const { first, second } = runCase(shape);
    for (const [which, r] of [
      ['first ', first],
      ['second', second],
    ] as const) {
      lines.push(row(shape.name, which, r));
    }
  }
  const plain = shapes[0];
  for (const shape of [plain, shapes.find((s) => s.name.startsWith('small model'))])
    if (shape) lines.push(row(`${shape.name}: forecast warm, load cold`, 'second', runForecastWarmLoadCold(shape)));
  for (const shape of shapes.filter((s) => s.jit !== undefined))
    lines.push(row(`${shape.name}: cold compile foreseen`, 'first ', runForeseenCompile(shape)));
  if (plain) lines.push(row(`${plain.name}, after 5 window reloads`, 'second', runAfterReloads(plain, 5)));
  return lines;
}

if (require.main === module) {
  for (const line of report()) console.log(line);
  if (process.argv.includes('--texts')) {
    const name = process.argv[process.argv.indexOf('--texts') + 1];
    const shape = SHAPES.find((s) => s.name.startsWith(name ?? ''));
    if (shape) {
      const { first } = runCase(shape);
      for (const t of first.texts)
        console.log(`${(t.at / 1000).toFixed(0).padStart(4)} s ${t.phase.padEnd(36)} ${t.text ?? '-'}`);
      console.log(JSON.stringify(first.final.eta));
    }
  }
}
