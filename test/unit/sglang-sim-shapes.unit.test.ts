// The simulator's load shapes (test/gpu-host/sglang-sim/shapes.js, docs/load-shapes.md): the keys
// each one expands to, and one real simulator process per shape, time scaled down, showing the
// lines and timings the shape claims (when each journal line would arrive: at its "\n").
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../util/freePort';
import { QUICK_SIM } from '../util/quickSim';

const SIM = '../gpu-host/sglang-sim/';
const { mergeConfig, SIM_DIR } = require(SIM + 'config.js');
const { SHAPES, expandShape } = require(SIM + 'shapes.js');
const { captureBatchSizes } = require(SIM + 'main.js');
const state = require(SIM + 'state.js');

const SHARDS = 8;
const SHARD_BYTES = 1 << 20;
/** The cold read rate of these loads (sim.json readMBps). */
const READ_MBPS = 8;
const READY = 'The server is fired up and ready to roll!';

interface Line {
  readonly at: number;
  readonly text: string;
}

describe('sglang-sim: load shapes (expansion)', () => {
  it('each shape expands to its keys, under the keys sim.json sets (fault merged key by key)', () => {
    assert.deepEqual(Object.keys(SHAPES).sort(), [
      'cold',
      'graphCapture',
      'jit',
      'partlyWarm',
      'piecewise',
      'postShardSilence',
      'readRateHalves',
      'wrongForecast',
    ]);
    const jit = mergeConfig({ loadShape: { name: 'jit', scale: 0.01 }, fault: { slowWarmupSeconds: 2 } });
    assert.equal(jit.configError, null);
    assert.equal(jit.coldFiles, 'all');
    assert.equal(jit.fault.busySilence.at, 'cudaGraph');
    assert.equal(jit.fault.busySilence.atBatch, 0);
    assert.equal(jit.fault.busySilence.seconds, 1.5);
    assert.equal(jit.fault.slowWarmupSeconds, 2, "the user's fault keys stay");
    const mine = mergeConfig({ loadShape: 'readRateHalves', coldRateChange: { afterMB: 3, factor: 0.25 } });
    assert.deepEqual(mine.coldRateChange, { afterMB: 3, factor: 0.25 }, 'a key sim.json sets wins');
    assert.deepEqual(mergeConfig({ loadShape: 'partlyWarm' }).coldFiles, { coldShare: 0.5 });
    assert.deepEqual(mergeConfig({ loadShape: { name: 'partlyWarm', coldShare: 0.25 } }).pageCacheAfterLoad, {
      coldShare: 0.25,
    });
    const wrong = mergeConfig({ loadShape: 'wrongForecast' });
    assert.equal(wrong.coldFiles, 'all');
    assert.equal(wrong.pageCacheAfterLoad, 'none');
    assert.equal(mergeConfig({ loadShape: { name: 'graphCapture', scale: 0.5 } }).cudaGraphSecondsPerBatch, 2);
    assert.deepEqual(mergeConfig({ loadShape: { name: 'piecewise', scale: 0.5 } }).piecewiseCudaGraph, {
      compileSeconds: 11,
      captureSeconds: 7.5,
      sizes: 58,
    });
    assert.equal(mergeConfig({}).piecewiseCudaGraph, null, 'none unless asked (SGLang before 2026)');
    assert.deepEqual(expandShape({ readMBps: 5 }), { readMBps: 5 }, 'no shape: sim.json as it is');
  });

  it('an unknown shape is a sim.json error the server prints, not a crash', () => {
    const cfg = mergeConfig({ loadShape: 'lukewarm' });
    assert.match(cfg.configError, /unknown loadShape "lukewarm"/);
  });

  it("graph capture: SGLang's batch sizes up to --cuda-graph-max-bs, else cudaGraphBatches of them", () => {
    assert.deepEqual(captureBatchSizes(8, { cudaGraphBatches: 7 }), [1, 2, 4, 8]);
    assert.deepEqual(captureBatchSizes(40, { cudaGraphBatches: 7 }), [1, 2, 4, 8, 12, 16, 24, 32, 40]);
    assert.equal(captureBatchSizes(256, { cudaGraphBatches: 7 }).length, 36);
    assert.deepEqual(captureBatchSizes(undefined, { cudaGraphBatches: 3 }), [1, 2, 4]);
  });
});

