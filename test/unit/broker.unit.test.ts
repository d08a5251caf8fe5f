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
import { LastFocused, OWNER_PEER } from '../../src/broker/focus';
import { BrokerOwner, type OwnerFleet } from '../../src/broker/owner';
import {
  encode,
  MAX_LINE_BYTES,
  parseClientMessage,
  parseOwnerMessage,
  profileKey,
  PROTOCOL_VERSION,
  ProtocolError,
} from '../../src/broker/protocol';
import { brokerEndpoint, SOCKET_NAME, unsafeDirReason } from '../../src/broker/socketDir';
import { BrokeredTransport, ownerRoute } from '../../src/broker/brokeredTransport';
import { HOLD_MAX_MS, isBehind, TakeoverHold } from '../../src/broker/takeover';
import { openTunnel } from '../../src/broker/tunnel';
import { fromWireEvent, toWireEvent } from '../../src/broker/wire';
import type { ServerProfile } from '../../src/config/config';
import type { FleetEvent, RestartAnswer, ServerSnapshot } from '../../src/fleet/fleetTypes';
import { initialState } from '../../src/monitor/state/loadState';
import type { LoadState } from '../../src/monitor/state/loadStateTypes';
import { listingCommand } from '../../src/engine/tokenizer/modelFolder';
import { journalTailCommand } from '../../src/target/journalctl';
import { shellLine } from '../../src/transport/shell';
import { waitFor } from '../util/waitFor';

const line = (m: unknown) => JSON.stringify(m);

/** The first line the socket receives (what it has when it closes without one). */
function firstLine(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end >= 0) resolve(text.slice(0, end + 1));
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(text));
  });
}

