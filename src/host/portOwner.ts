/**
 * Who listens on the server's port: the LISTEN socket's inode in /proc/net/tcp(6), matched
 * against the socket links in /proc/PID/fd of every process. Answers on the port count as the
 * server's only when the socket is held by the service's own process tree; anything else (a
 * proxy, an old instance, a gateway) is a stand-in, named with its pid and command. The sh part
 * runs inside the sampler (monitor/watch/sampler.ts); the rest is pure.
 */
import { standInWhoWords, standInWords } from '../present/words/witnessWords';

/**
 * sh (dash builtins, plus one `find` only when the listening socket changes): `portscan` sets
 * `l` (1 when a socket listens on the port `$lp`, 4 upper-case hex digits as /proc/net/tcp writes
 * it) and `ino` (that socket's inode); `portowner INODE` prints `O INODE t` when a process of
 * `$tree` holds it, `O INODE p PID COMM` for another process, `O INODE x` when the tree's fds are
 * readable and none holds it (the holder is another user's process), `O INODE u` when the tree's
 * fds cannot be read (the server runs as another user): who holds it cannot be told.
 */
export const PORT_OWNER_SH = [
  'portscan() {',
  '  l=0; ino=',
  '  for f in /proc/net/tcp /proc/net/tcp6; do',
  '    [ -r "$f" ] || continue',
  '    while read -r sl a b st q t r uid to i rest; do',
  '      [ "$st" = 0A ] || continue',
  '      case $a in *:$lp) l=1; ino=$i; break 2;; esac',
  '    done < "$f"',
  '  done',
  '}',
  'portowner() {',
  '  o=; fp=',
  '  for fd in $(find /proc/[0-9]*/fd -lname "socket:\\[$1\\]" 2>/dev/null); do',
  '    p=${fd#/proc/}; p=${p%%/*}',
  '    case "$tree" in *" $p "*) o=t; break;; esac',
  '    [ -n "$fp" ] || fp=$p',
  '  done',
  '  if [ -z "$o" ] && [ -n "$fp" ]; then',
  '    c=?; { read -r c < /proc/$fp/comm; } 2>/dev/null',
  '    o="p $fp $c"',
  '  fi',
  '  if [ -z "$o" ]; then if [ -r /proc/$root/fd ]; then o=x; else o=u; fi; fi',
  '  printf \'O %s %s\\n\' "$1" "$o"',
  '}',
].join('\n');

/** Who holds the socket listening on the port, as the sampler saw it. */
export type PortOwner =
  | { readonly inode: number; readonly kind: 'unit' }
  | { readonly inode: number; readonly kind: 'other'; readonly pid?: number; readonly command?: string }
  | { readonly inode: number; readonly kind: 'unknown' };

/** Parses the sampler's `O INODE t|p PID COMM|x|u` line; undefined for any other line. */
export function parsePortOwnerLine(line: string): PortOwner | undefined {
  // Only the owner line, at most a comm long: any other line (a round with 20 kB of garbage GPU text) is not looked into.
  if (!line.startsWith('O ') || line.length > 120) return undefined;
  const m = /^O (\d{1,20}) (?:(t)|(x)|(u)|p (\d{1,10}) (.*))$/.exec(line.trimEnd());
  if (!m) return undefined;
  const inode = Number(m[1]);
  if (m[2]) return { inode, kind: 'unit' };
  if (m[3]) return { inode, kind: 'other' };
  if (m[4]) return { inode, kind: 'unknown' };
  const command = cleanCommand(m[6] ?? '');
  return { inode, kind: 'other', pid: Number(m[5]), ...(command ? { command } : {}) };
}

/** A process name (/proc/PID/comm, at most 15 bytes, any bytes but NUL and newline) fit for a tooltip. */
function cleanCommand(text: string): string | undefined {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 64);
  return clean === '' || clean === '?' ? undefined : clean;
}

/**
 * Processes that forward a port to a server in another network namespace (Docker's userland
 * proxy, rootless Docker and Podman): their socket is the container's way in, not a stand-in.
 */
const FORWARDERS = new Set(['docker-proxy', 'rootlessport', 'rootlesskit', 'slirp4netns', 'pasta', 'pasta.avx2']);

/**
 * A unit whose command is a container CLI (`docker run` with no name to follow the container by):
 * the server runs in the container, under containerd, outside the unit's process tree, so who
 * holds the port cannot be told from the tree.
 */
export function runsContainerCli(argv: readonly string[]): boolean {
  const program = (argv[0] ?? '').split('/').pop() ?? '';
  return program === 'docker' || program === 'podman' || program === 'nerdctl';
}

export function isPortForwarder(owner: PortOwner): boolean {
  return owner.kind === 'other' && owner.command !== undefined && FORWARDERS.has(owner.command);
}

/** A process that answers the port instead of the service: what the state keeps and the tooltip says. */
export interface StandIn {
  readonly port: number;
  readonly pid?: number;
  readonly command?: string;
  /** The service as the user knows it (`sglang-k26.service`, `container kimi`). */
  readonly service: string;
  readonly since: number;
}

/** "pid 4242 (python3)". */
export function standInWho(standIn: StandIn): string {
  return standInWhoWords(standIn.pid, standIn.command);
}

/** "port 30001 is answered by pid 4242 (python3), not by sglang-k26.service". */
export function standInText(standIn: StandIn): string {
  return standInWords(standIn.port, standInWho(standIn), standIn.service);
}
