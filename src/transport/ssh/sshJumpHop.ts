import { SshConfigSyntaxError } from '../errors';
import { invalidJumpHop, invalidJumpHopPort } from '../../present/words/sshWords';

/** One ProxyJump hop: `[user@]host[:port]` (also `[v6addr]:port` and `ssh://` URIs). */
export function parseJumpHop(spec: string): { host: string; user?: string; port?: number } {
  let s = spec.trim().replace(/^ssh:\/\//, '');
  let user: string | undefined;
  const at = s.lastIndexOf('@');
  if (at >= 0) {
    user = s.slice(0, at);
    s = s.slice(at + 1);
  }
  let host = s;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracketed) {
    host = bracketed[1];
    if (bracketed[2]) port = Number(bracketed[2]);
  } else {
    const m = /^([^:]+):(\d+)$/.exec(s);
    if (m) {
      host = m[1];
      port = Number(m[2]);
    }
  }
  if (!host || /\s/.test(host)) throw new SshConfigSyntaxError(invalidJumpHop(spec));
  if (port !== undefined && !(port >= 1 && port <= 65535)) throw new SshConfigSyntaxError(invalidJumpHopPort(spec));
  return { host, user, port };
}
