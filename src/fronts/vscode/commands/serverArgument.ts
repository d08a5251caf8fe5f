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

/** Whom a command run from a servers-view row or elsewhere is for. */
export type CommandTarget =
  | { readonly kind: 'named'; readonly name: string }
  /** Nothing was passed: the active server (or the command's own question). */
  | { readonly kind: 'none' }
  /** A row was passed and did not arrive (its tree was refreshed meanwhile): nobody may be guessed. */
  | { readonly kind: 'lost' };

/**
 * Reads a command's arguments. A row's menu passes the row first (VS Code turns its handle into
 * the element, or into nothing when the tree was refreshed in between); the palette, a key or the
 * status bar pass no argument at all. So an empty first argument means a row that was lost on
 * the way, not "the active server": acting on the active one there would act on another server
 * than the row that was clicked.
 */
export function commandTarget(args: readonly unknown[]): CommandTarget {
  const name = serverNameOf(args[0]);
  if (name !== undefined) return { kind: 'named', name };
  if (args.length > 0 && (args[0] === undefined || args[0] === null)) return { kind: 'lost' };
  return { kind: 'none' };
}
