'use strict';
// Replay of a published server log (docs/replay.md), the pure part: a log's lines and its header
// -> a schedule (when each line is written, compressed from the line's own timestamps) with what
// each line means for the simulated host (HTTP opens, ready, shard progress, GPU memory phases)
// and how the process ends. No I/O; replay.js plays the plan.

const DEFAULT_OPTIONS = Object.freeze({
  speed: 60, // real seconds per replayed second
  maxGapMs: 3000, // no silence between two lines is replayed longer than this
  defaultGapMs: 1, // after a line with no timestamp (tracebacks, tqdm bars, blank lines)
  leadMs: 20, // before the first line (the interpreter starting)
  // a timestamp format first seen this far from the log's clock runs on another clock (a local
  // vs UTC time zone, a vLLM-style line "a day off" inside an SGLang log): its offset is kept
  familyJumpMs: 3600e3,
});

const ENGINES = ['sglang', 'vllm'];
const OUTCOMES = ['ready', 'failed', 'hang'];

// ---- timestamps ----------------------------------------------------------------------------
// Every format the published logs carry; a line's time is its LAST timestamp (a log line glued
// to the end of a tqdm bar reaches the journal when that line's newline is written).
const FORMATS = [
  // SGLang: [2025-03-08 12:29:21 TP1], [2025-02-21 21:52:50], [2026-02-26 06:25:15 DP7 TP7]
  {
    family: 'sglang',
    re: /\[(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?(?: [^\]\n]{0,40})?\]/g,
    year: true,
  },
  // Python logging: 2025-05-02 16:14:33,560 - INFO - ...
  {
    family: 'pylog',
    re: /(?<![\d[])(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})[,.](\d{3,6})(?!\d)/g,
    year: true,
  },
  // vLLM: INFO 03-07 12:00:00 [file.py:N] (also inside SGLang logs), WARNING/ERROR/DEBUG
  {
    family: 'vllm',
    re: /\b(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?!\d)/g,
    year: false,
  },
  // glog / c10 (torch, NCCL watchdog): [rank6]:[E207 01:29:36.730311765 ...], [rank0]:W0318 06:57:13.573000
  { family: 'glog', re: /(?:^|[\s[\]:])[IWEF](\d{1,2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3,9})(?!\d)/g, year: false },
];

function fracMs(s) {
  if (!s) return 0;
  return Math.floor(Number(`0.${s}`) * 1000);
}

/**
 * The last timestamp of a line: {ms (epoch ms, UTC), family, year (whether the line said which)},
 * or null. Lines without a year (vLLM, glog) take `year` (the log's, see logYear).
 */
function parseTimestamp(line, year = 2000) {
  let best = null;
  for (const f of FORMATS) {
    f.re.lastIndex = 0;
    let m;
    while ((m = f.re.exec(line))) {
      if (best && m.index < best.index) continue;
      let y;
      let mo;
      let d;
      let h;
      let mi;
      let s;
      let frac;
      if (f.year) [, y, mo, d, h, mi, s, frac] = m;
      else {
        [, mo, d, h, mi, s, frac] = m;
        y = year;
      }
      const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), fracMs(frac));
      if (
        !Number.isFinite(ms) ||
        Number(mo) < 1 ||
        Number(mo) > 12 ||
        Number(d) < 1 ||
        Number(d) > 31 ||
        Number(h) > 23 ||
        Number(mi) > 59 ||
        Number(s) > 60
      )
        continue;
      best = { index: m.index, ms, family: f.family, year: f.year };
    }
  }
  return best && { ms: best.ms, family: best.family, year: best.year };
}

/** The year of the first line that says one (yearless formats borrow it), else 2000. */
function logYear(lines) {
  for (const l of lines) {
    const t = parseTimestamp(l);
    if (t && t.year) return new Date(t.ms).getUTCFullYear();
  }
  return 2000;
}

