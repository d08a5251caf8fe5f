import { strict as assert } from 'node:assert';
import type { ServerProfile } from '../../src/config/config';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import { reduce } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { serverRows } from '../../src/fronts/vscode/serversView/serversViewModel';
import { statusText } from '../../src/fronts/vscode/status/statusBarText';
import { otherServers } from '../../src/fronts/vscode/status/statusOthers';
import { commandTarget, serverNameOf } from '../../src/fronts/vscode/commands/serverArgument';
import { runningUnit, halfLoaded } from '../util/loadFixtures';

const profile = (name: string) =>
  ({
    name,
    host: `${name}.lan`,
    port: 22,
    unit: 'sglang-k26.service',
    url: 'http://127.0.0.1:30001',
    sudo: false,
  }) as unknown as ServerProfile;
const unit = runningUnit({ mainPid: 7 });

const loading = (): LoadState => halfLoaded(unit);
const failed = (): LoadState =>
  reduce(loading(), {
    kind: 'unit',
    at: 4000,
    unit: { ...unit, activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 },
  });
const ready = (readyAt: number): LoadState => ({
  ...loading(),
  verdict: 'ready',
  phase: 'ready',
  readyAt,
  progress: 1,
});

const snap = (name: string, state: LoadState | undefined, extra: Partial<ServerSnapshot> = {}): ServerSnapshot => ({
  server: profile(name),
  state,
  watching: true,
  loading: false,
  refusal: undefined,
  verification: undefined,
  ...extra,
});

describe('servers view rows', () => {
  const now = 3_600_000 + 125_000;

  it("one row per server: the report's state word, uptime (from the process start) when ready, the parser check, the active one marked", () => {
    const [a, b, c] = serverRows(
      [
        snap('a', ready(125_000), { verification: 'Parsers verified' }),
        snap('b', failed()),
        snap('c', loading(), { loading: true }),
      ],
      'a',
      now,
    );
    assert.equal(a!.label, 'a (active)');
    assert.equal(
      a!.description,
      'ready · up 1h 2m · Parsers verified',
      'up since the process started (1 s), not since ready',
    );
    assert.equal(a!.icon, 'check');
    assert.equal(a!.contextValue, 'kimiServer.active.watching');
    assert.equal(a!.serverName, 'a');
    assert.match(b!.description, /^failed · the service exited with status 1/);
    assert.match(b!.tooltip, /Last error: the service exited with status 1/);
    assert.equal(b!.icon, 'error');
    assert.equal(b!.contextValue, 'kimiServer.watching');
    assert.match(c!.description, /^loading 45%/);
    assert.match(c!.tooltip, /Parsers: not verified yet/);
    const [forwarded] = serverRows([snap('f', ready(125_000), { forwardedPort: 41234 })], undefined, now);
    assert.equal(forwarded!.description, 'ready · up 1h 2m · forwarded to localhost:41234');
    assert.match(forwarded!.tooltip, /http:\/\/127\.0\.0\.1:30001 is forwarded to http:\/\/localhost:41234/);
  });

  it('a quiet step is named on the row, with its ETA; a stalled row says since when and what was last seen', () => {
    let quiet = reduce(loading(), {
      kind: 'journal',
      at: 5000,
      event: { type: 'shards', done: 64, total: 64, percent: 100 },
      text: 'shards 64/64',
    });
    quiet = reduce(quiet, { kind: 'prior', at: 5100, prior: { afterWeightsMs: 20_000, loads: 2 } });
    // (named once the bar has stood at 100 % for a while: a hand-over of seconds is no step)
    quiet = reduce(quiet, { kind: 'tick', at: 16_000, stallMs: 600_000 });
    const [row] = serverRows([snap('q', quiet, { loading: true })], undefined, 20_000);
    // (not timed by the previous loads: at least 75 s from the step's naming)
    assert.equal(row!.description, 'loading 90% · processing weights after the last shard · about 71s left');
    assert.match(
      row!.tooltip,
      /q: loading 90% \(loading weights, 64\/64 shards, processing weights after the last shard\)/,
    );
    const stalled = reduce(loading(), { kind: 'tick', at: 3000 + 130_000, stallMs: 120_000 });
    const [s2] = serverRows([snap('s', stalled, { loading: true })], undefined, 3000 + 130_000);
    assert.match(s2!.description, /^stalled 45%/);
    assert.equal(s2!.icon, 'warning');
  });

  it('nothing watched, or a refusal: the same words as the status bar', () => {
    /** The status bar's icon and state word for this server, from the status bar's own text. */
    const statusBarWords = (sn: ServerSnapshot) => {
      const text = statusText({ server: sn.server, state: sn.state, watching: sn.watching, refusal: sn.refusal }, now);
      const m = /^\$\(([^)]+)\) Kimi: (.+)$/.exec(text);
      assert.ok(m, text);
      return { icon: m[1], word: m[2] };
    };
    const snapshots = [
      snap('idle', undefined, { watching: false }),
      snap('stopped watching', loading(), { watching: false }),
      snap('refused', loading(), {
        watching: false,
        refusal: { kind: 'host-key-changed', message: 'HOST KEY CHANGED' },
      }),
    ];
    const rows = serverRows(snapshots, undefined, now);
    snapshots.forEach((sn, i) => {
      const bar = statusBarWords(sn);
      assert.equal(rows[i]!.icon, bar.icon, sn.server.name);
      assert.equal(rows[i]!.description.split(' · ')[0], bar.word, sn.server.name);
    });
    const [idle, , refused] = rows;
    assert.equal(idle!.description, 'not watched');
    assert.equal(idle!.contextValue, 'kimiServer');
    assert.equal(refused!.description, 'host key changed · HOST KEY CHANGED', 'and the refusal itself');
    assert.equal(refused!.icon, 'error');
  });

  it('a multi-node server has a child row per node (rank 0 first), acting on its server', () => {
    const [row] = serverRows(
      [
        snap('mn', loading(), {
          nodes: [
            { label: 'rank 0', host: 'gpu1', state: loading() },
            { label: 'rank 1', host: 'gpu2', state: undefined },
          ],
        }),
      ],
      'mn',
      now,
    );
    assert.deepEqual(
      row!.nodes.map((n) => [n.label, n.description, n.serverName]),
      [
        ['rank 0', 'gpu1 · loading 45% (loading weights, 32/64 shards)', 'mn'],
        ['rank 1', 'gpu2 · not watched', 'mn'],
      ],
    );
  });
});

