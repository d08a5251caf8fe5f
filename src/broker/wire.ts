/**
 * The fleet's events, snapshots and errors to and from their wire form (protocol.ts). Pure: the
 * server travels by name, each side puts back its own profile of it.
 */
import type { ServerProfile } from '../config/config';
import { FleetError, NotReadyError } from '../fleet/fleetError';
import type { FleetEvent, ServerSnapshot } from '../fleet/fleetTypes';
import { TransportError, type TransportErrorKind } from '../transport/transport';
import { errorText } from '../util/errors';
import type { WireError, WireEvent, WireSnapshot } from './protocol';

/** An event of the owner's fleet as it travels; undefined for what stays on the owner's side (port forwards). */
export function toWireEvent(event: FleetEvent): WireEvent | undefined {
  if (event.type === 'forward') return undefined;
  const { type, server, ...rest } = event;
  const body: Record<string, unknown> = { ...rest };
  if (event.type === 'refused') body.error = { kind: event.error.kind, message: event.error.message };
  return { type, server: server.name, body: JSON.parse(JSON.stringify(body)) as Record<string, unknown> };
}

/** The event as this peer's fleet fires it, for its own profile of the server. `notify` false makes an end quiet. */
export function fromWireEvent(wire: WireEvent, server: ServerProfile, notify: boolean): FleetEvent {
  const body = wire.body;
  if (wire.type === 'refused') {
    const e = (body.error ?? {}) as { kind?: string; message?: string };
    const refusal = body.refusal as Extract<FleetEvent, { type: 'refused' }>['refusal'];
    const error = new TransportError(
      (e.kind ?? refusal.kind) as TransportErrorKind,
      e.message ?? refusal.message,
      refusal.hostKeyChange,
    );
    return { type: 'refused', server, refusal, error };
  }
  if (wire.type === 'end') return { ...body, type: 'end', server, quiet: body.quiet === true || !notify } as FleetEvent;
  return { ...body, type: wire.type, server } as FleetEvent;
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
  if (wire.name === 'TransportError' && wire.kind)
    return new TransportError(wire.kind as TransportErrorKind, wire.message);
  const known = snapshot();
  if (wire.name === 'NotReadyError' && (wire.kind === 'loading' || wire.kind === 'down') && known)
    return new NotReadyError(wire.kind, known);
  if (wire.name === 'FleetError' && wire.kind) return new FleetError(wire.kind as FleetError['kind'], wire.message);
  return new Error(wire.message);
}
