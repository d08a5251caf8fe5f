/**
 * A fleet event as it comes off the socket, checked whole: one schema per kind of FleetEvent
 * (port forwards stay on the owner's side), each naming every field its type declares (`exact`),
 * with the load states, refusals and error kinds of snapshotSchema.ts. A key that its type does
 * not have is refused. The server travels by name: each peer puts back its own profile. Pure.
 */
import { z } from 'zod';
import type { FleetEvent } from '../fleet/fleetTypes';
import type { VerifyingNow } from '../present/serverSnapshot';
import type { WatchAlert, WatchOutcome } from '../monitor/watch/watchTypes';
import { TransportError } from '../transport/transport';
import { CHECK_NAMES } from '../verify/checks';
import type { CheckResult } from '../verify/verifyTypes';
import { exact, loadState, refusal, text, word } from './snapshotSchema';

/** The events that travel between peers, as the fleet fires them. */
type Traveling = Exclude<FleetEvent, { readonly type: 'forward' }>;
export type WireEventType = Traveling['type'];
/** An event's fields besides its kind and its server. */
export type EventBody<T extends WireEventType> = Omit<Extract<Traveling, { readonly type: T }>, 'type' | 'server'>;

/** How a watch ended (an `end` event's, and a call's `outcome`). */
export const watchOutcome = exact<WatchOutcome>()(
  z.strictObject({
    end: z.enum(['ready', 'failed', 'stopped', 'timeout', 'unreachable', 'cancelled']),
    state: loadState,
    message: text.optional(),
  }),
);

const alert = exact<WatchAlert>()(
  z.strictObject({
    kind: z.enum(['completion', 'journal', 'url', 'unhealthy', 'recovered', 'time-limit']),
    level: z.enum(['info', 'warn', 'error']),
    message: text,
  }),
);

const checkName = z.enum(CHECK_NAMES);

const check = exact<CheckResult>()(
  z.strictObject({
    name: checkName,
    status: z.enum(['pass', 'fail', 'inconclusive', 'skipped']),
    evidence: text,
    request: text.optional(),
    consequence: text.optional(),
    fault: z.enum(['reasoningInContent']).optional(),
    cause: z.enum(['time']).optional(),
  }),
);

const verifying = exact<VerifyingNow>()(z.strictObject({ word, line: z.string().max(2_000), long: z.boolean() }));

/**
 * Each kind's body as it travels. A refusal's error is its refusal again (the fleet builds the
 * one from the other): it travels once and is rebuilt here as the TransportError it was.
 */
const BODIES = {
  state: exact<EventBody<'state'>>()(z.strictObject({ state: loadState, previous: loadState })),
  end: exact<EventBody<'end'>>()(z.strictObject({ outcome: watchOutcome, quiet: z.boolean() })),
  alert: exact<EventBody<'alert'>>()(z.strictObject({ alert })),
  refused: exact<EventBody<'refused'>>()(
    z
      .strictObject({ refusal })
      .transform(({ refusal: r }) => ({ refusal: r, error: new TransportError(r.kind, r.message, r.hostKeyChange) })),
  ),
  connected: exact<EventBody<'connected'>>()(z.strictObject({})),
  verified: exact<EventBody<'verified'>>()(
    z
      .strictObject({ summary: text, allPassed: z.boolean().optional(), checks: z.array(check).max(1_000) })
      .transform((v) => ({ ...v, allPassed: v.allPassed })),
  ),
  verifying: exact<EventBody<'verifying'>>()(z.strictObject({ verifying })),
  watching: exact<EventBody<'watching'>>()(z.strictObject({ watching: z.boolean() })),
};
/** Indexed by kind, so that a kind known only as `T` still gives its own body. */
const bodies: { readonly [T in WireEventType]: z.ZodType<EventBody<T>> } = BODIES;

/** One kind of event off the socket: its server's name, and the event as the fleet fired it but for its server. */
function traveling<T extends WireEventType>(type: T) {
  const body: z.ZodType<EventBody<T>> = bodies[type];
  const event = z.strictObject({ type: z.literal(type), server: z.string().max(200), body });
  return event.transform((e: { readonly server: string; readonly body: EventBody<T> }) => ({
    server: e.server,
    event: { ...e.body, type },
  }));
}

export const wireEventSchema = z.discriminatedUnion('type', [
  traveling('state'),
  traveling('end'),
  traveling('alert'),
  traveling('refused'),
  traveling('connected'),
  traveling('verified'),
  traveling('verifying'),
  traveling('watching'),
]);

/** An event as received: checked, its server still a name. */
export type ReceivedEvent = z.output<typeof wireEventSchema>;

/** Every kind is in the union above: one left out does not compile. */
export const EVERY_KIND_RECEIVED: [Exclude<WireEventType, ReceivedEvent['event']['type']>] extends [never]
  ? true
  : never = true;
