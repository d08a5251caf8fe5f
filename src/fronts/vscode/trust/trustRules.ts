/**
 * What Restricted Mode (an untrusted workspace) allows: watching the user's own servers. Pure:
 * which commands and tools change a host or open a way to it, and what a refusal says.
 */

/** Commands that change a host (restart, parsers, advice) or open a port to it: trusted workspaces only. */
export const TRUST_REQUIRED_COMMANDS: Readonly<Record<string, string>> = {
  'kimiService.restartService': 'Restarting a server',
  'kimiService.rollingRestart': 'A rolling restart',
  'kimiService.enableParsers': 'Enabling or rolling back parsers',
  'kimiService.suggestFasterLoad': 'Applying load advice',
  'kimiService.forwardPort': 'Forwarding a port',
};

/** The agent tools run at a model's request, which a workspace's content can steer: none in Restricted Mode. */
export const TOOLS_ACTION = 'The Kimi agent tools';

export function needsTrust(commandId: string): boolean {
  return Object.prototype.hasOwnProperty.call(TRUST_REQUIRED_COMMANDS, commandId);
}

/** The refusal, e.g. "Kimi Service: Restarting a server needs a trusted workspace ...". */
export function restrictedModeMessage(action: string): string {
  return (
    `Kimi Service: ${action} needs a trusted workspace. This window is in Restricted Mode, where the ` +
    'extension only watches the servers of your user settings. Trust the workspace to use it.'
  );
}
