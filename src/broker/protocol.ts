/**
 * The broker's wire protocol (docs/broker.md): one JSON object per line, each message checked on
 * receipt before anything reads it. A peer of another protocol version is refused with a reason
 * and watches on its own. No I/O here.
 */
import { printable } from '../config/text';
import { parseLoadState, parseSnapshotBody, type SnapshotBody } from './snapshotSchema';
import { choiceSchema, isVerb, parseFields, type Choice, type FieldsOf, type Question, type Verb } from './verbs';

export { MAX_COMMAND_CHARS, type Choice, type Question, type Verb } from './verbs';

/** Bumped on any change of a message's shape: peers of two versions never exchange more than hello/refuse. */
export const PROTOCOL_VERSION = 4;
/** A line longer than this is not a message of ours: the connection is dropped. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/** A command's output larger than this is not passed between peers: `{ tooLarge: true }`, the client runs it itself. */
export const MAX_SHARED_OUTPUT_BYTES = MAX_LINE_BYTES - 64 * 1024;

/** A fleet event as it travels: the server by name (each peer has its own profile of it). */
export interface WireEvent {
  readonly type: 'state' | 'end' | 'alert' | 'refused' | 'connected' | 'verified' | 'verifying' | 'watching';
  readonly server: string;
  /** The event's other fields, as the fleet fired them (`server` excepted). */
  readonly body: Record<string, unknown>;
}
const EVENT_TYPES: readonly WireEvent['type'][] = [
  'state',
  'end',
  'alert',
  'refused',
  'connected',
  'verified',
  'verifying',
  'watching',
];

/** A server snapshot as it travels: `server` is the owner's profile (a peer mirrors it only when its own is the same). */
export type WireSnapshot = SnapshotBody & { readonly server: Record<string, unknown> & { name: string } };

export interface WireError {
  readonly message: string;
  /** A TransportError's kind (host key, login, DNS...), rebuilt as one on the other side. */
  readonly kind?: string;
  readonly name?: string;
}

/** A call of a verb with the fields its entry in verbs.ts declares. */
export interface CallMessage<V extends Verb = Verb> {
  readonly t: 'call';
  readonly id: number;
  readonly verb: V;
  readonly fields: FieldsOf<V>;
}

export type ClientMessage =
  | { readonly t: 'hello'; readonly v: number; readonly pid: number; readonly focused: boolean }
  | { readonly t: 'focus'; readonly focused: boolean }
  /** The servers this peer would watch in the background (the owner watches the union). */
  | { readonly t: 'watchAll'; readonly names: readonly string[] }
  | CallMessage
  /**
   * The first and only line of a tunnel connection (brokeredTransport.ts): the owner opens a TCP
   * stream to host:port from the server's host and pipes this connection's bytes to it.
   */
  | { readonly t: 'tunnel'; readonly v: number; readonly server: string; readonly host: string; readonly port: number }
  | { readonly t: 'answer'; readonly id: number; readonly value: boolean | Choice };

export type OwnerMessage =
  | { readonly t: 'welcome'; readonly v: number; readonly peer: number; readonly snapshots: readonly WireSnapshot[] }
  | { readonly t: 'refuse'; readonly v: number; readonly reason: string }
  /** `notify`: this peer is the one that tells its user (the window focused last). */
  | { readonly t: 'event'; readonly event: WireEvent; readonly snapshot: WireSnapshot; readonly notify: boolean }
  | { readonly t: 'reply'; readonly id: number; readonly ok: true; readonly value?: unknown }
  | { readonly t: 'reply'; readonly id: number; readonly ok: false; readonly error: WireError }
  /** How the watch a call started (attach, restart) ended; absent: handed over or cancelled. */
  | { readonly t: 'outcome'; readonly id: number; readonly outcome?: Record<string, unknown> }
  | {
      readonly t: 'ask';
      readonly id: number;
      readonly call: number;
      readonly question: Question;
      readonly reason?: string;
    }
  /** A line of a verification the peer asked for. */
  | { readonly t: 'log'; readonly call: number; readonly line: string };

