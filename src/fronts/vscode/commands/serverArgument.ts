/**
 * The server a command was asked to act on: its first argument is a server name or an object
 * with a `serverName` (a row of the servers view). Anything else (no argument, a URI from an
 * editor menu...) means the active server. Pure.
 */
export function serverNameOf(argument: unknown): string | undefined {
  if (typeof argument === 'string') return argument.length > 0 ? argument : undefined;
  if (argument && typeof argument === 'object' && 'serverName' in argument) {
    const name = (argument as { serverName: unknown }).serverName;
    if (typeof name === 'string' && name.length > 0) return name;
  }
  return undefined;
}
