/**
 * The pure parts of "Kimi Service: Add server": the Host aliases of ~/.ssh/config (and the files it
 * Includes) a user can pick, a typed `[user@]host[:port]`, and the `kimiService.servers` entry written.
 */
import { splitArgs, splitDirective } from '../../transport/ssh/sshInclude';
import type { DiscoveredUnit } from '../../target/discovered';
import * as words from '../../present/words/fleetWords';

// As kimiService.servers[].host and .username accept them (config.ts).
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]+)$/;
const USER = /^[A-Za-z_][A-Za-z0-9_.-]*\$?$/;

/** The concrete `Host` names of ssh_config texts (patterns with * ? ! left out), in order, once each. */
export function sshHostAliases(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const text of texts) {
    for (const line of text.split(/\r?\n/)) {
      const directive = splitDirective(line);
      if (directive?.keyword.toLowerCase() !== 'host') continue;
      for (const name of splitArgs(directive.value)) if (!/[*?!]/.test(name) && HOST.test(name)) seen.add(name);
    }
  }
  return [...seen];
}

export interface TypedHost {
  readonly host: string;
  readonly username?: string;
  readonly port?: number;
}

/** `[user@]host[:port]` as typed; a string saying what is wrong otherwise. */
export function parseTypedHost(text: string): TypedHost | string {
  const m = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return words.typeAHost();
  const [, username, host, portText] = m;
  if (!HOST.test(host!)) return words.notAHostName(host!);
  if (username !== undefined && !USER.test(username)) return words.notAUserName(username);
  const port = portText !== undefined ? Number(portText) : undefined;
  if (port !== undefined && (port < 1 || port > 65535)) return words.portOutOfRange();
  return { host: host!, ...(username !== undefined ? { username } : {}), ...(port !== undefined ? { port } : {}) };
}

/** The uid the discovery command printed first (`id -u`), or undefined. */
export function loginUid(stdout: string): number | undefined {
  const first = stdout.split('\n', 1)[0]?.trim() ?? '';
  return /^\d+$/.test(first) ? Number(first) : undefined;
}

/**
 * The `kimiService.servers` entry: the host as picked (an alias keeps its ~/.ssh/config settings),
 * what names the server (its unit, or its kind's fields), the url from its flags; `sudo` when the
 * login is not root and restarts need it.
 */
export function serverEntry(
  name: string,
  target: TypedHost,
  unit: DiscoveredUnit,
  uid: number | undefined,
): Record<string, unknown> {
  return {
    name,
    host: target.host,
    ...(target.port !== undefined ? { port: target.port } : {}),
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...unit.entry,
    url: unit.url,
    ...(unit.sudoUnlessRoot && uid !== undefined && uid !== 0 ? { sudo: true } : {}),
  };
}
