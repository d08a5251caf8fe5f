/**
 * The addresses the host's own interfaces carry, and what it resolves a name to: whether an
 * address a server announces is one of the host's. Pure: the sh that reads them (builtins only,
 * from /proc/net: no `ip` or `hostname` needed) and the readers of what it prints.
 */
import { isIP } from 'node:net';
import { commandLine } from '../transport/shell';

/**
 * One line `A v4 v4 ... / v6hex v6hex ...`: the IPv4 addresses of the local routing table
 * (/proc/net/fib_trie: a `|-- ADDR` followed by `/32 host LOCAL`) and the IPv6 ones
 * (/proc/net/if_inet6, 32 hex digits each). Either file unreadable: its side is empty.
 */
export const HOST_ADDRESSES_SH = [
  'hostaddrs() {',
  '  v4=; prev=',
  '  { while read -r a b c d; do',
  '    case "$a $b $c" in "/32 host LOCAL") case "$v4 " in *" $prev "*) ;; *) v4="$v4 $prev";; esac;; esac',
  '    [ "$a" = "|--" ] && prev=$b',
  '  done < /proc/net/fib_trie; } 2>/dev/null',
  '  v6=',
  '  { while read -r h rest; do v6="$v6 $h"; done < /proc/net/if_inet6; } 2>/dev/null',
  '  echo "A$v4 /$v6"',
  '}',
].join('\n');

/** The addresses of an `A` line (canonical: see canonicalAddress), or undefined for another line. */
export function parseHostAddressesLine(line: string): readonly string[] | undefined {
  const m = /^A((?: [0-9.]{7,15})*) \/((?: [0-9a-fA-F]{32})*)\s*$/.exec(line);
  if (!m) return undefined;
  const v4 = m[1].split(' ').filter((a) => isIP(a) === 4);
  const v6 = m[2]
    .split(' ')
    .filter(Boolean)
    .map((hex) => hex.toLowerCase().match(/.{4}/g)!.join(':'));
  return [...v4, ...v6];
}

/**
 * An address in one spelling: IPv4 as is, IPv6 as eight groups of four hex digits (so `::1`
 * and /proc's `000...01` compare equal); undefined for a name.
 */
export function canonicalAddress(text: string): string | undefined {
  const host = text.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const kind = isIP(host);
  if (kind === 4) return host;
  if (kind !== 6) return undefined;
  const [head, tail] = host.split('::');
  // A trailing dotted quad (::ffff:10.0.0.1) is two groups.
  const words = (part: string | undefined): string[] => {
    if (!part) return [];
    const out: string[] = [];
    for (const w of part.split(':')) {
      if (w.includes('.')) {
        const [a, b, c, d] = w.split('.').map(Number);
        out.push(((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
      } else out.push(w);
    }
    return out;
  };
  const left = words(head);
  const right = words(tail);
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => g.padStart(4, '0')).join(':');
}

/** 127.0.0.0/8, ::1 and `localhost`: every host has them. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost') return true;
  const canonical = canonicalAddress(h);
  if (canonical === undefined) return false;
  return isIP(canonical) === 4 ? canonical.startsWith('127.') : canonical === '0000:0000:0000:0000:0000:0000:0000:0001';
}

/** A DNS name as a resolver takes it (RFC 1123 labels): nothing else reaches the shell. */
export function isHostName(name: string): boolean {
  return (
    name.length <= 253 &&
    /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(name)
  );
}

/** `getent ahosts NAME`: what the host resolves the name to (its resolver, /etc/hosts included). */
export function resolveCommand(name: string): string {
  if (!isHostName(name)) throw new Error(`Invalid host name: ${JSON.stringify(name)}`);
  return commandLine(['getent', 'ahosts', name]);
}

/** The addresses of `getent ahosts` output (first word of each line), canonical and once each. */
export function parseResolved(stdout: string): readonly string[] {
  const out = new Set<string>();
  for (const line of stdout.split('\n')) {
    const address = canonicalAddress(line.trim().split(/\s+/)[0] ?? '');
    if (address !== undefined) out.add(address);
  }
  return [...out];
}
