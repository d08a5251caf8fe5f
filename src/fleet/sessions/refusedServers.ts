/**
 * The refused connections of the fleet's servers (host key, login, network): kept until the
 * server is reached again, each new one said once and fired as a `refused` event.
 */
import type { ServerProfile } from '../../config/config';
import type { LoadState } from '../../monitor/state/loadStateTypes';
import type { Refusal } from '../../present/refusalWords';
import { TransportError } from '../../transport/transport';
import type { FleetEvent } from '../fleetTypes';

export class Refusals {
  private readonly refusals = new Map<string, Refusal>();

  constructor(
    private readonly say: (name: string, text: string) => void,
    private readonly fire: (event: FleetEvent) => void,
  ) {}

  get(name: string): Refusal | undefined {
    return this.refusals.get(name);
  }

  /** The connection was refused: said and fired unless it is the refusal already known. */
  refused(server: ServerProfile, error: TransportError): void {
    const refusal: Refusal = {
      kind: error.kind,
      message: error.message,
      ...(error.hostKeyChange ? { hostKeyChange: error.hostKeyChange } : {}),
    };
    const previous = this.refusals.get(server.name);
    this.refusals.set(server.name, refusal);
    if (previous?.kind === refusal.kind && previous.message === refusal.message) return;
    this.say(server.name, `${error.message}`);
    this.fire({ type: 'refused', server, refusal, error });
  }

  /** The server was reached: its refusal is over (a `connected` event when there was one). */
  connected(server: ServerProfile): void {
    if (this.refusals.delete(server.name)) this.fire({ type: 'connected', server });
  }

  /** What a watch's new state says of the connection. */
  observe(server: ServerProfile, state: LoadState, previous: LoadState): void {
    if (state.connected && !previous.connected) this.connected(server);
    else if (
      !state.connected &&
      state.connectionErrorKind &&
      state.connectionErrorKind !== previous.connectionErrorKind
    )
      this.refused(
        server,
        new TransportError(
          state.connectionErrorKind as TransportError['kind'],
          state.connectionError ?? 'connection lost',
        ),
      );
  }
}
