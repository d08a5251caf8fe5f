/**
 * A server's session and connection for the commands, and the host of the language-model tools
 * (fronts/lm/toolHost.ts): what cannot be set up is said, loudly, and undefined returned.
 */
import type * as vscode from 'vscode';
import { localHostRefusal, type ServerProfile } from '../../config/config';
import type { FleetSession } from '../../fleet/fleetTypes';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import { TransportError } from '../../transport/transport';
import { errorText } from '../../util/errors';
import type { ToolHost } from '../lm/toolHost';
import type { Notifier } from './output/notifier';

export class Sessions implements ToolHost {
  constructor(
    readonly fleet: FrontFleet,
    private readonly log: vscode.LogOutputChannel,
    private readonly notifier: Notifier,
    /** The remote's name when this extension runs on the UI side of a remote window. */
    private readonly uiSideOfRemote: string | undefined,
  ) {}

  /** Servers this window cannot reach (host "local" on the UI side of a remote window). */
  unreachable(server: ServerProfile): boolean {
    return localHostRefusal(server, this.uiSideOfRemote) !== undefined;
  }

  /** The session of a server, or undefined after telling the user why there is none. */
  async openSession(server: ServerProfile): Promise<FleetSession | undefined> {
    const refusal = localHostRefusal(server, this.uiSideOfRemote);
    if (refusal) {
      this.log.error(`[${server.name}] ${refusal}`);
      void this.notifier.notify('error', `Kimi: ${refusal}`);
      return undefined;
    }
    try {
      return await this.fleet.sessionFor(server);
    } catch (error) {
      const message = errorText(error);
      this.log.error(`[${server.name}] Cannot set up the connection: ${message}`);
      void this.notifier.notify('error', `Kimi on ${server.name}: cannot set up the connection: ${message}`);
      return undefined;
    }
  }

  /** Connects; a refusal is told loudly (the fleet's `refused` event) and false returned. */
  async connect(server: ServerProfile): Promise<boolean> {
    try {
      await this.fleet.connect(server);
      return true;
    } catch (error) {
      if (!(error instanceof TransportError))
        void this.notifier.notify('error', `Kimi on ${server.name}: cannot connect: ${errorText(error)}`);
      return false;
    }
  }
}
