import { strict as assert } from 'node:assert';
import { AnnouncedOutput, CappedBuffer, finishOutput, LineSplitter } from '../../src/transport/lines';

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

describe('AnnouncedOutput', () => {
  it('takes the announced process group off the first line, even split, and holds the rest until read', () => {
    const out = new AnnouncedOutput(true);
    const groups: number[] = [];
    out.onPgid = (n) => groups.push(n);
    out.push(Buffer.from('12'));
    assert.equal(out.pgid, undefined);
    out.push(Buffer.from('34\nfirst '));
    out.push(Buffer.from('line\n'));
    assert.equal(out.pgid, 1234);
    assert.deepEqual(groups, [1234]);
    const read: string[] = [];
    out.read((d) => read.push(d.toString()));
    out.push(Buffer.from('more'));
    assert.deepEqual(read, ['first ', 'line\n', 'more']);
  });

  it('a first line that is no process group (or 0, 1) is dropped without a group; unannounced output passes whole', () => {
    const bad = new AnnouncedOutput(true);
    bad.push(Buffer.from('1\nx'));
    assert.equal(bad.pgid, undefined);
    const plain = new AnnouncedOutput(false);
    plain.push(Buffer.from('42\nx'));
    const read: string[] = [];
    plain.read((d) => read.push(d.toString()));
    assert.equal(plain.pgid, undefined);
    assert.deepEqual(read, ['42\nx']);
  });
});
