/**
 * Does the server listen where the settings say? Compares the configured `url` with the one
 * the server announces (`Uvicorn running on http://H:P`, SGLang's and vLLM's; the log's `httpUp`
 * event). Pure.
 */
import * as words from '../present/words/httpWords';

export type UrlCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly message: string; readonly useUrl: string };

interface Endpoint {
  readonly protocol: string; // 'http' | 'https'
  /** Lower case, without IPv6 brackets. */
  readonly host: string;
  readonly port: number;
  /** Path prefix of the configured URL ('' when none). */
  readonly path: string;
}

/** Parses `http://H:P[/path]`, also a bare IPv6 host (`http://:::30000`) that URL refuses. */
export function parseEndpoint(url: string): Endpoint | undefined {
  const text = url.trim();
  try {
    const u = new URL(text);
    const protocol = u.protocol.replace(/:$/, '').toLowerCase();
    if (protocol !== 'http' && protocol !== 'https') return undefined;
    const port = u.port !== '' ? Number(u.port) : protocol === 'https' ? 443 : 80;
    return {
      protocol,
      host: u.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase(),
      port,
      path: u.pathname.replace(/\/+$/, ''),
    };
  } catch {
    const m = /^(https?):\/\/(.*:.*):(\d{1,5})\/?$/i.exec(text);
    return m
      ? {
          protocol: m[1].toLowerCase(),
          host: m[2].replace(/^\[(.*)\]$/, '$1').toLowerCase(),
          port: Number(m[3]),
          path: '',
        }
      : undefined;
  }
}

const IPV4_ANY = '0.0.0.0';
/** `::` written by URL as `[::]`, or in full. */
function isIpv6Any(host: string): boolean {
  return host === '::' || /^(?:0{1,4}:){7}0{1,4}$/.test(host) || host === '::0';
}

function isIpv6(host: string): boolean {
  return host.includes(':');
}

/** Hosts that reach a server listening on `announced` (the same host, or any address it listens on). */
function hostServes(announced: string, configured: string): boolean {
  if (announced === configured) return true;
  // 0.0.0.0: every IPv4 address of the host; names (localhost, the host's own name) resolve to one.
  if (announced === IPV4_ANY) return !isIpv6(configured);
  // "::": every address (Linux accepts IPv4 on it too, unless bindv6only).
  if (isIpv6Any(announced)) return true;
  // Uvicorn binds a name without ":" as IPv4, so announced localhost is 127.0.0.1; a configured
  // localhost reaches 127.0.0.1 and ::1 (sshd tries each address the name resolves to).
  if (announced === 'localhost') return configured === '127.0.0.1';
  if (announced === '127.0.0.1' || announced === '::1') return configured === 'localhost';
  return false;
}

function hostInUrl(host: string): string {
  return isIpv6(host) ? `[${host}]` : host;
}

function format(e: Endpoint): string {
  return `${e.protocol}://${hostInUrl(e.host)}:${e.port}${e.path}`;
}

/** Where to send requests instead: the loopback of a wildcard address, else the announced host. */
function replacement(configured: Endpoint, announced: Endpoint): Endpoint {
  const host = announced.host === IPV4_ANY ? '127.0.0.1' : isIpv6Any(announced.host) ? '::1' : announced.host;
  return { protocol: announced.protocol, host, port: announced.port, path: configured.path };
}

/**
 * `{ ok: true }` when requests to `configured` reach the server that announced `announced`
 * (`0.0.0.0` and `::` mean every interface, so 127.0.0.1 or localhost on the same port is
 * fine); else a message naming both and the URL to use instead. An announcement that cannot be
 * read is not a mismatch.
 */
export function compareServerUrl(configured: string, announced: string): UrlCheck {
  const c = parseEndpoint(configured);
  const a = parseEndpoint(announced);
  if (!c || !a) return { ok: true };
  if (c.protocol === a.protocol && c.port === a.port && hostServes(a.host, c.host)) return { ok: true };
  const useUrl = format(replacement(c, a));
  const why =
    c.port !== a.port
      ? words.anotherPort()
      : c.protocol !== a.protocol
        ? words.anotherProtocol(a.protocol, c.protocol)
        : words.anotherAddress();
  return {
    ok: false,
    message: words.announcedElsewhere(announced.trim(), why, configured.trim(), useUrl),
    useUrl,
  };
}
