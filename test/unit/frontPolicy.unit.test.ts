import { strict as assert } from 'node:assert';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile } from '../../src/config/config';
import { BackgroundWatches } from '../../src/fleet/sessions/backgroundWatches';
import { NoticeGate, REPEAT_FAILURE_QUIET_MS } from '../../src/fleet/logs/notices';
import type { MementoLike } from '../../src/monitor/history/history';

class Memory implements MementoLike {
  readonly data = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.data.delete(key);
    else this.data.set(key, value);
  }
}

describe('notices a front says once (NoticeGate)', () => {
  it('the same failure again within the quiet time is not notified; another one, or later, is', () => {
    const gate = new NoticeGate();
    assert.equal(gate.failure('a', 'OOM', 0), true);
    assert.equal(gate.failure('a', 'OOM', REPEAT_FAILURE_QUIET_MS - 1), false);
    assert.equal(gate.failure('b', 'OOM', 1), true, 'per server');
    assert.equal(gate.failure('a', 'port taken', 2), true);
    assert.equal(gate.failure('a', 'port taken', 3 + REPEAT_FAILURE_QUIET_MS), true);
  });

  it('an unreadable journal is said once per server; other alerts every time', () => {
    const gate = new NoticeGate();
    assert.deepEqual(
      [gate.alert('a', 'journal'), gate.alert('a', 'journal'), gate.alert('b', 'journal')],
      [true, false, true],
    );
    assert.deepEqual([gate.alert('a', 'recovered'), gate.alert('a', 'recovered')], [true, true]);
  });

  it('a server only watched in the background: its refusal goes to the log unless it is active or a command named it', () => {
    const gate = new NoticeGate();
    gate.watchedInBackground(['a', 'b']);
    assert.equal(gate.refusal('a', 'c'), false);
    assert.equal(gate.refusal('a', 'a'), true);
    gate.touched('b');
    assert.equal(gate.refusal('b', 'c'), true);
    assert.equal(gate.refusal('c', undefined), true);
  });
});

describe('background watches and the resume offer (BackgroundWatches)', () => {
  const settings = (() => {
    const parsed = parseSettings({
      servers: [
        { name: 'a', host: 'h1', unit: 'u' },
        { name: 'b', host: 'h2', unit: 'u' },
        { name: 'c', host: 'h3', unit: 'u' },
      ],
      activeServer: 'a',
    });
    assert.ok(parsed.ok);
    return parsed.settings;
  })();
  const fleet = () => {
    const skipped: string[][] = [];
    return {
      skipped,
      watchAll(skip: (server: ServerProfile) => boolean) {
        const started = settings.servers.filter((s) => !skip(s)).map((s) => s.name);
        skipped.push(started);
        return started;
      },
    };
  };

  it('nothing before the resume offer; then every server but the active one, one offered back, one stopped by the user', async () => {
    const marks = new Memory();
    const f = fleet();
    const watches = new BackgroundWatches(f, marks, (s) => s.name === 'c');
    assert.deepEqual(watches.start(settings), [], 'not before the offer');
    await watches.remember('b', 1000);
    assert.deepEqual(
      (await watches.takeOffers(settings)).map((s) => s.name),
      ['b'],
    );
    assert.equal(marks.get('kimi.watchesUnderWay'), undefined, 'the marks are taken');
    assert.deepEqual(watches.start(settings, new Set(['b'])), [], 'a: active, b: offered back, c: unreachable');
    const open = new BackgroundWatches(f, new Memory(), () => false);
    await open.takeOffers(settings);
    open.stoppedBy(['b']);
    assert.deepEqual(open.start(settings), ['c']);
    open.commanded('b');
    assert.deepEqual(open.start(settings), ['b', 'c']);
    assert.deepEqual(open.start({ ...settings, watchAfterReady: false }), [], 'kimiService.watchAfterReady off');
  });

  it('a watch under way leaves its mark until it ends; a closing window keeps it', async () => {
    const marks = new Memory();
    const watches = new BackgroundWatches(fleet(), marks, () => false);
    await watches.remember('a', 5);
    await watches.remember('b', 6);
    await watches.remember('a', undefined);
    assert.deepEqual(marks.get('kimi.watchesUnderWay'), { b: 6 });
    watches.dispose();
    await watches.remember('b', undefined);
    assert.deepEqual(marks.get('kimi.watchesUnderWay'), { b: 6 });
  });
});
