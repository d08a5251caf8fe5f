/**
 * What the language-model tools need from the extension: the fleet and a way to open a
 * server's session (VS Code may ask about a host key). Sessions (fronts/vscode/sessions) satisfies it; a test can
 * hand in a stand-in. The settings come from fronts/vscode/settings/settingsSource.
 */
import type { ServerProfile } from '../../config/config';
import type { FrontFleet } from '../../fleet/fleetVerbs';
import type { SettingsSource } from '../../config/settingsSource';
import { AgentTools, ToolRefusal, type AgentHost } from '../../agent/run';

export interface ToolHost {
  readonly fleet: FrontFleet;
  /** The server's session, or undefined after telling the user why there is none (e.g. host "local" on the UI side). */
  openSession(server: ServerProfile): Promise<unknown>;
}

/** The session of a server, or a refusal saying why there is none. */
export async function requireSession(host: ToolHost, server: ServerProfile): Promise<void> {
  if (!(await host.openSession(server))) {
    throw new ToolRefusal(
      `Cannot set up the connection to ${server.name}; the notification and the "Kimi Service" output channel say why. Nothing was run.`,
    );
  }
}

/** The agent as the language-model tools run it: the extension's session, VS Code's own watches. */
export function lmAgent(host: ToolHost, settings: SettingsSource, log: AgentHost['log'] = () => undefined): AgentTools {
  return new AgentTools({
    fleet: host.fleet,
    settings: () => settings.read(),
    prepare: (server) => requireSession(host, server),
    watchOnStatus: false,
    logOwner: 'the Kimi Service extension',
    log,
  });
}