export function encode(message: ClientMessage | OwnerMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/** Why a line is not a valid message (thrown by the parsers). */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

type Obj = Record<string, unknown>;

function object(value: unknown, what: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProtocolError(`${what} is not an object`);
  return value as Obj;
}

function onlyKeys(o: Obj, allowed: readonly string[], what: string): void {
  for (const key of Object.keys(o))
    if (!allowed.includes(key)) throw new ProtocolError(`${what} has an unknown field "${printable(key, 40)}"`);
}

function int(o: Obj, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new ProtocolError(`${what}.${key} is not a whole number`);
  return v;
}

function bool(o: Obj, key: string, what: string): boolean {
  if (typeof o[key] !== 'boolean') throw new ProtocolError(`${what}.${key} is not a boolean`);
  return o[key];
}

function str(o: Obj, key: string, what: string, max = 4096): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length > max) throw new ProtocolError(`${what}.${key} is not a string`);
  return v;
}

function optional<T>(o: Obj, key: string, read: (o: Obj, key: string, what: string) => T, what: string): T | undefined {
  return o[key] === undefined ? undefined : read(o, key, what);
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw new ProtocolError(`${what} is not one of ${allowed.join(', ')}`);
  return value as T;
}

function parseLine(line: string): Obj {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ProtocolError('a line is not JSON');
  }
  return object(value, 'the message');
}

/** A snapshot names its server; the rest is checked whole, as ServerSnapshot declares it (snapshotSchema.ts). */
function snapshot(value: unknown, what: string): WireSnapshot {
  const s = object(value, what);
  const server = object(s.server, `${what}.server`);
  const name = str(server, 'name', `${what}.server`, 200);
  const body = parseSnapshotBody(s, (why) => new ProtocolError(`${what}: ${printable(why, 120)}`));
  return { ...body, server: { ...server, name } };
}

/** A load state an event carries, checked whole (snapshotSchema.ts). */
function loadState(value: unknown, what: string): void {
  parseLoadState(value, (why) => new ProtocolError(`${what}: ${printable(why, 120)}`));
}

function event(value: unknown): WireEvent {
  const e = object(value, 'event');
  onlyKeys(e, ['type', 'server', 'body'], 'event');
  const type = oneOf(e.type, EVENT_TYPES, 'event.type');
  const server = str(e, 'server', 'event', 200);
  const body = object(e.body, 'event.body');
  // The fields each front reads of the event, checked before it reaches them.
  if (type === 'state') {
    loadState(body.state, 'event.body.state');
    loadState(body.previous, 'event.body.previous');
  } else if (type === 'end') {
    const outcome = object(body.outcome, 'event.body.outcome');
    str(outcome, 'end', 'event.body.outcome', 64);
    loadState(outcome.state, 'event.body.outcome.state');
    bool(body, 'quiet', 'event.body');
  } else if (type === 'alert') {
    const alert = object(body.alert, 'event.body.alert');
    str(alert, 'kind', 'event.body.alert', 64);
    str(alert, 'message', 'event.body.alert', 100_000);
  } else if (type === 'refused') {
    const refusal = object(body.refusal, 'event.body.refusal');
    str(refusal, 'kind', 'event.body.refusal', 64);
    str(refusal, 'message', 'event.body.refusal', 100_000);
  } else if (type === 'verified') {
    str(body, 'summary', 'event.body', 100_000);
    if (!Array.isArray(body.checks)) throw new ProtocolError('event.body.checks is not a list');
  } else if (type === 'verifying') {
    const now = object(body.verifying, 'event.body.verifying');
    str(now, 'word', 'event.body.verifying', 200);
    str(now, 'line', 'event.body.verifying', 2_000);
    bool(now, 'long', 'event.body.verifying');
  } else if (type === 'watching') bool(body, 'watching', 'event.body');
  return { type, server, body };
}

