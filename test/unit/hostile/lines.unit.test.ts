import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
import { LineSplitter } from '../../../src/transport/lines';
import { assertLinear, check, TEN_MB, timed } from './hostileInputs';

describe('hostile input: LineSplitter (every stream from the host)', () => {
  it('any bytes in any chunking: the lines are the text split on \\n, none longer than the cap', () => {
    check(
      1701,
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.array(fc.nat(40), { maxLength: 30 }),
        fc.integer({ min: 1, max: 64 }),
        (bytes, cuts, cap) => {
          const lines: string[] = [];
          const s = new LineSplitter((l) => lines.push(l), cap);
          let at = 0;
          for (const c of cuts) {
            s.push(Buffer.from(bytes.subarray(at, at + c)));
            at += c;
          }
          s.push(Buffer.from(bytes.subarray(at)));
          s.end();
          const whole = Buffer.from(bytes).toString('utf8').split('\n');
          if (whole[whole.length - 1] === '') whole.pop();
          assert.deepEqual(
            lines,
            whole.map((l) => l.slice(0, cap)),
          );
        },
      ),
    );
  });

  it('a 10 MB line in 32 KiB chunks is one line, read in linear time (was a rescan per chunk)', function () {
    this.timeout(120_000);
    const chunk = Buffer.alloc(32 * 1024, 0x61);
    const readLine = (bytes: number): number[] => {
      const lines: number[] = [];
      const s = new LineSplitter((l) => lines.push(l.length));
      for (let i = 0; i < bytes / chunk.length; i++) s.push(chunk);
      s.push('\n');
      return lines;
    };
    assert.deepEqual(
      timed('LineSplitter: 10 MiB line in 320 chunks of 32 KiB', () => readLine(TEN_MB)),
      [TEN_MB],
    );
    assertLinear('LineSplitter: a 1 MiB line, then 10 MiB, in 32 KiB chunks', (scale) =>
      readLine((scale * TEN_MB) / 10),
    );
  });

  it('a line that never ends is kept only up to the cap (memory stays bounded)', () => {
    const lines: number[] = [];
    const s = new LineSplitter((l) => lines.push(l.length), 1000);
    for (let i = 0; i < 1000; i++) s.push(Buffer.alloc(1000, 0x62));
    s.push('\nnext\n');
    assert.deepEqual(lines, [1000, 4]);
  });
});
