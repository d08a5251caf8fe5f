/**
 * An error of the fleet whose message a front shows as it is: `kind` says what happened, so a
 * front can choose its words or its exit code without reading the message (as TransportError).
 */
export type FleetErrorKind =
  /** The settings are not valid: nothing can be run until they are fixed. */
  | 'settings'
  /** The fleet was closed (the window, the MCP server, the CLI is shutting down). */
  | 'closed'
  /** The restart rule refused the restart (the connection was refused). */
  | 'refused'
  /** A multi-node server's settings name fewer than two nodes. */
  | 'nodes';

export class FleetError extends Error {
  constructor(
    readonly kind: FleetErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'FleetError';
  }
}
