/**
 * The broker's wire protocol (docs/broker.md): one JSON object per line, each message checked
 * whole on receipt (a schema per message, a key it does not declare refused) before anything
 * reads it. A peer of another protocol version is refused with a reason
 * and watches on its own. No I/O here.
 */
import { z } from 'zod';
import type { WatchOutcome } from '../monitor/watch/watchTypes';
import { printable } from '../config/text';
import { watchOutcome, wireEventSchema, type ReceivedEvent, type WireEventType } from './eventSchema';
import { snapshotBodySchema, type SnapshotBody } from './snapshotSchema';
import {
  choiceSchema,
  firstIssue,
  isVerb,
  parseFields,
  questionSchema,
  type Choice,
  type FieldsOf,
  type Question,
  type Verb,
} from './verbs';

export { MAX_COMMAND_CHARS, type Choice, type Question, type Verb } from './verbs';

/** Bumped on any change of a message's shape: peers of two versions never exchange more than hello/refuse. */
export const PROTOCOL_VERSION = 6;
/** A line longer than this is not a message of ours: the connection is dropped. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/** A command's output larger than this is not passed between peers: `{ tooLarge: true }`, the client runs it itself. */
export const MAX_SHARED_OUTPUT_BYTES = MAX_LINE_BYTES - 64 * 1024;

/** A fleet event as it is sent: the server by name (each peer has its own profile of it). */
export interface WireEvent {
  readonly type: WireEventType;
  readonly server: string;
  /** The event's other fields, as the fleet fired them (`server` excepted), as JSON has them. */
  readonly body: Record<string, unknown>;
}

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
  /** How the watch a call started (watch, restart) ended; absent: handed over or cancelled. */
  | { readonly t: 'outcome'; readonly id: number; readonly outcome?: WatchOutcome }
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

const whole = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const name = z.string().max(200);
const reason = z.string().max(4096);

const clientMessage = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('hello'), v: whole, pid: whole, focused: z.boolean() }),
  z.strictObject({ t: z.literal('focus'), focused: z.boolean() }),
  z.strictObject({ t: z.literal('watchAll'), names: z.array(name).max(100_000) }),
  // The verb's fields are its entry's in verbs.ts, checked once the verb is known.
  z.strictObject({ t: z.literal('call'), id: whole, verb: z.string().max(64), fields: z.unknown() }),
  z.strictObject({
    t: z.literal('tunnel'),
    v: whole,
    server: name,
    host: z.string().max(255),
    port: z.number().int().min(1).max(65_535),
  }),
  z.strictObject({ t: z.literal('answer'), id: whole, value: z.union([z.boolean(), choiceSchema]) }),
]);

/** A snapshot names its server (the owner's profile, kept as it came); the rest is checked whole (snapshotSchema.ts). */
const wireSnapshot = snapshotBodySchema.extend({ server: z.looseObject({ name }) });

const ownerMessage = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('welcome'), v: whole, peer: whole, snapshots: z.array(wireSnapshot).max(100_000) }),
  z.strictObject({ t: z.literal('refuse'), v: whole, reason }),
  z.strictObject({ t: z.literal('event'), event: wireEventSchema, snapshot: wireSnapshot, notify: z.boolean() }),
  z.discriminatedUnion('ok', [
    z.strictObject({ t: z.literal('reply'), id: whole, ok: z.literal(true), value: z.unknown().optional() }),
    z.strictObject({
      t: z.literal('reply'),
      id: whole,
      ok: z.literal(false),
      error: z.strictObject({
        message: z.string().max(100_000),
        kind: z.string().max(64).optional(),
        name: z.string().max(64).optional(),
      }),
    }),
  ]),
  z.strictObject({ t: z.literal('outcome'), id: whole, outcome: watchOutcome.optional() }),
  z.strictObject({ t: z.literal('ask'), id: whole, call: whole, question: questionSchema, reason: reason.optional() }),
  z.strictObject({ t: z.literal('log'), call: whole, line: z.string().max(100_000) }),
]);

/** An owner's message as received: an event's body is the fleet's again (eventSchema.ts). */
export type ReceivedOwnerMessage = z.output<typeof ownerMessage>;
export type { ReceivedEvent };

/** The line's message, checked whole; a ProtocolError names the first field that is not as declared. */
function parseLine<S extends z.ZodType>(line: string, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ProtocolError('a line is not JSON');
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const t = typeof value === 'object' && value !== null && 't' in value ? value.t : undefined;
  const what = typeof t === 'string' ? printable(t, 20) : 'message';
  throw new ProtocolError(`${what}: ${printable(firstIssue(parsed.error), 200)}`);
}

export function parseClientMessage(line: string): ClientMessage {
  const m = parseLine(line, clientMessage);
  if (m.t !== 'call') return m;
  if (!isVerb(m.verb)) throw new ProtocolError('call.verb is not a verb of the broker');
  const fields = parseFields(m.verb, m.fields ?? {}, (why) => new ProtocolError(`call.fields: ${printable(why, 120)}`));
  return { t: m.t, id: m.id, verb: m.verb, fields };
}

export function parseOwnerMessage(line: string): ReceivedOwnerMessage {
  return parseLine(line, ownerMessage);
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
              .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
          )
        : value;
  return JSON.stringify(sorted(profile));
}
