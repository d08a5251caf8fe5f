import { strict as assert } from 'node:assert';
import { localHostRefusal, serverHosts } from '../../src/config/config';
import { parseSettings } from '../../src/config/parseSettings';
import { foldNodeStates, nodeIssue, type NodeState } from '../../src/monitor/state/multiNodeState';
import { serverReport } from '../../src/present/report';
import { restartLine } from '../../src/fronts/cli/format';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import type { LoadState, Signal } from '../../src/monitor/state/loadStateTypes';
import { distributedCause, distributedProblem } from '../../src/engine/distributed';
import { parseJournalLine } from '../../src/engine/logReader';
import { stripPrefix } from '../../src/engine/logGrammar';
import { KILLED, runningUnit, foldSignals } from '../util/loadFixtures';

const unit = runningUnit;
const run = foldSignals;
const tiedToRun: Signal[] = [
  { kind: 'restartRequested', at: 1 },
  { kind: 'tiedToRun', at: 2, unit: unit() },
];
const shards = (done: number, at: number): Signal => ({
  kind: 'journal',
  at,
  event: { type: 'shards', done, total: 10, percent: done * 10 },
  text: `shards ${done}/10`,
});
const ready = (at: number): Signal => ({ kind: 'completion', at, ok: true, detail: 'ok' });
const node = (label: string, state: LoadState | undefined): NodeState => ({ label, state });

describe('multi-node settings', () => {
  const nodes = [
    { host: 'gpu-a', unit: 'sglang-k2' },
    { host: 'gpu-b', unit: 'sglang-k2', username: 'kimi', port: 2222 },
  ];
  it("takes nodes, rank 0 first; the entry's host and unit are rank 0's", () => {
    const result = parseSettings({ servers: [{ name: 'k2', nodes }] });
    assert.ok(result.ok, JSON.stringify(result));
    const server = result.settings.servers[0]!;
    assert.equal(server.host, 'gpu-a');
    assert.equal(server.unit, 'sglang-k2.service');
    assert.equal(serverHosts(server), 'every node (gpu-a, gpu-b)');
    assert.deepEqual(
      server.nodes?.map((n) => [n.label, n.rank, n.host, n.port, n.username, n.unit]),
      [
        ['node 0 (gpu-a)', 0, 'gpu-a', undefined, undefined, 'sglang-k2.service'],
        ['node 1 (gpu-b)', 1, 'gpu-b', 2222, 'kimi', 'sglang-k2.service'],
      ],
    );
  });
  it('a node on "local" is refused on the UI side of a remote window, as a local single-node server is', () => {
    const result = parseSettings({
      servers: [{ name: 'k2', nodes: [nodes[0], { host: 'local', unit: 'sglang-k2' }] }],
    });
    assert.ok(result.ok);
    assert.match(localHostRefusal(result.settings.servers[0]!, 'ssh-remote') ?? '', /has host "local"/);
    const remote = parseSettings({ servers: [{ name: 'k2', nodes }] });
    assert.ok(remote.ok);
    assert.equal(localHostRefusal(remote.settings.servers[0]!, 'ssh-remote'), undefined);
  });

  for (const [what, raw, message] of [
    [
      'a top-level host with nodes',
      { name: 'k2', host: 'gpu-a', nodes },
      /kimiService\.servers\[0\]\.host must not be set when "nodes" is/,
    ],
    [
      'a top-level unit with nodes',
      { name: 'k2', unit: 'x', nodes },
      /kimiService\.servers\[0\]\.unit must not be set/,
    ],
    [
      'one node only',
      { name: 'k2', nodes: nodes.slice(0, 1) },
      /kimiService\.servers\[0\]\.nodes must NOT have fewer than 2 items/,
    ],
    [
      'a node without unit',
      { name: 'k2', nodes: [nodes[0], { host: 'gpu-b' }] },
      /kimiService\.servers\[0\]\.nodes\[1\]\.unit is missing/,
    ],
    [
      'a node host with a shell metacharacter',
      { name: 'k2', nodes: [nodes[0], { host: 'b;reboot', unit: 'u' }] },
      /kimiService\.servers\[0\]\.nodes\[1\]\.host "b;reboot" is not a host name/,
    ],
    [
      'the same node twice',
      { name: 'k2', nodes: [nodes[0], nodes[0]] },
      /nodes\[1\] is the same host and unit as nodes\[0\]/,
    ],
    ['no host, no nodes', { name: 'k2', unit: 'u' }, /kimiService\.servers\[0\]\.host is missing/],
  ] as const) {
    it(`refuses ${what}, saying which setting`, () => {
      const result = parseSettings({ servers: [raw] });
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.errors.join('\n'), message);
    });
  }
});

