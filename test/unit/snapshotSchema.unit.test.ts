import * as assert from 'assert';
import type { ServerProfile } from '../../src/config/config';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import { reduce } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { encode, parseOwnerMessage, ProtocolError } from '../../src/broker/protocol';
import { fromWireSnapshot, toWireSnapshot } from '../../src/broker/wire';
import { loadFixtures, replayLog } from '../util/replayLog';

const server = { name: 'gpu1', host: 'gpu1.example', unit: 'sglang.service' } as ServerProfile;

/** The value without its keys whose value is undefined (JSON leaves them out). */
function carried(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(carried);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, carried(v)]),
  );
}

/** A state that every witness has spoken into: bytes, GPU, CPU, the history's prior, a stand-in. */
function witnessed(state: LoadState): LoadState {
  const at = state.lastProgressAt + 1_000;
  const signals = [
    { kind: 'io', at, readBytes: 5e9, coldBytes: 4e9, totalBytes: 2e10 },
    { kind: 'io', at: at + 2_000, readBytes: 7e9, coldBytes: 5e9, totalBytes: 2e10 },
    { kind: 'gpu', at, usedMiB: 9_000, totalMiB: 80_000, perGpu: [{ index: 0, usedMiB: 9_000, totalMiB: 80_000 }] },
    { kind: 'cpu', at, cpuSeconds: 10 },
    { kind: 'cpu', at: at + 2_000, cpuSeconds: 14 },
    {
      kind: 'prior',
      at,
      prior: {
        coldBps: 2e8,
        totalMsRange: [60_000, 90_000],
        loads: 3,
        foreseenSteps: [
          { kind: 'deepgemm', ms: 9_000, lowMs: 8_000, highMs: 12_000, dir: '/cache/dg', from: 'history' },
        ],
      },
    },
    {
      kind: 'listener',
      at,
      standIn: { port: 30000, pid: 77, command: 'python3', service: 'container kimi', since: at - 5_000 },
    },
  ] as const;
  return signals.reduce((s, signal) => reduce(s, signal), state);
}

/** Snapshots of real loads (published logs replayed), with every optional part a front can show. */
function realSnapshots(): ServerSnapshot[] {
  const fixtures = loadFixtures();
  const ready = fixtures.find((f) => f.header.outcome === 'ready')!;
  const failed = fixtures.find((f) => f.header.outcome === 'failed')!;
  const readyState = replayLog(ready.lines, { probeReady: true }).final;
  const failedState = replayLog(failed.lines, {
    end: { exitCode: failed.header.exitCode ?? null, exitSignal: failed.header.exitSignal ?? null },
  }).final;
  const loading = witnessed(replayLog(ready.lines.slice(0, Math.ceil(ready.lines.length / 2))).afterLog);
  return [
    {
      server,
      state: readyState,
      watching: true,
      loading: false,
      refusal: undefined,
      verification: 'verified: 16/16 checks passed',
      verificationTable: '| check | result |',
      forwardedPort: 40123,
      lastLoad: {
        startedAt: 1_000,
        totalMs: 80_000,
        phases: [{ phase: 'loading weights', startMs: 2_000, ms: 50_000, previousMs: [48_000, undefined] }],
        steps: [{ kind: 'torch-compile', startMs: 60_000, ms: 9_000 }],
        weights: { bps: 4e8, source: 'cold', cachedShare: undefined },
        previous: [{ startedAt: 500, totalMs: 70_000 }],
        comparison: {
          previousTotalMs: 70_000,
          deltaMs: 10_000,
          same: false,
          reason: { kind: 'step', step: 'torch-compile', ms: 9_000, now: true },
        },
      },
      sshClient: {
        client: 'openssh',
        reason: 'CertificateFile /x-cert.pub (ssh2 has no certificates)',
        because: { kind: 'needs-openssh', gaps: ['certificate'] },
      },
    },
    {
      server,
      state: failedState,
      watching: false,
      loading: false,
      refusal: {
        kind: 'host-key-changed',
        message: 'the host key changed',
        hostKeyChange: { host: 'gpu1', offered: 'SHA256:new', known: ['SHA256:old'], file: '/k', lines: [3] },
      },
      verification: undefined,
    },
    {
      server,
      state: loading,
      watching: true,
      loading: true,
      refusal: undefined,
      verification: undefined,
      verifying: { word: 'verifying 5/16', line: 'verifying 5/16 · tool calls', long: false },
      nodes: [
        { label: 'rank 0', host: 'gpu1', state: loading },
        { label: 'rank 1', host: 'gpu2', state: undefined },
      ],
    },
    { server, state: undefined, watching: false, loading: false, refusal: undefined, verification: undefined },
  ];
}

