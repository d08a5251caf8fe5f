import { strict as assert } from 'node:assert';
import { Emitter } from '../../src/util/emitter';

describe('Emitter', () => {
  it('fires to every listener until disposed, and a disposed subscription hears nothing', () => {
    const e = new Emitter<number>();
    const a: number[] = [];
    const b: number[] = [];
    e.on((n) => a.push(n));
    const sub = e.on((n) => b.push(n));
    e.fire(1);
    sub.dispose();
    e.fire(2);
    e.dispose();
    e.fire(3);
    assert.deepEqual(a, [1, 2]);
    assert.deepEqual(b, [1]);
  });

  it('without onListenerError a throwing listener reaches the caller of fire', () => {
    const e = new Emitter<void>();
    e.on(() => {
      throw new Error('listener bug');
    });
    assert.throws(() => e.fire(), /listener bug/);
  });

  it('with onListenerError a throwing listener is reported and the others still run', () => {
    const errors: unknown[] = [];
    const e = new Emitter<string>((error) => errors.push(error));
    const heard: string[] = [];
    e.on(() => {
      throw new Error('listener bug');
    });
    e.on((s) => heard.push(s));
    e.fire('up');
    assert.deepEqual(heard, ['up']);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /listener bug/);
  });
});
