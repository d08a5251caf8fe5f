/**
 * The fleet's events, snapshots and errors to and from their wire form (protocol.ts). Pure: the
 * server travels by name, each side puts back its own profile of it.
 */
import type { ServerProfile } from '../config/config';
import { FleetError, NotReadyError, type FleetErrorKind } from '../fleet/fleetError';
import type { FleetEvent, ServerSnapshot } from '../fleet/fleetTypes';
import { TransportError } from '../transport/transport';
import { errorText } from '../util/errors';
import type { ReceivedEvent } from './eventSchema';
import type { WireError, WireEvent, WireSnapshot } from './protocol';
import { everyOf, transportErrorKind } from './snapshotSchema';

const fleetErrorKind = everyOf<FleetErrorKind>()(['settings', 'closed', 'refused', 'nodes', 'not-ready']);

/**
 * An event of the owner's fleet as it travels; undefined for what stays on the owner's side (port
 * forwards). A refusal's error is not sent: it is the refusal again, rebuilt on the other side.
 */
export function toWireEvent(event: FleetEvent): WireEvent | undefined {
  if (event.type === 'forward') return undefined;
  const { type, server, ...rest } = event;
  const body = event.type === 'refused' ? { refusal: event.refusal } : rest;
  return { type, server: server.name, body: JSON.parse(JSON.stringify(body)) as Record<string, unknown> };
}

/** The event as this peer's fleet fires it, for its own profile of the server. `notify` false makes an end quiet. */
export function fromWireEvent(received: ReceivedEvent, server: ServerProfile, notify: boolean): FleetEvent {
  const event = received.event;
  if (event.type === 'end') return { ...event, server, quiet: event.quiet || !notify };
  return { ...event, server };
}

export function toWireSnapshot(snapshot: ServerSnapshot): WireSnapshot {
  return JSON.parse(JSON.stringify(snapshot)) as WireSnapshot;
}

/** The owner's snapshot shown for this peer's profile of the server. */
export function fromWireSnapshot(wire: WireSnapshot, server: ServerProfile): ServerSnapshot {
  return { ...wire, server };
}

export function toWireError(error: unknown): WireError {
  if (error instanceof TransportError) return { name: error.name, kind: error.kind, message: error.message };
  if (error instanceof NotReadyError) return { name: error.name, kind: error.why, message: error.message };
  if (error instanceof FleetError) return { name: error.name, kind: error.kind, message: error.message };
  return { message: errorText(error) };
}

/** The owner's error as this peer's fronts know it (a TransportError is "said already" by its `refused` event). */
export function fromWireError(wire: WireError, snapshot: () => ServerSnapshot | undefined): Error {
  const transportKind = transportErrorKind.safeParse(wire.kind);
  if (wire.name === 'TransportError' && transportKind.success)
    return new TransportError(transportKind.data, wire.message);
  const known = snapshot();
  if (wire.name === 'NotReadyError' && (wire.kind === 'loading' || wire.kind === 'down') && known)
    return new NotReadyError(wire.kind, known);
  const fleetKind = fleetErrorKind.safeParse(wire.kind);
  if (wire.name === 'FleetError' && fleetKind.success) return new FleetError(fleetKind.data, wire.message);
  return new Error(wire.message);
}