describe('broker protocol: every message checked on receipt', () => {
  it('parses the messages a client sends, and refuses unknown fields, wrong types and unknown verbs', () => {
    assert.deepEqual(parseClientMessage(line({ t: 'hello', v: 1, pid: 42, focused: true })), {
      t: 'hello',
      v: 1,
      pid: 42,
      focused: true,
    });
    assert.deepEqual(
      parseClientMessage(line({ t: 'call', id: 3, verb: 'restart', fields: { server: 'gpu1', asks: ['choose'] } })),
      {
        t: 'call',
        id: 3,
        verb: 'restart',
        fields: { server: 'gpu1', asks: ['choose'] },
      },
    );
    const fields = { server: 'gpu1', op: 'unit-journal-tail', arg: '200', timeoutMs: 9 };
    const exec = { t: 'call', id: 4, verb: 'host', fields };
    assert.deepEqual(parseClientMessage(line(exec)), exec);
    const tunnel = { t: 'tunnel', v: PROTOCOL_VERSION, server: 'gpu1', host: '127.0.0.1', port: 30001 };
    assert.deepEqual(parseClientMessage(line(tunnel)), tunnel);
    for (const bad of [
      'not json',
      line([1, 2]),
      line({ ...exec, fields: { ...fields, command: 'id' } }),
      line({ ...exec, fields: { ...fields, op: 'shell' } }),
      line({ ...exec, verb: 'exec', fields: { server: 'gpu1', command: 'id' } }),
      line({ t: 'call', id: 3, verb: 'restart', fields: { server: 'gpu1', asks: ['confirm'] } }),
      line({ ...exec, fields: { ...fields, extra: 1 } }),
      line({ ...exec, fields: { server: 'gpu1' } }),
      line({ ...exec, server: 'gpu1' }),
      line({ ...tunnel, port: 70000 }),
      line({ ...tunnel, extra: true }),
      line({ t: 'hello', v: 1, pid: 42, focused: true, extra: 1 }),
      line({ t: 'hello', v: '1', pid: 42, focused: true }),
      line({ t: 'call', id: 1, verb: 'rm -rf', fields: { server: 'gpu1' } }),
      line({ t: 'call', id: 1, verb: 'toString', fields: { server: 'gpu1' } }),
      // Protocol 5 named the watch verb `attach`: no verb of this version.
      line({ t: 'call', id: 1, verb: 'attach', fields: { server: 'gpu1' } }),
      line({ t: 'call', id: -1, verb: 'stop', fields: { server: 'gpu1' } }),
      line({ t: 'call', id: 1, verb: 'restart', fields: { server: 'gpu1', asks: ['everything'] } }),
      line({ t: 'answer', id: 1, value: 'maybe' }),
      line({ t: 'watchAll', names: [1] }),
      line({ t: 'shutdown' }),
    ])
      assert.throws(() => parseClientMessage(bad), ProtocolError, bad);
  });

  it('parses the owner messages, and refuses an event or snapshot without the fields the fronts read', () => {
    const state = { ...initialState(1_000), verdict: 'ready' };
    const snapshot = { server: { name: 'gpu1' }, watching: true, loading: false, state };
    const event = {
      t: 'event',
      notify: false,
      snapshot,
      event: { type: 'state', server: 'gpu1', body: { state, previous: { ...state, verdict: 'loading' } } },
    };
    assert.equal(parseOwnerMessage(line(event)).t, 'event');
    assert.equal(parseOwnerMessage(line({ t: 'welcome', v: 1, peer: 2, snapshots: [snapshot] })).t, 'welcome');
    // A verification's progress reaches every window (its tooltip), as the fleet fired it.
    const server = { name: 'gpu1' } as ServerProfile;
    const verifying = { word: 'tool calls', line: 'check 5 of 16: tool calling', long: false };
    const wire = toWireEvent({ type: 'verifying', server, verifying })!;
    const parsed = parseOwnerMessage(line({ ...event, event: wire, snapshot: { ...snapshot, verifying } }));
    assert.ok(parsed.t === 'event');
    assert.deepEqual(fromWireEvent(parsed.event, server, false), { type: 'verifying', server, verifying });
    assert.throws(
      () => parseOwnerMessage(line({ ...event, event: { ...wire, body: { verifying: { word: 'x' } } } })),
      ProtocolError,
    );
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

  it('a reply of a verb that returns nothing has no value (JSON drops it) and is still a reply', () => {
    // watch and connect reply with no value: a reply refused for it made the client drop its owner.
    const reply = parseOwnerMessage(line({ t: 'reply', id: 7, ok: true }));
    assert.deepEqual(reply, { t: 'reply', id: 7, ok: true });
    assert.equal(
      parseOwnerMessage(line({ t: 'reply', id: 8, ok: true, value: { kind: 'restarted', issued: true } })).t,
      'reply',
    );
  });

  it('a server is the same on two peers only when the whole profile is (key order aside)', () => {
    assert.equal(profileKey({ name: 'a', host: 'h', port: 22 }), profileKey({ port: 22, host: 'h', name: 'a' }));
    assert.notEqual(profileKey({ name: 'a', host: 'h', port: 22 }), profileKey({ name: 'a', host: 'h', port: 2222 }));
  });

  it("an owner's end reaches a peer quiet unless that peer is the one to tell", () => {
    const server = { name: 'gpu1' } as ServerProfile;
    const state = { ...initialState(1_000), verdict: 'ready' as const };
    const wire = toWireEvent({ type: 'end', server, outcome: { end: 'ready', state }, quiet: false })!;
    const snapshot = { server: { name: 'gpu1' }, watching: true, loading: false, state };
    const parsed = parseOwnerMessage(line({ t: 'event', notify: true, snapshot, event: wire }));
    assert.ok(parsed.t === 'event');
    assert.equal((fromWireEvent(parsed.event, server, true) as { quiet: boolean }).quiet, false);
    assert.equal((fromWireEvent(parsed.event, server, false) as { quiet: boolean }).quiet, true);
    assert.equal(toWireEvent({ type: 'forward', server, forward: undefined }), undefined, 'forwards stay local');
  });
});

describe('broker: who tells its user', () => {
  it('the window focused now, else the one focused last, else the owner', () => {
    const focus = new LastFocused();
    assert.equal(focus.teller(), OWNER_PEER);
    focus.report(OWNER_PEER, false);
    focus.report(2, true);
    assert.equal(focus.teller(), 2);
    focus.report(3, true);
    focus.report(2, false);
    assert.equal(focus.teller(), 3);
    focus.report(3, false);
    assert.equal(focus.teller(), 3, 'nobody focused: the one focused last');
    focus.left(3);
    assert.equal(focus.teller(), 2);
  });
});

describe("broker: the socket's folder", () => {
  it('listens on broker.sock in its folder; on Windows on a named pipe per user and folder', () => {
    assert.equal(
      brokerEndpoint('/run/user/1000/kimi-service', 'linux', 'ann'),
      '/run/user/1000/kimi-service/broker.sock',
    );
    assert.equal(brokerEndpoint('/tmp/kimi-service-501', 'darwin', 'ann'), '/tmp/kimi-service-501/broker.sock');
    const temp = String.raw`C:\Users\ann\AppData\Local\Temp\kimi-service-user`;
    const pipe = brokerEndpoint(temp, 'win32', 'ann smith');
    assert.ok(pipe.startsWith(String.raw`\\.\pipe\kimi-service-ann_smith-`), pipe);
    assert.match(pipe.slice(String.raw`\\.\pipe\kimi-service-ann_smith-`.length), /^[0-9a-f]{12}$/);
    assert.notEqual(pipe, brokerEndpoint(String.raw`C:\other`, 'win32', 'ann smith'), 'another folder, another pipe');
    assert.notEqual(pipe, brokerEndpoint(temp, 'win32', 'bob'), "another user's");
  });

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
      state: { ...initialState(1_000), verdict: 'loading' },
      watching: true,
      loading: true,
    } as unknown as ServerSnapshot;
    const asked: string[] = [];
    const fleet: OwnerFleet = {
      server: (name) => (name === 'gpu1' ? server : undefined),
      snapshots: () => [snapshot],
      snapshot: () => snapshot,
      watchAll: () => [],
      watch: async () => undefined,
      confirmsRestarts: () => true,
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
      exec: async () => ({ stdout: '', stderr: '', code: 0 }),
      openStream: async () => {
        throw new Error('no stream');
      },
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
      onEvent: (e, _s, notify) => events.push(`${e.event.type}:${notify}`),
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
    // The owner's confirmRestart decides: a peer that declares no question is asked all the same.
    const questions: string[] = [];
    const call = client.call('restart', { server: 'gpu1' }, { ask: async (q) => (questions.push(q), true) });
    assert.deepEqual(await call.reply, { kind: 'restarted', issued: true });
    assert.deepEqual(asked, ['confirm=true'], 'the confirmation was asked in the client');
    assert.deepEqual(questions, ['confirm']);
    // A forced restart skips the rule's question: the owner asks first, and a no restarts nothing.
    const forced = client.call('restart', { server: 'gpu1', force: true }, { ask: async () => false });
    assert.equal(await forced.reply, null);
    assert.deepEqual(asked, ['confirm=true'], 'nothing restarted after a no');
    await assert.rejects(client.call('verify', { server: 'gpu1' }).reply, (e: { message: string }) =>
      /not here/.test(e.message),
    );
    await assert.rejects(client.call('stop', { server: 'nope' }).reply, (e: { message: string }) =>
      /no server "nope"/.test(e.message),
    );
    // A reply is checked against its verb's schema: a forecast without its prior is not one.
    await assert.rejects(client.call('forecast', { server: 'gpu1' }).reply, (e: { message: string }) =>
      /answered forecast with something else/.test(e.message),
    );
    // A peer of another version: refused with the reason, nothing else.
    const other = await claim(dir, () => undefined);
    assert.equal(other.role, 'client');
    if (other.role !== 'client') return;
    other.socket.write(encode({ t: 'hello', v: PROTOCOL_VERSION + 1, pid: 1, focused: false }));
    const old = new BrokerClient(other.socket);
    await assert.rejects(old.join(1, false, { onEvent: () => undefined, onClose: () => undefined }), BrokerRefused);
    // A window of the previous version (its watch verb was `attach`): refused at its hello, told why.
    const previous = await claim(dir, () => undefined);
    assert.equal(previous.role, 'client');
    if (previous.role !== 'client') return;
    const answer = firstLine(previous.socket);
    previous.socket.write(encode({ t: 'hello', v: PROTOCOL_VERSION - 1, pid: 1, focused: false }));
    const refusal = parseOwnerMessage(await answer);
    assert.equal(refusal.t, 'refuse');
    assert.match(
      refusal.t === 'refuse' ? refusal.reason : '',
      new RegExp(`speaks broker protocol ${PROTOCOL_VERSION}, this one ${PROTOCOL_VERSION - 1} \\(another version`),
    );
    previous.socket.destroy();
    client.close();
    owner.close();
  });

  it("a client's commands and HTTP go through the owner's connection: named operations it builds, and a tunnel to the server's url only", async () => {
    const echo = net.createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const port = (echo.address() as net.AddressInfo).port;
    const server = {
      name: 'gpu1',
      host: 'h',
      unit: 'sglang.service',
      sudo: true,
      url: `http://127.0.0.1:${port}`,
    } as ServerProfile;
    const snapshot = { server, state: undefined, watching: false, loading: false } as unknown as ServerSnapshot;
    const ran: string[] = [];
    const tail = shellLine(journalTailCommand('sglang.service', 200));
    const listing = listingCommand('/models/k2');
    const fleet = {
      server: (name: string) => (name === 'gpu1' ? server : undefined),
      snapshots: () => [snapshot],
      snapshot: () => snapshot,
      exec: async (_s: ServerProfile, command: string, options: { stdin?: string; timeoutMs?: number }) => {
        ran.push(`${command} <${options.stdin ?? ''}> ${options.timeoutMs ?? '-'}`);
        return { stdout: command === listing ? 'x'.repeat(MAX_LINE_BYTES) : 'out', stderr: '', code: 3 };
      },
      openStream: (_s: ServerProfile, host: string, p: number) =>
        new Promise<NodeJS.ReadWriteStream>((resolve, reject) => {
          const socket = net.connect(p, host, () => resolve(socket));
          socket.once('error', reject);
        }),
    } as unknown as OwnerFleet;
    const logs: string[] = [];
    const owner = new BrokerOwner(fleet, (_l, m) => logs.push(m), false);
    const c = await claim(dir, (s) => owner.accept(s));
    open.push(c);
    const joined = await claim(dir, () => undefined);
    if (joined.role !== 'client') return assert.fail('a client');
    const client = new BrokerClient(joined.socket);
    await client.join(1, false, { onEvent: () => undefined, onClose: () => undefined });
    const reply = await client.call('host', { server: 'gpu1', op: 'unit-journal-tail', arg: '200', timeoutMs: 500 })
      .reply;
    assert.deepEqual(reply, { stdout: 'out', stderr: '', code: 3 });
    assert.deepEqual(ran, [`${tail} <> 500`], 'built by the owner from its own entry');
    // Not an operation of this entry, a value that is not its kind, input where none is taken: refused, nothing runs.
    for (const [fields, why] of [
      [{ op: 'compose-write', stdin: 'x' }, /is not an operation of gpu1/],
      [{ op: 'unit-journal-tail', arg: '200; id' }, /takes a whole number/],
      [{ op: 'model-list', arg: 'relative/path' }, /takes a path/],
      [{ op: 'unit-cat', stdin: 'x' }, /takes no input/],
      [{ op: 'unit-cat', arg: '1' }, /takes no value/],
    ] as const)
      await assert.rejects(client.call('host', { server: 'gpu1', ...fields }).reply, (e: { message: string }) =>
        why.test(e.message),
      );
    assert.equal(ran.length, 1, 'nothing else ran');
    assert.equal(logs.filter((l) => /refused a call of peer/.test(l)).length, 5, "each refusal in the owner's log");
    // An output too large for one line is not passed (the client's connection would end): the client runs it.
    assert.deepEqual(await client.call('host', { server: 'gpu1', op: 'model-list', arg: '/models/k2' }).reply, {
      tooLarge: true,
    });
    const own: string[] = [];
    const inner = { exec: async (command: string) => (own.push(command), { stdout: 'own', stderr: '', code: 0 }) };
    const route = ownerRoute(client, server, path.join(dir, SOCKET_NAME), (call) => call.reply);
    const transport = new BrokeredTransport(inner as never, async () => route);
    assert.equal((await transport.exec(tail)).stdout, 'out', "through the owner's connection");
    assert.equal((await transport.exec(listing)).stdout, 'own', 'too large: on its own');
    assert.equal((await transport.exec('echo hi')).stdout, 'own', 'none of the operations: on its own');
    assert.deepEqual(own, [listing, 'echo hi']);
    assert.ok(!ran.some((r) => r.startsWith('echo')), 'never on the owner');
    const socketPath = path.join(dir, SOCKET_NAME);
    const stream = await openTunnel(socketPath, 'gpu1', '127.0.0.1', port);
    const back = new Promise<string>((resolve) => stream.once('data', (d: Buffer) => resolve(d.toString())));
    stream.write('ping through the owner');
    assert.equal(await back, 'ping through the owner');
    stream.destroy();
    await assert.rejects(openTunnel(socketPath, 'gpu1', '127.0.0.1', port + 1), /is not the url of gpu1/);
    await assert.rejects(openTunnel(socketPath, 'nope', '127.0.0.1', port), /no server "nope"/);
    client.close();
    owner.close();
    await new Promise((resolve) => echo.close(resolve));
  });
});