// ---- what a line means ---------------------------------------------------------------------
const HTTP_LINE = /Uvicorn running on|Application startup complete|Starting vLLM API server/;
const READY_LINE = /The server is fired up and ready to roll/;
const SHARD_LINE = /(?:checkpoint shards|loading shards)\s*:\s*\d+%[^|\r\n]*\|\s*(\d+)\/(\d+)/g;
const MARKERS = [
  ['init', /Init torch distributed ends|Waiting for init message|world_size=\d+ rank=\d+|is assigned as DP rank/],
  ['weightsEnd', /Load weight end|Loading weights took|Model loading took/],
  ['kv', /KV Cache is allocated|Memory pool end|GPU KV cache size|Available KV cache memory/],
  ['graph', /Capture cuda graph end|Capture target decode CUDA graph end|Graph capturing finished/],
];

/**
 * What one line means to the simulated host: {shards?: {done,total}, markers: [...], http, ready}.
 * `ready` only for SGLang ("fired up"); vLLM is ready when its HTTP opens.
 */
function classify(line, engine) {
  const out = { markers: [], http: HTTP_LINE.test(line), ready: engine === 'sglang' && READY_LINE.test(line) };
  SHARD_LINE.lastIndex = 0;
  let m;
  while ((m = SHARD_LINE.exec(line))) {
    const done = Number(m[1]);
    const total = Number(m[2]);
    if (total > 0 && done <= total) out.shards = { done, total };
  }
  for (const [name, re] of MARKERS) if (re.test(line)) out.markers.push(name);
  return out;
}

/**
 * An HTTP line with the address the replay really listens on: the extension follows the address a
 * server announces ("Uvicorn running on http://0.0.0.0:30000"), and the replayed server is not on
 * the log's port. Other lines are returned as they are.
 */
function withAddress(line, host, port) {
  if (!HTTP_LINE.test(line)) return line;
  return line.replace(/http:\/\/(?:\[[0-9a-fA-F:.]+\]|[^\s/:]+):\d+/, `http://${host}:${port}`);
}

// ---- the end --------------------------------------------------------------------------------
/** How the process ends once the last line is out: exit N, a signal, hang (alive, silent) or serve. */
function endOf(header) {
  const outcome = header.outcome;
  if (outcome === 'ready') return { kind: 'serve' };
  if (outcome === 'hang') return { kind: 'hang' };
  if (header.exitSignal) return { kind: 'signal', signal: String(header.exitSignal).replace(/^(?!SIG)/, 'SIG') };
  const code = Number.isInteger(header.exitCode) ? header.exitCode : 1;
  return { kind: 'exit', code: code & 0xff };
}

function checkHeader(header) {
  const errors = [];
  if (!header || typeof header !== 'object') return ['no header'];
  if (!ENGINES.includes(header.engine))
    errors.push(`engine must be one of ${ENGINES.join(', ')}: ${JSON.stringify(header.engine)}`);
  if (!OUTCOMES.includes(header.outcome))
    errors.push(`outcome must be one of ${OUTCOMES.join(', ')}: ${JSON.stringify(header.outcome)}`);
  return errors;
}

// ---- the schedule ---------------------------------------------------------------------------
function options(o = {}) {
  const out = { ...DEFAULT_OPTIONS };
  for (const k of Object.keys(DEFAULT_OPTIONS)) {
    if (o[k] !== undefined && o[k] !== null) {
      const v = Number(o[k]);
      if (!Number.isFinite(v) || v < 0 || (k === 'speed' && v === 0))
        throw new Error(
          `replay.${k} must be a ${k === 'speed' ? 'positive' : 'non-negative'} number: ${JSON.stringify(o[k])}`,
        );
      out[k] = v;
    }
  }
  return out;
}

