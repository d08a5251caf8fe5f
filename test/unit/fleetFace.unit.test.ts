// A fleet shown through another (the broker's BrokeredFleet) runs its composite verbs against the
// face it is given: what they read and call is what the fronts see, not the fleet's own state.
import { strict as assert } from 'node:assert';
import type { ServerProfile } from '../../src/config/config';
import { Fleet } from '../../src/fleet/fleet';
import type { ServerSnapshot } from '../../src/fleet/fleetTypes';
import type { FleetFace } from '../../src/fleet/fleetVerbs';
import { initialState } from '../../src/monitor/state/loadState';

const server = { name: 'gpu1', unit: 'sglang.service', host: 'gpu1' } as ServerProfile;

function faceShowing(snapshot: ServerSnapshot) {
  const calls: string[] = [];
  const face: FleetFace = {
    snapshot: () => {
      calls.push('snapshot');
      return snapshot;
    },
    onEvent: () => {
      calls.push('onEvent');
      return { dispose: () => undefined };
    },
    connect: async () => {
      calls.push('connect');
      throw new Error('the face refused');
    },
    watch: async () => {
      calls.push('watch');
      return undefined;
    },
  };
  return { face, calls };
}

function fleetWith(face: FleetFace): Fleet {
  const memento = { get: () => undefined, update: async () => undefined };
  return new Fleet(
    {
      ui: { trustUnknownHostKey: async () => false, requestPassphrase: async () => undefined },
      log: () => undefined,
      history: memento,
    },
    face,
  );
}

describe('a fleet behind a face', () => {
  it("status reports the face's snapshot (a watch the face shows, not one of its own)", async () => {
    const shown: ServerSnapshot = {
      server,
      state: { ...initialState(0), connected: false },
      watching: true,
      loading: false,
      refusal: undefined,
      verification: undefined,
    };
    const { face, calls } = faceShowing(shown);
    const fleet = fleetWith(face);
    try {
      assert.equal(await fleet.status(server, { timeoutMs: 1000 }), shown);
      assert.deepEqual(calls, ['snapshot']);
    } finally {
      fleet.dispose();
    }
  });

  it("logs and forecasts connect through the face (a client's connect is the owner's)", async () => {
    const { face, calls } = faceShowing({
      server,
      state: undefined,
      watching: false,
      loading: false,
      refusal: undefined,
      verification: undefined,
    });
    const fleet = fleetWith(face);
    try {
      const logs = await fleet.logs(server, 10);
      assert.equal(logs.journalError, 'the face refused');
      await assert.rejects(fleet.forecast(server), /the face refused/);
      assert.deepEqual(calls, ['connect', 'connect']);
    } finally {
      fleet.dispose();
    }
  });
});
