/**
 * Whether to follow the address a server announces. A log can name an address of another
 * machine (a log copied from elsewhere, a --host of another node): requests, API key included,
 * would go there through the SSH host. So the announced address is followed only when the host
 * carries it (its interfaces, as the sampler read them), it is a loopback or wildcard address,
 * or it is a name the host resolves to one of those. Pure.
 */
import { compareServerUrl, parseEndpoint } from '../../engine/announcedUrl';
import { canonicalAddress, isHostName, isLoopback } from '../../host/hostAddresses';
import {
  addressesUnreadable,
  announcedNotFollowed,
  cannotResolve,
  noAddressOrName,
  noSuchInterface,
  resolvesElsewhere,
} from '../../present/words/watchWords';

export interface HostView {
  /** The addresses the host's interfaces carry (canonical); undefined until read. */
  readonly addresses: readonly string[] | undefined;
  /** What the host resolved a name to (canonical addresses), by name; a name absent: not asked yet. */
  readonly resolved: ReadonlyMap<string, readonly string[]>;
}

export type UrlDecision =
  /** The configured url reaches the server: nothing to do. */
  | { readonly kind: 'same' }
  | { readonly kind: 'switch'; readonly url: string; readonly message: string }
  /** The announced address is not the host's: requests stay on the configured url. */
  | { readonly kind: 'keep'; readonly message: string }
  /** The host's addresses are not read yet: decide once they are. */
  | { readonly kind: 'needAddresses' }
  /** The announced name must be resolved on the host first. */
  | { readonly kind: 'needResolve'; readonly name: string };

export function decideAnnouncedUrl(configured: string, announced: string, host: HostView): UrlDecision {
  const check = compareServerUrl(configured, announced);
  if (check.ok) return { kind: 'same' };
  const target = parseEndpoint(check.useUrl)?.host;
  if (target === undefined) return { kind: 'same' };
  const follow: UrlDecision = { kind: 'switch', url: check.useUrl, message: check.message };
  if (isLoopback(target)) return follow;
  const keep = (why: string): UrlDecision => ({
    kind: 'keep',
    message: announcedNotFollowed(announced.trim(), why, configured.trim()),
  });
  const address = canonicalAddress(target);
  if (address === undefined && !isHostName(target)) return keep(noAddressOrName(target));
  if (host.addresses === undefined) return { kind: 'needAddresses' };
  if (host.addresses.length === 0) return keep(addressesUnreadable());
  const own = new Set(host.addresses);
  if (address !== undefined) return own.has(address) ? follow : keep(noSuchInterface(target));
  const resolved = host.resolved.get(target);
  if (resolved === undefined) return { kind: 'needResolve', name: target };
  if (resolved.some((a) => own.has(a) || isLoopback(a))) return follow;
  return keep(resolved.length === 0 ? cannotResolve(target) : resolvesElsewhere(target, resolved));
}