/**
 * The plan of a replay.
 * @param {string[]} lines the log's lines (no newlines)
 * @param {{engine, outcome, exitCode?, exitSignal?}} header
 * @param {object} [opts] speed, maxGapMs, defaultGapMs, leadMs, familyJumpMs (DEFAULT_OPTIONS)
 * @returns {{engine, end, steps: {atMs, realMs, line, shards?, markers, http, ready}[], httpAt, readyAt, durationMs, realSpanMs}}
 *   atMs: when the line is written (ms after start); realMs: the log's own time of the line
 *   relative to its first timestamp (undefined before it). httpAt/readyAt: step indexes, or -1
 *   (the HTTP of a "ready" log with no HTTP line opens after its last line; so does its readiness).
 */
function planReplay(lines, header, opts = {}) {
  const errors = checkHeader(header);
  if (errors.length) throw new Error(`replay header: ${errors.join('; ')}`);
  const o = options(opts);
  const engine = header.engine;
  const year = logYear(lines);
  const compress = (ms) => Math.min(o.maxGapMs, ms / o.speed);
  const offsets = new Map(); // family -> ms to subtract (another clock)
  let clock; // the log's time of the last timestamped line (ms)
  let first; // the log's time of the first one
  let at = o.leadMs;
  let spentSinceClock = 0; // replayed ms of untimed lines since the last timestamped one
  const steps = [];
  lines.forEach((line, i) => {
    const ts = parseTimestamp(line, year);
    let delay = i === 0 ? 0 : o.defaultGapMs;
    let realMs;
    if (ts) {
      if (clock === undefined) {
        clock = ts.ms;
        first = ts.ms;
        offsets.set(ts.family, 0);
      } else {
        if (!offsets.has(ts.family)) {
          const jump = ts.ms - clock;
          offsets.set(ts.family, Math.abs(jump) >= o.familyJumpMs ? jump : 0);
        }
        const t = ts.ms - offsets.get(ts.family);
        if (t >= clock) {
          if (i > 0) delay = Math.max(o.defaultGapMs, compress(t - clock) - spentSinceClock);
          clock = t;
          spentSinceClock = 0;
        }
      }
      realMs = clock - first;
    } else if (clock !== undefined) spentSinceClock += delay;
    at += delay;
    steps.push({ atMs: Math.round(at * 1000) / 1000, realMs, line, ...classify(line, engine) });
  });
  const httpAt = steps.findIndex((s) => s.http);
  const readyAt = engine === 'vllm' ? httpAt : steps.findIndex((s) => s.ready);
  return {
    engine,
    end: endOf(header),
    steps,
    httpAt,
    readyAt,
    durationMs: steps.length ? steps[steps.length - 1].atMs : 0,
    realSpanMs: clock === undefined ? 0 : clock - first,
  };
}

/** The log's lines from its bytes (a final newline ends the last line; no empty line after it). */
function splitLines(text) {
  const lines = String(text).split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The simulated host's witnesses after each step, as fractions: weights (0..1, never decreasing:
 * shard lines, or 1 once a later phase shows), and which memory phases have begun. A pure fold
 * over the steps, so the player and the tests agree.
 */
function witnessesAfter(steps) {
  const out = [];
  let weights = 0;
  const phases = new Set();
  const later = { weightsEnd: 1, kv: 1, graph: 1 };
  for (const s of steps) {
    if (s.shards) weights = Math.max(weights, s.shards.done / s.shards.total);
    for (const m of s.markers) {
      phases.add(m);
      if (later[m]) weights = 1;
    }
    // the HTTP server starts after the weights, the KV cache and the graphs
    if (s.http || s.ready) {
      weights = 1;
      phases.add('kv');
      phases.add('graph');
    }
    if (weights > 0 || phases.size) phases.add('init');
    out.push({ weights, init: phases.has('init'), kv: phases.has('kv'), graph: phases.has('graph') });
  }
  return out;
}

module.exports = {
  DEFAULT_OPTIONS,
  parseTimestamp,
  logYear,
  classify,
  withAddress,
  endOf,
  checkHeader,
  options,
  planReplay,
  splitLines,
  witnessesAfter,
};