describe('multi-node state fold', () => {
  it("is the least advanced node's progress while loading, and ready only when every node is", () => {
    const a = run([...tiedToRun, shards(8, 3)]);
    const b = run([...tiedToRun, shards(3, 3)]);
    let folded = foldNodeStates([node('node 0 (a)', a), node('node 1 (b)', b)])!;
    assert.equal(folded.verdict, 'loading');
    assert.equal(folded.progress, b.progress);
    assert.equal(folded.shards?.done, 3);
    const aReady = run(
      [shards(10, 4), { kind: 'journal', at: 5, event: { type: 'ready' }, text: 'fired up' }, ready(6)],
      a,
    );
    assert.equal(aReady.verdict, 'ready');
    folded = foldNodeStates([node('node 0 (a)', aReady), node('node 1 (b)', b)])!;
    assert.notEqual(folded.verdict, 'ready', 'rank 0 alone is not the group');
    assert.equal(folded.readyAt, undefined);
    const bReady = run(
      [
        shards(10, 4),
        { kind: 'journal', at: 7, event: { type: 'graphsCaptured' }, text: 'Capture cuda graph end.' },
        ready(8),
      ],
      b,
    );
    folded = foldNodeStates([node('node 0 (a)', aReady), node('node 1 (b)', bReady)])!;
    assert.equal(folded.verdict, 'ready');
    assert.equal(folded.readyAt, 8, "the last node's ready");
  });

  it('a node that failed fails the server, named, with its lines and what a distributed error means', () => {
    const a = run([...tiedToRun, shards(10, 3)]);
    const line =
      'torch.distributed.DistStoreError: Timed out after 31 seconds waiting for clients. 8/16 clients joined.';
    const b = run([
      ...tiedToRun,
      { kind: 'journal', at: 4, event: { type: 'error', text: line, fatal: true }, text: line },
      {
        kind: 'unit',
        at: 5,
        unit: unit({ activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code', execMainStatus: 1 }),
      },
    ]);
    const folded = foldNodeStates([node('node 0 (a)', b), node('node 1 (b)', a)])!;
    assert.equal(folded.verdict, 'failed');
    assert.match(
      folded.failure!.summary,
      /^node 0 \(a\): the service exited with status 1 — only 8 of 16 ranks reached the rendezvous/,
    );
    assert.deepEqual(folded.failure!.lines, [line]);
  });

  it('a node failing after ready fails the ready server (rank 0 may still answer HTTP)', () => {
    const a = run([...tiedToRun, ready(3)]);
    const b = run([
      ...tiedToRun,
      ready(3),
      {
        kind: 'unit',
        at: 9,
        unit: unit(KILLED),
      },
    ]);
    const folded = foldNodeStates([node('node 0 (a)', a), node('node 1 (b)', b)])!;
    assert.equal(folded.verdict, 'failed');
    assert.match(folded.failure!.summary, /node 1 \(b\).*killed by signal 9/);
  });

  it('stalled names the least advanced node, not one that waits at a barrier', () => {
    const waiting = run([...tiedToRun, shards(10, 3), { kind: 'tick', at: 200_000, stallMs: 120_000 }]);
    const hung = run([...tiedToRun, shards(4, 3), { kind: 'tick', at: 200_000, stallMs: 120_000 }]);
    assert.equal(waiting.verdict, 'stalled');
    const folded = foldNodeStates([node('node 0 (a)', waiting), node('node 1 (b)', hung)])!;
    assert.equal(folded.verdict, 'stalled');
    assert.match(folded.lastSignal!.text, /^node 1 \(b\) makes no progress/);
    const moving = run([...tiedToRun, shards(4, 3)]);
    assert.equal(
      foldNodeStates([node('node 0 (a)', waiting), node('node 1 (b)', moving)])!.verdict,
      'loading',
      'the others still load',
    );
  });

  it('a node whose connection is down makes the server unreachable, never ready', () => {
    const a = run([...tiedToRun, ready(3)]);
    const b = run([...tiedToRun, ready(3), { kind: 'connection', at: 10, up: false, error: 'timed out' }]);
    const folded = foldNodeStates([node('node 0 (a)', a), node('node 1 (b)', b)])!;
    assert.equal(folded.verdict, 'unreachable');
    assert.equal(folded.connectionError, 'node 1 (b): timed out');
    assert.equal(nodeIssue([node('node 0 (a)', a), node('node 1 (b)', b)])?.label, 'node 1 (b)');
  });

  it('one node stopped while the others run is not a stopped server', () => {
    const a = run([...tiedToRun, shards(3, 3)]);
    const b = run([
      ...tiedToRun,
      {
        kind: 'unit',
        at: 4,
        unit: unit({ activeState: 'inactive', subState: 'dead', mainPid: 0, result: 'success', execMainStatus: 0 }),
      },
    ]);
    assert.equal(b.verdict, 'stopped');
    const folded = foldNodeStates([node('node 0 (a)', a), node('node 1 (b)', b)])!;
    assert.equal(folded.verdict, 'stopped');
    assert.match(folded.lastSignal!.text, /node 1 \(b\) is stopped .* while the other nodes run/);
    assert.equal(foldNodeStates([node('node 0 (a)', b), node('node 1 (b)', b)])!.verdict, 'stopped');
  });

  it('a node that gave up waiting (rendezvous timeout) is named after one that failed on its own, and lists who was behind', () => {
    const timeout =
      'torch.distributed.DistStoreError: Timed out after 9 seconds waiting for clients. 4/8 clients joined.';
    const exited = unit({
      activeState: 'failed',
      subState: 'failed',
      mainPid: 0,
      result: 'exit-code',
      execMainStatus: 1,
    });
    const gaveUp = run([
      ...tiedToRun,
      { kind: 'journal', at: 4, event: { type: 'error', text: timeout, fatal: true }, text: timeout },
      { kind: 'unit', at: 5, unit: exited },
    ]);
    const starting = run(tiedToRun);
    let folded = foldNodeStates([node('node 0 (a)', gaveUp), node('node 1 (b)', starting)])!;
    assert.match(
      folded.failure!.summary,
      /^node 0 \(a\): .* only 4 of 8 ranks reached the rendezvous .*; behind: node 1 \(b\) \(loading, starting\)$/,
    );
    const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.';
    const crashed = run([
      ...tiedToRun,
      { kind: 'journal', at: 4, event: { type: 'error', text: oom, fatal: true }, text: oom },
      { kind: 'unit', at: 6, unit: exited },
    ]);
    folded = foldNodeStates([node('node 0 (a)', gaveUp), node('node 1 (b)', crashed)])!;
    assert.match(folded.failure!.summary, /^node 1 \(b\): the service exited with status 1$/);
    assert.deepEqual(folded.failure!.lines, [oom]);
  });

  it('has no state before rank 0 has one', () => {
    assert.equal(foldNodeStates([node('node 0', undefined), node('node 1', run(tiedToRun))]), undefined);
  });

  it('the report names the node that holds the group back, and lists the nodes', () => {
    const waiting = run([...tiedToRun, shards(10, 3)]);
    const hung = run([...tiedToRun, shards(4, 3), { kind: 'tick', at: 200_000, stallMs: 120_000 }]);
    const nodes = [
      { label: 'node 0 (a)', host: 'a', state: waiting },
      { label: 'node 1 (b)', host: 'b', state: hung },
    ];
    const snapshot = {
      server: { name: 'k2', host: 'a', unit: 'u.service' },
      state: foldNodeStates(nodes),
      watching: true,
      loading: true,
      refusal: undefined,
      verification: undefined,
      nodes,
    } as unknown as ServerSnapshot;
    const report = serverReport(snapshot, 200_000);
    assert.equal(report.state, 'stalled');
    assert.match(report.summary, /node 1 \(b\) makes no progress/);
    assert.deepEqual(
      report.nodes?.map((n) => n.node),
      ['node 0 (a)', 'node 1 (b)'],
    );
    assert.match(
      restartLine('restarted', undefined, report, false),
      /^k2: restart issued on every node \(node 0 \(a\), node 1 \(b\)\)\. Now: /,
    );
  });
});

describe('multi-node journal lines (torch distributed, SGLang)', () => {
  const cases: [string, string][] = [
    [
      'torch.distributed.DistStoreError: Timed out after 31 seconds waiting for clients. 8/16 clients joined.',
      'rendezvous-timeout',
    ],
    [
      '[E1130 14:30:01.123456789 socket.cpp:1028] [c10d] The client socket has timed out after 30000ms while trying to connect to (10.213.7.2, 41000).',
      'rendezvous-unreachable',
    ],
    [
      "ValueError: TP rank 0 could finish the model loading, but there are other ranks that didn't finish loading. It is likely due to unexpected failures (e.g., OOM) or a slow node.",
      'ranks-did-not-finish-loading',
    ],
    [
      '[rank3]:[E227 16:30:43.526290891 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=32, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.',
      'nccl-timeout',
    ],
  ];
  for (const [line, kind] of cases) {
    it(`${kind}: recognised, and a fatal error line`, () => {
      assert.equal(distributedProblem(line)?.kind, kind);
      // torch's `[rank3]:` and glog stamp are prefixes: the event's text is what follows them.
      assert.deepEqual(parseJournalLine(line), [{ type: 'error', text: stripPrefix(line).text.trim(), fatal: true }]);
    });
  }
  it('the unreachable rendezvous names the address', () => {
    assert.match(distributedProblem(cases[1]![0])!.meaning, /10\.213\.7\.2:41000/);
    assert.equal(distributedCause(['x', cases[0]![0], 'Received sigquit'])?.kind, 'rendezvous-timeout');
  });
  it('"Capture cuda graph end." is the end of a rank\'s load', () => {
    assert.deepEqual(
      parseJournalLine(
        '[2026-11-30 10:00:00 TP8] Capture cuda graph end. Time elapsed: 0.61 s. mem usage=1.10 GB. avail mem=5.00 GB.',
      ),
      [{ type: 'phase', phase: 'capturing CUDA graphs' }, { type: 'graphsCaptured' }],
    );
    assert.deepEqual(
      parseJournalLine('[2026-11-30 10:00:00 TP8] Capture target decode CUDA graph end. elapsed=16.40 s'),
      [{ type: 'phase', phase: 'capturing CUDA graphs' }, { type: 'graphsCaptured' }],
    );
  });
});
