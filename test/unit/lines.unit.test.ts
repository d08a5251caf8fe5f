import { strict as assert } from 'node:assert';
import { CappedBuffer, finishOutput, LineSplitter } from '../../src/transport/lines';

describe('LineSplitter', () => {
  it('splits on \\n only, keeps \\r, flushes the last partial line', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push(Buffer.from('a\r\nprogress 1%\rprogress 2%\n'));
    s.push(Buffer.from('par'));
    s.push(Buffer.from('tial\n\nlast'));
    s.end();
    assert.deepEqual(lines, ['a\r', 'progress 1%\rprogress 2%', 'partial', '', 'last']);
  });

  it('decodes UTF-8 split across chunks', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('Loading ████ 50% ✓\n');
    for (const b of bytes) s.push(Buffer.from([b]));
    assert.deepEqual(lines, ['Loading ████ 50% ✓']);
  });
});

describe('CappedBuffer', () => {
  it('keeps the first maxBytes and notes truncation in stderr', () => {
    const out = new CappedBuffer(5);
    const err = new CappedBuffer(100);
    out.push('hello world');
    err.push('warn');
    assert.deepEqual(finishOutput(out, err), { stdout: 'hello', stderr: 'warn\n[kimi: stdout truncated]\n' });
  });
});
