import { strict as assert } from 'node:assert';
import type { ServerProfile } from '../../src/config/config';
import type { ServerSnapshot, WaitResult } from '../../src/fleet/fleetTypes';
import { rollingRestart, rollSummary, sameModelDefaults, type RollingFleet } from '../../src/fleet/restart/rolling';

const profile = (name: string) =>
  ({ name, host: `${name}.lan`, unit: 'sglang.service', url: 'http://127.0.0.1:30000' }) as unknown as ServerProfile;
const snapshot = (server: ServerProfile): ServerSnapshot => ({
  server,
  state: undefined,
  watching: true,
  loading: false,
  refusal: undefined,
  verification: undefined,
});

/** A fleet that records every verb in order; per server, how its wait and verification end. */
class FakeFleet implements RollingFleet {
  readonly calls: string[] = [];
  constructor(
    private readonly waits: Record<string, WaitResult['kind']> = {},
    private readonly verified: Record<string, boolean | undefined> = {},
  ) {}
  async restart(server: ServerProfile) {
    this.calls.push(`restart ${server.name}`);
    return { kind: 'restarted' as const };
  }
  async waitFor(server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }): Promise<WaitResult> {
    this.calls.push(`wait ${server.name} ${options.timeoutMs}`);
    return { kind: this.waits[server.name] ?? 'ready', snapshot: snapshot(server) } as WaitResult;
  }
  async verifyParsers(server: ServerProfile) {
    this.calls.push(`verify ${server.name}`);
    const allPassed = server.name in this.verified ? this.verified[server.name] : true;
    return { summary: allPassed ? 'Parsers verified: 6/6 checks passed' : 'Parsers: 4/6 checks passed', allPassed };
  }
}

describe('rolling restart: one server at a time', () => {
  const [a, b, c] = [profile('a'), profile('b'), profile('c')];

  it('restarts each only after the previous one is ready and verified', async () => {
    const fleet = new FakeFleet();
    const steps: string[] = [];
    const result = await rollingRestart(fleet, [a, b, c], {
      loadTimeoutMs: 1000,
      onProgress: (p) => steps.push(p.text),
    });
    assert.deepEqual(result, { kind: 'done', restarted: ['a', 'b', 'c'] });
    assert.deepEqual(fleet.calls, [
      'restart a',
      'wait a 1000',
      'verify a',
      'restart b',
      'wait b 1000',
      'verify b',
      'restart c',
      'wait c 1000',
      'verify c',
    ]);
    assert.equal(steps[0], 'restarting a (1/3)');
    assert.equal(steps[steps.length - 1], 'c ready, Parsers verified: 6/6 checks passed (3/3)');
    assert.equal(rollSummary(result), 'Rolling restart done: a, b, c restarted, ready and verified.');
  });

  it('a failed load stops the roll: the next server is not touched, and the summary says which and why', async () => {
    const fleet = new FakeFleet({ b: 'failed' });
    const result = await rollingRestart(fleet, [a, b, c], { loadTimeoutMs: 1000 });
    assert.equal(result.kind, 'failed');
    assert.deepEqual(fleet.calls, ['restart a', 'wait a 1000', 'verify a', 'restart b', 'wait b 1000']);
    assert.ok(result.kind === 'failed');
    assert.equal(result.server, 'b');
    assert.deepEqual(result.skipped, ['c']);
    assert.equal(
      rollSummary(result),
      'Rolling restart stopped at b: it failed. A restarted, ready and verified. Not restarted: c.',
    );
  });

  it('parsers that do not all pass stop the roll as a failure', async () => {
    const fleet = new FakeFleet({}, { a: false });
    const result = await rollingRestart(fleet, [a, b], { loadTimeoutMs: 1000 });
    assert.ok(result.kind === 'failed');
    assert.equal(result.server, 'a');
    assert.match(result.reason, /parsers were not verified: Parsers: 4\/6 checks passed/);
    assert.deepEqual(fleet.calls, ['restart a', 'wait a 1000', 'verify a']);
  });

  it('a verification that cannot run (undefined) is not a pass', async () => {
    const result = await rollingRestart(new FakeFleet({}, { a: undefined }), [a, b], { loadTimeoutMs: 1000 });
    assert.equal(result.kind, 'failed');
  });

  it('a timeout, a stop and a refused connection each stop the roll with their reason', async () => {
    for (const [kind, reason] of [
      ['timeout', /not ready in time/],
      ['stopped', /stopped/],
      ['not watched', /cannot be watched/],
    ] as const) {
      const result = await rollingRestart(new FakeFleet({ a: kind }), [a, b], { loadTimeoutMs: 1000 });
      assert.ok(result.kind === 'failed', kind);
      assert.match(result.reason, reason);
    }
  });

  it('a verb that throws (the host refused the connection) stops the roll with its message', async () => {
    const fleet = new FakeFleet();
    fleet.restart = async () => {
      throw new Error('the SSH login was refused');
    };
    const result = await rollingRestart(fleet, [a, b], { loadTimeoutMs: 1000 });
    assert.ok(result.kind === 'failed');
    assert.equal(result.reason, 'the SSH login was refused');
    assert.deepEqual(result.skipped, ['b']);
  });

  it('cancelled during a load: stops before the next server and says so', async () => {
    const controller = new AbortController();
    const fleet = new FakeFleet();
    const wait = fleet.waitFor.bind(fleet);
    fleet.waitFor = async (server, options) => {
      const result = await wait(server, options);
      if (server.name === 'b') {
        controller.abort();
        return { ...result, kind: 'cancelled' } as WaitResult;
      }
      return result;
    };
    const result = await rollingRestart(fleet, [a, b, c], { loadTimeoutMs: 1000, signal: controller.signal });
    assert.ok(result.kind === 'cancelled');
    assert.equal(result.server, 'b');
    assert.deepEqual(result.restarted, ['a']);
    assert.ok(!fleet.calls.includes('restart c'));
    assert.match(rollSummary(result), /^Rolling restart cancelled at b: cancelled by the user \(its load goes on\)\./);
  });

  it("proposes the servers with the active server's model path, or just the active one when unknown", () => {
    const paths = new Map([
      ['a', '/models/K2'],
      ['b', '/models/K2'],
      ['c', '/models/other'],
      ['d', undefined],
    ]);
    assert.deepEqual(sameModelDefaults(['a', 'b', 'c', 'd'], paths, 'b'), ['a', 'b']);
    assert.deepEqual(sameModelDefaults(['a', 'b', 'c', 'd'], paths, 'd'), ['d']);
    assert.deepEqual(sameModelDefaults(['a'], paths, undefined), []);
  });
});
