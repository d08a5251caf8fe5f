/**
 * The broker's pure parts (the protocol's checks, who tells its user, the folder's trust) and its
 * ownership over real Unix sockets in a temporary folder: one owner, a stale socket taken over,
 * two claims at once giving one owner, and an owner serving a client with a stand-in fleet.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { claim, release, type Claim } from '../../src/broker/claim';
import { BrokerClient, BrokerRefused } from '../../src/broker/client';
import { FocusTarget, OWNER_PEER } from '../../src/broker/focus';
import { BrokerOwner, type OwnerFleet } from '../../src/broker/owner';
import {
  encode,
  parseClientMessage,
  parseOwnerMessage,
  profileKey,
  PROTOCOL_VERSION,
  ProtocolError,
} from '../../src/broker/protocol';
import { SOCKET_NAME, unsafeDirReason } from '../../src/broker/socketDir';
import { fromWireEvent, toWireEvent } from '../../src/broker/wire';
import type { ServerProfile } from '../../src/config/config';
import type { RestartAnswer, ServerSnapshot } from '../../src/fleet/fleetTypes';
import { waitFor } from '../util/waitFor';

const line = (m: unknown) => JSON.stringify(m);

describe('broker protocol: every message checked on receipt', () => {
  it('parses the messages a client sends, and refuses unknown fields, wrong types and unknown verbs', () => {
    assert.deepEqual(parseClientMessage(line({ t: 'hello', v: 1, pid: 42, focused: true })), {
      t: 'hello',
      v: 1,
      pid: 42,
      focused: true,
    });
    assert.deepEqual(
      parseClientMessage(line({ t: 'call', id: 3, verb: 'restart', server: 'gpu1', asks: ['confirm'] })),
      {
        t: 'call',
        id: 3,
        verb: 'restart',
        server: 'gpu1',
        asks: ['confirm'],
      },
    );
    for (const bad of [
      'not json',
      line([1, 2]),
      line({ t: 'hello', v: 1, pid: 42, focused: true, extra: 1 }),
      line({ t: 'hello', v: '1', pid: 42, focused: true }),
      line({ t: 'call', id: 1, verb: 'rm -rf' }),
      line({ t: 'call', id: -1, verb: 'stop' }),
      line({ t: 'call', id: 1, verb: 'restart', asks: ['everything'] }),
      line({ t: 'answer', id: 1, value: 'maybe' }),
      line({ t: 'watchAll', names: [1] }),
      line({ t: 'shutdown' }),
    ])
      assert.throws(() => parseClientMessage(bad), ProtocolError, bad);
  });

  it('parses the owner messages, and refuses an event or snapshot without the fields the fronts read', () => {
    const snapshot = { server: { name: 'gpu1' }, watching: true, loading: false, state: { verdict: 'ready' } };
    const event = {
      t: 'event',
      notify: false,
      snapshot,
      event: { type: 'state', server: 'gpu1', body: { state: { verdict: 'ready' }, previous: { verdict: 'loading' } } },
    };
    assert.equal(parseOwnerMessage(line(event)).t, 'event');
    assert.equal(parseOwnerMessage(line({ t: 'welcome', v: 1, peer: 2, snapshots: [snapshot] })).t, 'welcome');
    for (const bad of [
      { ...event, event: { ...event.event, body: { previous: {} } } },
      { ...event, snapshot: { server: { name: 'gpu1' } } },
      { ...event, event: { ...event.event, type: 'forward' } },
      { t: 'welcome', v: 1, peer: 2, snapshots: [{ server: {}, watching: true, loading: false }] },
      { t: 'reply', id: 1, ok: false, error: { message: 'x', stack: 'y' } },
      { t: 'ask', id: 1, call: 1, question: 'delete' },
    ])
      assert.throws(() => parseOwnerMessage(line(bad)), ProtocolError, line(bad));
  });

  it('a server is the same on two peers only when the whole profile is (key order aside)', () => {
    assert.equal(profileKey({ name: 'a', host: 'h', port: 22 }), profileKey({ port: 22, host: 'h', name: 'a' }));
    assert.notEqual(profileKey({ name: 'a', host: 'h', port: 22 }), profileKey({ name: 'a', host: 'h', port: 2222 }));
  });

  it("an owner's end reaches a peer quiet unless that peer is the one to tell", () => {
    const server = { name: 'gpu1' } as ServerProfile;
    const state = { verdict: 'ready' } as never;
    const wire = toWireEvent({ type: 'end', server, outcome: { end: 'ready', state }, quiet: false })!;
    assert.equal((fromWireEvent(wire, server, true) as { quiet: boolean }).quiet, false);
    assert.equal((fromWireEvent(wire, server, false) as { quiet: boolean }).quiet, true);
    assert.equal(toWireEvent({ type: 'forward', server, forward: undefined }), undefined, 'forwards stay local');
  });
});

describe('broker: who tells its user', () => {
  it('the window focused now, else the one focused last, else the owner', () => {
    const focus = new FocusTarget();
    assert.equal(focus.target(), OWNER_PEER);
    focus.report(OWNER_PEER, false);
    focus.report(2, true);
    assert.equal(focus.target(), 2);
    focus.report(3, true);
    focus.report(2, false);
    assert.equal(focus.target(), 3);
    focus.report(3, false);
    assert.equal(focus.target(), 3, 'nobody focused: the one focused last');
    focus.left(3);
    assert.equal(focus.target(), 2);
  });
});

describe("broker: the socket's folder", () => {
  const stat = (patch: Partial<{ dir: boolean; link: boolean; uid: number; mode: number }>) => ({
    isDirectory: () => patch.dir ?? true,
    isSymbolicLink: () => patch.link ?? false,
    uid: patch.uid ?? 1000,
    mode: patch.mode ?? 0o40700,
  });
  it('trusted only when it is a real folder of this uid with mode 700', () => {
    assert.equal(unsafeDirReason(stat({}), 1000), undefined);
    assert.match(unsafeDirReason(stat({ uid: 0 }), 1000)!, /belongs to uid 0/);
    assert.match(unsafeDirReason(stat({ mode: 0o40755 }), 1000)!, /mode 755/);
    assert.match(unsafeDirReason(stat({ link: true }), 1000)!, /symbolic link/);
    assert.match(unsafeDirReason(stat({ dir: false }), 1000)!, /not a folder/);
  });
});

describe('broker: ownership over real Unix sockets', () => {
  let dir: string;
  const open: Claim[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-broker-'));
  });
  afterEach(() => {
    for (const c of open.splice(0)) {
      if (c.role === 'owner') release(c.socketPath, c.inode, c.server);
      else c.socket.destroy();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const take = async () => {
    const c = await claim(dir, (s) => s.on('error', () => undefined));
    open.push(c);
    return c;
  };

  it('the first comer owns the socket (mode 600), the next connects to it', async () => {
    const first = await take();
    assert.equal(first.role, 'owner');
    assert.equal(fs.statSync(path.join(dir, SOCKET_NAME)).mode & 0o777, 0o600);
    assert.equal((await take()).role, 'client');
    assert.deepEqual(fs.readdirSync(dir), [SOCKET_NAME], 'no leftover of the claim');
  });

  it('a socket file nobody listens on (its owner died) is removed and claimed', async () => {
    // A socket whose listener is gone, as a killed owner leaves it.
    const stale = path.join(dir, SOCKET_NAME);
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(stale, r));
    fs.linkSync(stale, `${stale}.keep`);
    await new Promise<void>((r) => server.close(() => r()));
    if (!fs.existsSync(stale)) fs.renameSync(`${stale}.keep`, stale);
    else fs.rmSync(`${stale}.keep`);
    assert.ok(fs.existsSync(stale));
    assert.equal((await take()).role, 'owner');
  });

  it('five claims at once: exactly one owner', async () => {
    const claims = await Promise.all([take(), take(), take(), take(), take()]);
    assert.equal(claims.filter((c) => c.role === 'owner').length, 1);
  });

  it('after the owner releases, the next comer owns it', async () => {
    const first = await take();
    assert.equal(first.role, 'owner');
    if (first.role === 'owner') release(first.socketPath, first.inode, first.server);
    open.splice(open.indexOf(first), 1);
    assert.equal((await take()).role, 'owner');
  });

  it('an owner serves a client: snapshots at once, events, a restart asked back, a peer of another version refused', async () => {
    const server = { name: 'gpu1', host: 'h', unit: 'u' } as ServerProfile;
    const snapshot = {
      server,
      state: { verdict: 'loading' },
      watching: true,
      loading: true,
    } as unknown as ServerSnapshot;
    const asked: string[] = [];
    const fleet: OwnerFleet = {
      server: (name) => (name === 'gpu1' ? server : undefined),
      snapshots: () => [snapshot],
      snapshot: () => snapshot,
      watchAll: () => [],
      attach: async () => undefined,
      restartAsking: async (_s, options) => {
        asked.push(`confirm=${await options.confirm?.()}`);
        const outcome = Promise.resolve(undefined);
        return { kind: 'restarted', issued: true, outcome, snapshot } as RestartAnswer;
      },
      stop: () => true,
      verifyParsers: async () => {
        throw new Error('not here');
      },
      connect: async () => undefined,
      forecast: async () => ({}) as never,
    };
    const logs: string[] = [];
    const owner = new BrokerOwner(fleet, (_l, m) => logs.push(m), false);
    const c = await claim(dir, (s) => owner.accept(s));
    open.push(c);
    const joined = await claim(dir, () => undefined);
    assert.equal(joined.role, 'client');
    if (joined.role !== 'client') return;
    const client = new BrokerClient(joined.socket);
    const events: string[] = [];
    const snapshots = await client.join(1234, true, {
      onEvent: (e, _s, notify) => events.push(`${e.type}:${notify}`),
      onClose: () => undefined,
    });
    assert.deepEqual(
      snapshots.map((s) => s.server.name),
      ['gpu1'],
    );
    owner.broadcast({ type: 'watching', server, watching: true });
    await waitFor(() => events.length === 1);
    assert.deepEqual(events, ['watching:true'], 'the focused client is the one to tell');
    assert.equal(owner.notifiesHere(), false);
    const call = client.call('restart', { server: 'gpu1', asks: ['confirm'] }, { ask: async () => true });
    assert.deepEqual(await call.reply, { kind: 'restarted', issued: true });
    assert.deepEqual(asked, ['confirm=true'], 'the confirmation was asked in the client');
    await assert.rejects(client.call('verify', { server: 'gpu1' }).reply, (e: { message: string }) =>
      /not here/.test(e.message),
    );
    await assert.rejects(client.call('stop', { server: 'nope' }).reply, (e: { message: string }) =>
      /no server "nope"/.test(e.message),
    );
    // A peer of another version: refused with the reason, nothing else.
    const other = await claim(dir, () => undefined);
    assert.equal(other.role, 'client');
    if (other.role !== 'client') return;
    other.socket.write(encode({ t: 'hello', v: PROTOCOL_VERSION + 1, pid: 1, focused: false }));
    const old = new BrokerClient(other.socket);
    await assert.rejects(old.join(1, false, { onEvent: () => undefined, onClose: () => undefined }), BrokerRefused);
    client.close();
    owner.close();
  });
});