describe('status bar: the count of the other servers not ready', () => {
  it('none, one failed, several in different states', () => {
    assert.equal(otherServers([snap('a', ready(0)), snap('b', ready(0))], 'a').text, '');
    const one = otherServers([snap('a', ready(0)), snap('b', failed())], 'a');
    assert.equal(one.text, ' · 1 failed');
    assert.match(one.lines[0]!, /^b: failed \(the service exited with status 1/);
    const two = otherServers(
      [snap('a', ready(0)), snap('b', failed()), snap('c', undefined, { watching: false })],
      'a',
    );
    assert.equal(two.text, ' · 2 not ready');
    assert.deepEqual(
      two.lines.map((l) => l.split(':')[0]),
      ['b', 'c'],
    );
  });
});

describe('command arguments: a name, a row, or nothing', () => {
  it('reads a server name from a string or a { serverName } row', () => {
    assert.equal(serverNameOf('gpu1'), 'gpu1');
    assert.equal(serverNameOf({ serverName: 'gpu2', kind: 'server' }), 'gpu2');
    assert.equal(serverNameOf(undefined), undefined);
    assert.equal(serverNameOf(''), undefined);
    assert.equal(serverNameOf({ path: '/x' }), undefined);
    assert.equal(serverNameOf({ serverName: 3 }), undefined);
  });

  it('a row that did not arrive is lost, not "the active server"; no argument at all is', () => {
    const row = { kind: 'server', id: 'server/gpu2', serverName: 'gpu2' };
    assert.deepEqual(commandTarget([row, null]), { kind: 'named', name: 'gpu2' }, "a row's menu");
    assert.deepEqual(commandTarget(['gpu1']), { kind: 'named', name: 'gpu1' }, 'a notification button');
    assert.deepEqual(commandTarget([]), { kind: 'none' }, 'the palette, a key, the status bar');
    assert.deepEqual(commandTarget([{ path: '/x' }]), { kind: 'none' }, "an editor menu's URI");
    // What VS Code passes from a row's menu when the tree was refreshed between the click and the run.
    assert.deepEqual(commandTarget([undefined, null]), { kind: 'lost' });
    assert.deepEqual(commandTarget([null]), { kind: 'lost' });
    assert.deepEqual(commandTarget([undefined]), { kind: 'lost' });
  });
});