export function parseClientMessage(line: string): ClientMessage {
  const m = parseLine(line);
  const t = oneOf(m.t, ['hello', 'focus', 'watchAll', 'call', 'answer', 'tunnel'] as const, 'message.t');
  switch (t) {
    case 'hello':
      onlyKeys(m, ['t', 'v', 'pid', 'focused'], 'hello');
      return { t, v: int(m, 'v', 'hello'), pid: int(m, 'pid', 'hello'), focused: bool(m, 'focused', 'hello') };
    case 'focus':
      onlyKeys(m, ['t', 'focused'], 'focus');
      return { t, focused: bool(m, 'focused', 'focus') };
    case 'watchAll': {
      onlyKeys(m, ['t', 'names'], 'watchAll');
      if (!Array.isArray(m.names) || m.names.some((n) => typeof n !== 'string' || n.length > 200))
        throw new ProtocolError('watchAll.names is not a list of names');
      return { t, names: m.names as string[] };
    }
    case 'call': {
      onlyKeys(m, ['t', 'id', 'verb', 'fields'], 'call');
      const verb = m.verb;
      if (!isVerb(verb)) throw new ProtocolError('call.verb is not a verb of the broker');
      const fields = parseFields(
        verb,
        m.fields ?? {},
        (why) => new ProtocolError(`call.fields: ${printable(why, 120)}`),
      );
      return { t, id: int(m, 'id', 'call'), verb, fields };
    }
    case 'tunnel': {
      onlyKeys(m, ['t', 'v', 'server', 'host', 'port'], 'tunnel');
      const port = int(m, 'port', 'tunnel');
      if (port < 1 || port > 65535) throw new ProtocolError('tunnel.port is not a TCP port');
      return {
        t,
        v: int(m, 'v', 'tunnel'),
        server: str(m, 'server', 'tunnel', 200),
        host: str(m, 'host', 'tunnel', 255),
        port,
      };
    }
    case 'answer': {
      onlyKeys(m, ['t', 'id', 'value'], 'answer');
      const value = m.value;
      const answer = typeof value === 'boolean' ? value : choiceSchema.safeParse(value).data;
      if (answer === undefined) throw new ProtocolError('answer.value is not a yes/no or a choice');
      return { t, id: int(m, 'id', 'answer'), value: answer };
    }
  }
}

export function parseOwnerMessage(line: string): OwnerMessage {
  const m = parseLine(line);
  const t = oneOf(m.t, ['welcome', 'refuse', 'event', 'reply', 'outcome', 'ask', 'log'] as const, 'message.t');
  switch (t) {
    case 'welcome': {
      onlyKeys(m, ['t', 'v', 'peer', 'snapshots'], 'welcome');
      if (!Array.isArray(m.snapshots)) throw new ProtocolError('welcome.snapshots is not a list');
      const snapshots = m.snapshots.map((s, i) => snapshot(s, `welcome.snapshots[${i}]`));
      return { t, v: int(m, 'v', 'welcome'), peer: int(m, 'peer', 'welcome'), snapshots };
    }
    case 'refuse':
      onlyKeys(m, ['t', 'v', 'reason'], 'refuse');
      return { t, v: int(m, 'v', 'refuse'), reason: str(m, 'reason', 'refuse') };
    case 'event':
      onlyKeys(m, ['t', 'event', 'snapshot', 'notify'], 'event');
      return {
        t,
        event: event(m.event),
        snapshot: snapshot(m.snapshot, 'event.snapshot'),
        notify: bool(m, 'notify', 'event'),
      };
    case 'reply': {
      onlyKeys(m, ['t', 'id', 'ok', 'value', 'error'], 'reply');
      const id = int(m, 'id', 'reply');
      if (bool(m, 'ok', 'reply')) return { t, id, ok: true, value: m.value };
      const e = object(m.error, 'reply.error');
      onlyKeys(e, ['message', 'kind', 'name'], 'reply.error');
      const kind = optional(e, 'kind', (o, k, w) => str(o, k, w, 64), 'reply.error');
      const name = optional(e, 'name', (o, k, w) => str(o, k, w, 64), 'reply.error');
      const error = {
        message: str(e, 'message', 'reply.error', 100_000),
        ...(kind !== undefined ? { kind } : {}),
        ...(name !== undefined ? { name } : {}),
      };
      return { t, id, ok: false, error };
    }
    case 'outcome': {
      onlyKeys(m, ['t', 'id', 'outcome'], 'outcome');
      const id = int(m, 'id', 'outcome');
      if (m.outcome === undefined) return { t, id };
      const outcome = object(m.outcome, 'outcome.outcome');
      str(outcome, 'end', 'outcome.outcome', 64);
      return { t, id, outcome };
    }
    case 'ask': {
      onlyKeys(m, ['t', 'id', 'call', 'question', 'reason'], 'ask');
      const reason = optional(m, 'reason', str, 'ask');
      return {
        t,
        id: int(m, 'id', 'ask'),
        call: int(m, 'call', 'ask'),
        question: oneOf(m.question, ['confirm', 'choose'] as const, 'ask.question'),
        ...(reason !== undefined ? { reason } : {}),
      };
    }
    case 'log':
      onlyKeys(m, ['t', 'call', 'line'], 'log');
      return { t, call: int(m, 'call', 'log'), line: str(m, 'line', 'log', 100_000) };
  }
}

/** What makes two peers' entries the same server: the whole profile (host, login, unit, url...). */
export function profileKey(profile: object): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, sorted((value as Obj)[k])]),
          )
        : value;
  return JSON.stringify(sorted(profile));
}
