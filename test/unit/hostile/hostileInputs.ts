/**
 * Hostile input for the host-fed parsers: random and binary text, invalid
 * UTF-8 decoded as the product decodes it (Buffer -> utf8), lines built from the recognisers'
 * own words mixed with junk, huge numbers, NaN/Infinity, 10 MB lines and deeply nested JSON.
 * Not a test file: the *.unit.test.ts files next to it use it.
 */
import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
export { retainedHeap } from '../../util/heap';

/** One fixed seed per property (with fast-check's default number of runs). */
export function check<T>(seed: number, property: fc.IProperty<T>): void {
  fc.assert(property, { seed });
}

/** Bytes decoded the way LineSplitter / Buffer.toString do: invalid sequences become U+FFFD. */
export const invalidUtf8 = fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b).toString('utf8'));

export const numberWords = fc.constantFrom(
  '9'.repeat(400),
  '1e308',
  '1e400',
  '-1',
  '-0',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x1F',
  '00',
  '4294967296',
  '18446744073709551616',
  '1.5',
  '',
  ' ',
);

/** Text that is random, binary, invalid UTF-8 or control characters. */
export const junk = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  invalidUtf8,
  fc.string({
    unit: fc.constantFrom('\r', '\n', '\t', ' ', '\0', '\x1b[31m', '\u2028', '\ufeff', '\ud800'),
    maxLength: 60,
  }),
  numberWords,
);

/** Pieces of what the parsers look for, glued in random order with junk: reaches their deeper branches. */
export function wordSoup(words: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...words) }, { weight: 1, arbitrary: junk }), {
      maxLength: 12,
    })
    .map((p) => p.join(''));
}

/** A string of `n` characters made of `unit` repeated (and cut). */
export function repeatTo(unit: string, n: number): string {
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

export const TEN_MB = 10 * 1024 * 1024;

/** `[[[...]]]` nested `depth` levels (valid JSON, deeper than any recursive walk survives). */
export function deepArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Wall-clock times of the worst inputs; printed after the suite with KIMI_HOSTILE_TIMES=1. */
const times: { label: string; ms: number }[] = [];

export function timed<T>(label: string, f: () => T): T {
  const start = process.hrtime.bigint();
  try {
    return f();
  } finally {
    times.push({ label, ms: Number(process.hrtime.bigint() - start) / 1e6 });
  }
}

/**
 * CPU milliseconds of this process (user + system) that `f` takes, the least of `runs` calls: CPU
 * time, not wall time, so the other jobs of a busy machine do not count, and the least, because
 * what they still add (cache misses, the GC threads waiting for a core) only ever adds.
 */
function leastCpuMs(f: () => void, runs: number): number {
  let least = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    f();
    const used = process.cpuUsage(start);
    least = Math.min(least, (used.user + used.system) / 1000);
  }
  return least;
}

/**
 * "Linear time", compared: `run(10)` (ten times the input of `run(1)`) takes under 32 times the
 * CPU time, the least of `runs` calls each after a warm-up. Linear work gives about 10x, and up to
 * about 25x on a busy machine when the larger input leaves the young generation (a 10 MiB array
 * is collected as old objects); a rescan per chunk or a re-decode (quadratic) gives about 100x.
 * 32 is the geometric middle of the two.
 */
export function assertLinear(label: string, run: (scale: 1 | 10) => void, runs = 5): void {
  run(1);
  run(10);
  const small = leastCpuMs(() => run(1), runs);
  const large = leastCpuMs(() => run(10), runs);
  times.push({ label: `${label} (x1, CPU, least of ${runs})`, ms: small }, { label: `${label} (x10, CPU)`, ms: large });
  assert.ok(
    large < 32 * small,
    `${label}: ${large.toFixed(1)} ms of CPU at 10x the input against ${small.toFixed(1)} ms (${(large / small).toFixed(1)}x; linear is about 10x, quadratic about 100x)`,
  );
}

if (process.env['KIMI_HOSTILE_TIMES']) {
  process.on('exit', () => {
    for (const t of times) process.stdout.write(`${t.ms.toFixed(1).padStart(9)} ms  ${t.label}\n`);
  });
}

export const MiB = 1024 * 1024;
