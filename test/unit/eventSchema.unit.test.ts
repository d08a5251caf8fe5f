import * as assert from 'assert';
import type { ServerProfile } from '../../src/config/config';
import type { FleetEvent } from '../../src/fleet/fleetTypes';
import { Refusals } from '../../src/fleet/sessions/refusedServers';
import { encode, parseOwnerMessage, ProtocolError } from '../../src/broker/protocol';
import { fromWireEvent, toWireEvent } from '../../src/broker/wire';
import { TransportError } from '../../src/transport/transport';
import { loadFixtures, replayLog } from '../util/replayLog';

const server = { name: 'gpu1', host: 'gpu1.example', unit: 'sglang.service' } as ServerProfile;

/** The value without its keys whose value is undefined (JSON leaves them out); errors kept as they are. */
function carried(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(carried);
  if (typeof value !== 'object' || value === null || value instanceof Error) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, carried(v)]),
  );
}

/** Events as the fleet fires them: real load states (published logs replayed), refusals through the fleet's own Refusals. */
function realEvents(): FleetEvent[] {
  const fixtures = loadFixtures();
  const ready = fixtures.find((f) => f.header.outcome === 'ready')!;
  const failed = fixtures.find((f) => f.header.outcome === 'failed')!;
  const run = replayLog(ready.lines, { probeReady: true });
  const failedState = replayLog(failed.lines, {
    end: { exitCode: failed.header.exitCode ?? null, exitSignal: failed.header.exitSignal ?? null },
  }).final;
  const fired: FleetEvent[] = [];
  const refusals = new Refusals(
    () => undefined,
    (e) => fired.push(e),
  );
  const hostKeyChange = { host: 'gpu1', offered: 'SHA256:new', known: ['SHA256:old'], file: '/k', lines: [3] };
  refusals.refused(server, new TransportError('host-key-changed', 'the host key changed', hostKeyChange));
  refusals.connected(server);
  refusals.refused(server, new TransportError('auth', 'login refused'));
  return [
    { type: 'state', server, state: run.final, previous: run.afterLog },
    { type: 'end', server, outcome: { end: 'ready', state: run.final }, quiet: false },
    { type: 'end', server, outcome: { end: 'failed', state: failedState, message: 'exited 1' }, quiet: true },
    { type: 'alert', server, alert: { kind: 'completion', level: 'warn', message: 'the completion failed' } },
    ...fired,
    {
      type: 'verified',
      server,
      summary: '15/16 checks passed',
      allPassed: false,
      checks: [
        { name: 'server flags', status: 'pass', evidence: 'reasoning_parser=kimi_k2' },
        {
          name: 'reasoning (stream)',
          status: 'fail',
          evidence: 'the reasoning came in content',
          request: 'a question, streamed',
          consequence: 'agents see the thinking as the answer',
          fault: 'reasoningInContent',
        },
        { name: 'tool-call ids', status: 'inconclusive', evidence: 'time ran out', cause: 'time' },
      ],
    },
    { type: 'verified', server, summary: 'could not run', allPassed: undefined, checks: [] },
    {
      type: 'verifying',
      server,
      verifying: { word: 'verifying 5/16', line: 'verifying 5/16 · tool calls', long: true },
    },
    { type: 'watching', server, watching: true },
  ];
}

const snapshot = { server: { name: 'gpu1' }, watching: true, loading: false };

function eventLine(event: unknown): string {
  return encode({ t: 'event', event: event as never, snapshot: snapshot as never, notify: true }).trimEnd();
}

/** The event through the owner's encoder, a line of the socket, the client's parser and decoder. */
function throughTheSocket(event: FleetEvent): FleetEvent {
  const parsed = parseOwnerMessage(eventLine(toWireEvent(event)));
  assert.ok(parsed.t === 'event');
  return fromWireEvent(parsed.event, server, true);
}

describe('broker: an event off the socket is checked whole', () => {
  const events = realEvents();

  it('every kind of event the fleet fires arrives as it was fired', () => {
    const kinds = new Set(events.map((e) => e.type));
    assert.deepEqual(
      [...kinds].sort(),
      ['alert', 'connected', 'end', 'refused', 'state', 'verified', 'verifying', 'watching'],
      'every kind that travels',
    );
    assert.ok(events[0]!.type === 'state' && events[0]!.state.verdict === 'ready', 'a real load');
    for (const event of events) {
      const received = throughTheSocket(event);
      assert.deepStrictEqual(carried(received), carried(event), event.type);
      assert.strictEqual(received.server, server, "this peer's own profile");
      if (event.type === 'refused') {
        assert.ok(received.type === 'refused' && received.error instanceof TransportError, 'a TransportError again');
        assert.equal(received.error.kind, event.error.kind);
        assert.equal(received.error.message, event.error.message);
        assert.deepEqual(received.error.hostKeyChange, event.error.hostKeyChange);
      }
    }
  });

  it('a malformed event is refused, naming the field', () => {
    const wire = (type: FleetEvent['type']) =>
      JSON.parse(JSON.stringify(toWireEvent(events.find((e) => e.type === type)!))) as {
        type: string;
        server: string;
        body: Record<string, Record<string, unknown>>;
      };
    const state = wire('state');
    const end = wire('end');
    const verified = wire('verified');
    const bad: [string, unknown][] = [
      ['event.body.previous: Invalid input', { ...state, body: { state: state.body.state } }],
      ['event.body.state.verdict', { ...state, body: { ...state.body, state: { ...state.body.state, verdict: 9 } } }],
      [
        'event.body.state: unknown field "junk"',
        { ...state, body: { ...state.body, state: { ...state.body.state, junk: { deeper: [1, 2] } } } },
      ],
      [
        'event.body.previous.unit: unknown field "extra"',
        {
          ...state,
          body: {
            ...state.body,
            previous: { ...state.body.previous, unit: { ...(state.body.state!.unit as object), extra: 1 } },
          },
        },
      ],
      ['event.body.outcome.end', { ...end, body: { ...end.body, outcome: { ...end.body.outcome, end: 'exploded' } } }],
      ['event.body.quiet', { ...end, body: { outcome: end.body.outcome } }],
      ['event.body.alert.level', { ...wire('alert'), body: { alert: { kind: 'url', level: 'panic', message: 'x' } } }],
      ['event.body.refusal.kind', { ...wire('refused'), body: { refusal: { kind: 'gone', message: 'x' } } }],
      [
        'event.body: unknown field "error"',
        { ...wire('refused'), body: { ...wire('refused').body, error: { kind: 'auth', message: 'x' } } },
      ],
      [
        'event.body.checks.0.status',
        { ...verified, body: { ...verified.body, checks: [{ name: 'reasoning', status: 'great', evidence: '' }] } },
      ],
      [
        'event.body.checks.0.name',
        { ...verified, body: { ...verified.body, checks: [{ name: 'rm -rf', status: 'pass', evidence: '' }] } },
      ],
      ['event.body.verifying.long', { ...wire('verifying'), body: { verifying: { word: 'x', line: 'y' } } }],
      ['event.body.watching', { ...wire('watching'), body: { watching: 'yes' } }],
      ['event.body: unknown field "x"', { ...wire('connected'), body: { x: 1 } }],
      ['event.type', { ...wire('watching'), type: 'forward' }],
      ['event.server', { ...wire('watching'), server: 42 }],
    ];
    for (const [where, event] of bad)
      assert.throws(
        () => parseOwnerMessage(eventLine(event)),
        (e: unknown) => e instanceof ProtocolError && e.message.startsWith(`event: ${where}`),
        where,
      );
  });
});