/** The snapshot through the owner's encoder, a line of the socket, the client's parser and decoder. */
function throughTheSocket(snapshot: ServerSnapshot): ServerSnapshot {
  const line = encode({ t: 'welcome', v: 1, peer: 2, snapshots: [toWireSnapshot(snapshot)] });
  const parsed = parseOwnerMessage(line.trimEnd());
  assert.ok(parsed.t === 'welcome');
  return fromWireSnapshot(parsed.snapshots[0]!, server);
}

function welcomeOf(snapshot: unknown): string {
  return JSON.stringify({ t: 'welcome', v: 1, peer: 2, snapshots: [snapshot] });
}

describe('broker: a snapshot off the socket is checked whole', () => {
  const snapshots = realSnapshots();

  it('a real snapshot arrives as the owner sent it, every field kept', () => {
    assert.ok(snapshots[0]!.state?.verdict === 'ready' && snapshots[1]!.state?.verdict === 'failed');
    const loading = snapshots[2]!.state!;
    assert.ok(loading.io && loading.gpu && loading.cpu && loading.prior && loading.standIn, 'every witness spoke');
    for (const snapshot of snapshots) {
      const received = throughTheSocket(snapshot);
      assert.deepStrictEqual(received, carried(snapshot));
      assert.strictEqual(received.server, server, "this peer's own profile");
    }
  });

  it('a snapshot with a field that is not of its type is refused, saying which', () => {
    const wire = carried(toWireSnapshot(snapshots[2]!)) as Record<string, unknown> & { state: Record<string, unknown> };
    const bad: [string, unknown][] = [
      ['state.verdict', { ...wire, state: { ...wire.state, verdict: 'sleeping' } }],
      ['state.phase', { ...wire, state: { ...wire.state, phase: 7 } }],
      ['state.shards', { ...wire, state: { ...wire.state, shards: { done: 'x', total: 2 } } }],
      ['state.ioSamples', { ...wire, state: { ...wire.state, ioSamples: 'many' } }],
      ['state.progressMark', { ...wire, state: { ...wire.state, progressMark: undefined } }],
      ['state.standIn.service', { ...wire, state: { ...wire.state, standIn: { port: 1, since: 2 } } }],
      ['state.prior.foreseenSteps', { ...wire, state: { ...wire.state, prior: { foreseenSteps: [{ kind: 'x' }] } } }],
      ['watching', { ...wire, watching: 'yes' }],
      ['refusal.kind', { ...wire, refusal: { kind: 'gone', message: 'x' } }],
      [
        'nodes.1.state',
        {
          ...wire,
          nodes: [
            { label: 'a', host: 'b' },
            { label: 'c', host: 'd', state: {} },
          ],
        },
      ],
      ['forwardedPort', { ...wire, forwardedPort: 70_000 }],
      ['sshClient.because', { ...wire, sshClient: { client: 'ssh2', reason: 'r', because: { kind: 'magic' } } }],
      ['lastLoad', { ...wire, lastLoad: { startedAt: 1 } }],
    ];
    for (const [where, snapshot] of bad)
      assert.throws(
        () => parseOwnerMessage(welcomeOf(snapshot)),
        (e: unknown) => e instanceof ProtocolError && e.message.includes(`welcome: snapshots.0.${where}`),
        where,
      );
  });

  it("an event's load state is checked whole too", () => {
    const wire = carried(toWireSnapshot(snapshots[2]!)) as { state: Record<string, unknown> };
    const event = (state: unknown) =>
      JSON.stringify({
        t: 'event',
        notify: true,
        snapshot: wire,
        event: { type: 'state', server: 'gpu1', body: { state, previous: wire.state } },
      });
    assert.equal(parseOwnerMessage(event(wire.state)).t, 'event');
    assert.throws(
      () => parseOwnerMessage(event({ ...wire.state, gpuPeakMiB: 'lots' })),
      (e: unknown) => e instanceof ProtocolError && e.message.includes('event: event.body.state.gpuPeakMiB'),
    );
  });
});
