/**
 * An error of the fleet whose message a front shows as it is: `kind` says what happened, so a
 * front can choose its words or its exit code without reading the message (as TransportError).
 */
import type { ServerSnapshot } from './fleetTypes';
import { notReadyForChecks } from '../present/words/fleetWords';

export type FleetErrorKind =
  /** The settings are not valid: nothing can be run until they are fixed. */
  | 'settings'
  /** The fleet was closed (the window, the MCP server, the CLI is shutting down). */
  | 'closed'
  /** The restart rule refused the restart (the connection was refused). */
  | 'refused'
  /** A multi-node server's settings name fewer than two nodes. */
  | 'nodes'
  /** The server is not ready (loading, failed, stopped, unhealthy): its parsers cannot be checked. */
  | 'not-ready';

export class FleetError extends Error {
  constructor(
    readonly kind: FleetErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'FleetError';
  }
}

/** The parsers were not checked: the server is not ready. Each front says what to do in its own words. */
export class NotReadyError extends FleetError {
  constructor(
    /** `loading`: wait for it; `down`: failed, stopped or unhealthy. */
    readonly why: 'loading' | 'down',
    /** The state that refused the checks, for the front's report. */
    readonly snapshot: ServerSnapshot,
  ) {
    super('not-ready', notReadyForChecks(snapshot.server.name, why));
    this.name = 'NotReadyError';
  }
}
