/**
 * The optional first argument of a command that acts on one server: a server name, or an
 * object with `serverName` (a tree item). Pure.
 */
export function serverNameArgument(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (typeof arg === 'object' && arg !== null && typeof (arg as { serverName?: unknown }).serverName === 'string') {
    return (arg as { serverName: string }).serverName;
  }
  return undefined;
}