describe('broker: a takeover does not show a ready server loading again', () => {
  const unit = (invocationId: string) => ({ invocationId, activeState: 'active' }) as never;
  const state = (verdict: string, extra: Record<string, unknown> = {}) =>
    ({ verdict, progress: undefined, unit: unit('run1'), ...extra }) as unknown as LoadState;
  const server = { name: 'gpu1' } as ServerProfile;
  const stateEvent = (s: LoadState): FleetEvent => ({ type: 'state', server, state: s, previous: s });

  it('a fresh watch of the same run is behind while it replays loading and warming up; a new run or a failure is not', () => {
    const ready = state('ready');
    assert.equal(isBehind(state('loading', { unit: undefined }), ready), true);
    assert.equal(isBehind(state('warming up'), ready), true);
    assert.equal(isBehind(state('ready'), ready), false);
    assert.equal(isBehind(state('failed'), ready), false);
    assert.equal(isBehind(state('unreachable'), ready), false);
    assert.equal(isBehind(state('loading', { unit: unit('run2') }), ready), false, 'a new run is news');
    const at40 = state('loading', { progress: 0.4 });
    assert.equal(isBehind(state('loading', { progress: 0.1 }), at40), true);
    assert.equal(isBehind(state('loading', { progress: 0.5 }), at40), false);
  });

  it('holds the replayed states, shows the first end with its state; keeps the old verification of the same run', () => {
    let now = 0;
    const hold = new TakeoverHold(() => now);
    hold.hold('gpu1', { state: state('ready'), verification: 'verified: 16/16', verificationTable: 't' });
    assert.deepEqual(hold.filter(stateEvent(state('loading', { unit: undefined }))), []);
    assert.deepEqual(hold.filter(stateEvent(state('warming up'))), []);
    assert.equal(hold.isHeld('gpu1'), true);
    const done = state('ready', { readyAt: 5 });
    const shown = hold.filter({ type: 'end', server, outcome: { end: 'ready', state: done }, quiet: true });
    assert.deepEqual(
      shown.map((e) => (e.type === 'state' ? `state:${e.previous.verdict}->${e.state.verdict}` : e.type)),
      ['state:ready->ready', 'end'],
    );
    assert.equal(hold.isHeld('gpu1'), false);
    assert.deepEqual(hold.checksOf('gpu1', done), { verification: 'verified: 16/16', verificationTable: 't' });
    assert.equal(hold.checksOf('gpu1', state('loading', { unit: unit('run2') })), undefined, 'not for a new run');
    // Held too long: the fresh state is shown whatever it says.
    hold.hold('gpu1', { state: state('ready'), verification: undefined });
    now = HOLD_MAX_MS;
    assert.equal(hold.filter(stateEvent(state('warming up'))).length, 1);
  });
});
