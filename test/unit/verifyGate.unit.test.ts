/**
 * Which servers have their parsers checked (fleet/checks/verifyParsersOn.ts notReadyForChecks), the one
 * rule the palette command, the LM tools, MCP and the CLI share. Pure.
 */
import * as assert from 'assert';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import { notReadyForChecks } from '../../src/fleet/checks/verifyParsersOn';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';

const server = { name: 'gpu1', unit: 'sglang.service' } as ServerSnapshot['server'];

function snapshot(state: Partial<LoadState> | undefined, watching = true): ServerSnapshot {
  return {
    server,
    state: state && { ...initialState(0), connected: true, ...state },
    watching,
    loading: false,
    refusal: undefined,
    verification: undefined,
  } as ServerSnapshot;
}

describe('parser checks only on a ready server (notReadyForChecks)', () => {
  it('ready: checked', () => {
    assert.equal(
      notReadyForChecks(snapshot({ verdict: 'ready', http: 'healthy', completion: { ok: true } as never })),
      undefined,
    );
  });

  it('loading, warming up or stalled after a full look: refused as loading (wait first)', () => {
    for (const verdict of ['loading', 'warming up', 'stalled'] as const)
      assert.equal(notReadyForChecks(snapshot({ verdict, http: 'refused' })), 'loading', verdict);
  });

  it('failed, stopped or unhealthy: refused as down (its logs say why)', () => {
    for (const verdict of ['failed', 'stopped', 'unhealthy'] as const)
      assert.equal(notReadyForChecks(snapshot({ verdict, http: 'error' })), 'down', verdict);
  });

  it('no full look yet (the port not asked), nothing watched, or no state: the checks run and speak for themselves', () => {
    assert.equal(notReadyForChecks(snapshot({ verdict: 'loading' })), undefined, 'the port not asked yet');
    assert.equal(notReadyForChecks(snapshot({ verdict: 'loading', http: 'healthy' })), undefined, 'no completion yet');
    assert.equal(notReadyForChecks(snapshot({ verdict: 'failed', http: 'error' }, false)), undefined, 'not watched');
    assert.equal(notReadyForChecks(snapshot(undefined)), undefined, 'no state');
  });
});