describe('sglang-sim: load shapes (a real process each, scaled down)', function () {
  // Each test runs simulator processes: slow to start on a busy machine (the shapes' own times are measured inside).
  this.timeout(120_000);
  let dir = '';
  let proc: ChildProcess | undefined;

  afterEach(() => {
    if (proc && proc.exitCode === null) proc.kill('SIGKILL');
    proc = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  function shardFiles(): string[] {
    return fs
      .readdirSync(path.join(dir, 'model'))
      .sort()
      .map((n) => path.join(dir, 'model', n));
  }

  function residentShards(): boolean[] {
    const r: Map<string, number> = state.measureResidency(shardFiles());
    return shardFiles().map((f) => (r.get(f) ?? 0) >= SHARD_BYTES);
  }

  /** A fresh model folder (on this machine's disk: its page cache is the real one) and sim.json. */
  function setUp(sim: Record<string, unknown>): void {
    // under the repository, not /tmp: a tmpfs /tmp would keep every file "in the page cache"
    const base = path.join(SIM_DIR, '..', '..', '..', 'out');
    fs.mkdirSync(base, { recursive: true });
    dir = fs.mkdtempSync(path.join(base, 'simshape-'));
    fs.mkdirSync(path.join(dir, 'model'));
    for (let i = 1; i <= SHARDS; i++)
      fs.writeFileSync(
        path.join(dir, 'model', `model-0000${i}-of-0000${SHARDS}.safetensors`),
        Buffer.alloc(SHARD_BYTES, i),
      );
    fs.writeFileSync(
      path.join(dir, 'sim.json'),
      JSON.stringify({
        ...QUICK_SIM,
        readMBps: READ_MBPS,
        warmReadMBps: 80,
        ...sim,
      }),
    );
  }

  /**
   * Runs the simulator until ready and then until `settled()` holds (the page cache the load leaves
   * is applied after the ready line, once its fills are done); its stderr lines with the time each
   * "\n" came.
   */
  async function load(extraArgs: string[] = [], settled: () => boolean = () => true): Promise<Line[]> {
    const port = await freePort();
    const p = spawn(
      process.execPath,
      [
        path.join(SIM_DIR, 'main.js'),
        '--model-path',
        path.join(dir, 'model'),
        '--tp',
        '1',
        '--port',
        String(port),
        ...extraArgs,
      ],
      { env: { ...process.env, KIMI_SIM_ROOT: dir } },
    );
    proc = p;
    const lines: Line[] = [];
    let partial = '';
    p.stderr!.on('data', (d: Buffer) => {
      const parts = (partial + d.toString()).split('\n');
      partial = parts.pop()!;
      const at = Date.now();
      for (const text of parts) lines.push({ at, text });
    });
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    const end = Date.now() + 100_000;
    while (!lines.some((l) => l.text.includes(READY))) {
      if (p.exitCode !== null || Date.now() > end)
        throw new Error(`no ready line:\n${lines.map((l) => l.text).join('\n')}${partial}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const settleBy = Date.now() + 10000;
    while (!settled() && Date.now() < settleBy) await new Promise((r) => setTimeout(r, 20));
    p.kill('SIGTERM');
    await exited;
    return lines;
  }

  const first = (lines: Line[], s: string | RegExp): Line => {
    const l = lines.find((x) => (typeof s === 'string' ? x.text.includes(s) : s.test(x.text)));
    assert.ok(l, `no line ${s}`);
    return l;
  };
  const shardAt = (lines: Line[], n: number) => first(lines, new RegExp(`Completed \\| ${n}/${SHARDS} \\[`)).at;
  const seconds = (ms: number) => ms / 1000;

  it('cold: every shard read at the cold rate, the files evicted after the load (the next forecast: 0 % cached)', async () => {
    setUp({ loadShape: 'cold' });
    state.preRead(shardFiles());
    const lines = await load([], () => residentShards().every((cached) => !cached));
    const weights = seconds(shardAt(lines, SHARDS) - first(lines, 'Load weight begin').at);
    // 8 MiB at 8 MB/s: ~1.05 s (the 80 MB/s of the page cache would be 0.1 s). No upper bound: a
    // busy machine stretches real reads, never shortens them.
    assert.ok(weights > 0.9, `weights in ${weights} s`);
    assert.deepEqual(residentShards(), Array(SHARDS).fill(false));
  });

  it('partlyWarm: the first half cold, the second half from the page cache, and left so for the next forecast', async () => {
    setUp({ loadShape: 'partlyWarm' });
    const halfCold = [false, false, false, false, true, true, true, true];
    const lines = await load([], () => residentShards().every((cached, i) => cached === halfCold[i]));
    const coldPart = seconds(shardAt(lines, SHARDS / 2) - first(lines, 'Load weight begin').at);
    const warmPart = seconds(shardAt(lines, SHARDS) - shardAt(lines, SHARDS / 2));
    assert.ok(coldPart > 0.4, `cold half in ${coldPart} s`);
    assert.ok(warmPart < coldPart / 3, `cached half in ${warmPart} s (cold half ${coldPart} s)`);
    assert.deepEqual(residentShards(), halfCold);
  });

  it('wrongForecast: files cached before the restart read cold, and left cached for the next forecast', async () => {
    setUp({ loadShape: 'wrongForecast' });
    state.preRead(shardFiles());
    assert.deepEqual(residentShards(), Array(SHARDS).fill(true), 'a forecast now says 100 % cached');
    const lines = await load();
    const weights = seconds(shardAt(lines, SHARDS) - first(lines, 'Load weight begin').at);
    assert.ok(weights > 0.9, `weights in ${weights} s: read cold`);
    assert.deepEqual(residentShards(), Array(SHARDS).fill(true));
  });

  it('postShardSilence: the bar at 100 %, then no line for the silence, then "Load weight end"', async () => {
    setUp({ loadShape: { name: 'postShardSilence', scale: 0.01 } });
    const lines = await load();
    const last = lines.findIndex((l) => l.text.includes(`100% Completed | ${SHARDS}/${SHARDS}`));
    const end = lines.findIndex((l) => l.text.includes('Load weight end'));
    assert.ok(last >= 0 && end > last);
    // tqdm's close repeats the bar and adds an empty line: nothing else in between
    for (const l of lines.slice(last + 1, end)) assert.match(l.text, /^(\r?Multi-thread loading shards: 100%.*|)$/);
    const gap = seconds(lines[end]!.at - lines[last]!.at);
    // The upper bound only tells the scale was applied (150 s unscaled): a busy machine stretches timers.
    assert.ok(gap >= 1.4 && gap < 15, `silent for ${gap} s (150 s x 0.01)`);
  });

  it('jit: the DeepGEMM banner glued to the first capture update, its own bar for the compile, then the capture ends', async () => {
    setUp({ loadShape: { name: 'jit', scale: 0.01 } });
    const lines = await load();
    const banner = first(lines, 'Entering DeepGEMM JIT Pre-Compile session');
    // as in sg-10424-deepgemm-inside-capture: "Capturing batches (bs=... GB):   0%|...| 0/7 [...][date TP0] Entering DeepGEMM ..."
    assert.match(
      banner.text,
      /Capturing batches \(bs=\d+ avail_mem=[\d.]+ GB\):\s+0%\|.*\| 0\/\d+ \[.*\]\[\d{4}-\d\d-\d\d [\d:]+ TP0\] Entering DeepGEMM/,
    );
    first(lines, 'Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16>');
    const bar = first(lines, /DeepGEMM warmup: 100%\|.*\| 256\/256 \[/);
    const compile = seconds(bar.at - banner.at);
    assert.ok(compile >= 1.4 && compile < 15, `compile ${compile} s (150 s x 0.01; 150 s unscaled)`);
    const captured = first(lines, 'Capture cuda graph end. Time elapsed: ');
    assert.ok(captured.at >= bar.at);
    assert.ok(Number(/Time elapsed: ([\d.]+) s/.exec(captured.text)![1]) >= 1.4);
  });

  it("piecewise: after the decode graphs, SGLang 2026's piecewise step: begin, the compile bar, the capture bar, end; none with --disable-piecewise-cuda-graph", async () => {
    setUp({ loadShape: { name: 'piecewise', scale: 0.05 } });
    const lines = await load();
    const decodeEnd = first(lines, 'Capture cuda graph end. Time elapsed: ');
    const begin = first(lines, 'Capture piecewise CUDA graph begin. avail mem=');
    // carriage-return bars (real tqdm): one journal line each, when it closes
    const compiled = first(lines, /Compiling num tokens \(num_tokens=4\): 100%\|.*\| 58\/58 \[/);
    const captured = first(lines, /Capturing num tokens \(num_tokens=4 avail_mem=[\d.]+ GB\): 100%\|.*\| 58\/58 \[/);
    const end = first(lines, /Capture piecewise CUDA graph end\. Time elapsed: [\d.]+ s\./);
    assert.ok(
      decodeEnd.at <= begin.at && begin.at <= compiled.at && compiled.at <= captured.at && captured.at <= end.at,
    );
    assert.match(
      compiled.text,
      /\rCompiling num tokens \(num_tokens=232\):\s+0%\|/,
      'its first update, 232 tokens first',
    );
    const step = Number(/Time elapsed: ([\d.]+) s/.exec(end.text)![1]);
    assert.ok(step >= 1.7 && step < 18, `piecewise step ${step} s ((22 + 15) s x 0.05; 37 s unscaled)`);
    const off = await load(['--disable-piecewise-cuda-graph']);
    assert.ok(!off.some((l) => /piecewise/i.test(l.text)), 'turned off by the flag');
  });

  it('graphCapture: the capture takes secondsPerBatch per size of the --cuda-graph-max-bs list', async () => {
    setUp({ loadShape: { name: 'graphCapture', secondsPerBatch: 0.1, scale: 1 } });
    const small = await load(['--cuda-graph-max-bs', '8']);
    assert.ok(small.some((l) => l.text.includes('Capture cuda graph bs [1, 2, 4, 8]')));
    const large = await load(['--cuda-graph-max-bs', '48']);
    assert.ok(large.some((l) => l.text.includes('Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48]')));
    const elapsed = (lines: Line[]) =>
      Number(/Time elapsed: ([\d.]+) s/.exec(first(lines, 'Capture cuda graph end').text)![1]);
    // Upper bounds far from the default 4 s a size (16 s and 40 s): they tell secondsPerBatch was
    // applied; a busy machine stretches timers, so nothing tighter.
    assert.ok(elapsed(small) >= 0.4 && elapsed(small) < 8, `4 sizes: ${elapsed(small)} s`);
    assert.ok(elapsed(large) >= 1.0 && elapsed(large) < 20, `10 sizes: ${elapsed(large)} s`);
  });

  // The reads are real and keep one rate timeline: a reader starved on a busy machine runs late,
  // then catches up, so the halves' own durations (or their ratio: 1.4 to 2.0 at a load of 20 to
  // 34, for a factor of a quarter) say little there. The whole load cannot end before its timeline
  // does, busy or not: that is what the factor must lengthen.
  it('readRateHalves: once half of the bytes are read, the reads slow by the factor (a quarter here)', async () => {
    setUp({ loadShape: { name: 'readRateHalves', factor: 0.25 } });
    const lines = await load();
    const shardSeconds = SHARD_BYTES / (READ_MBPS * 1e6);
    const planned = (SHARDS / 2) * shardSeconds + (SHARDS / 2) * (shardSeconds / 0.25);
    const unslowed = SHARDS * shardSeconds;
    const took = seconds(shardAt(lines, SHARDS) - first(lines, 'Load weight begin').at);
    assert.ok(
      took >= 0.95 * planned,
      `the shards took ${took.toFixed(2)} s: a quarter of the rate after half takes ${planned.toFixed(2)} s, none ${unslowed.toFixed(2)} s`,
    );
  });
});
