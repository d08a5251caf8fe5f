/**
 * Redacts text meant to leave the machine (a problem report): secret values as maskSecrets does
 * (API keys, Bearer tokens, *_TOKEN=, passwords in assignments and JSON), private-key blocks,
 * user and password in URLs, `password:` / `passphrase:` lines, the configured hosts and login
 * users (each replaced by a stable placeholder, so the report still tells one host from another),
 * and the home folder. Loopback names and addresses, and `root`, stay: they identify nobody.
 * Pure; idempotent.
 */
import { MASK, maskSecrets } from './secrets';

export interface Redactions {
  /** Secret values known to the caller (API keys in use): masked wherever they appear. */
  readonly secrets?: readonly string[];
  /** Host names, addresses and ssh aliases: each becomes `host-N`. */
  readonly hosts?: readonly string[];
  /** Login user names: each becomes `user-N`. */
  readonly users?: readonly string[];
  /** The home folder: becomes `~`. */
  readonly home?: string;
}

const PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;
const PASSWORD_LINE = /\b(pass(?:word|wd|phrase)\s*[:=]\s*)(?!\*\*\*)("[^"\n]*"|'[^'\n]*'|[^\s,;]+)/gi;
/** Names that identify nobody: loopback, and the superuser every host has. */
const NOT_IDENTIFYING = new Set(['local', 'localhost', '127.0.0.1', '::1', 'root']);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces each name (a whole word: not inside a longer name) with `prefix-N`, longest first. */
function placeholders(text: string, names: readonly string[], prefix: string): string {
  const distinct = [...new Set(names.filter((n) => n.length >= 2 && !NOT_IDENTIFYING.has(n)))];
  const numbered = new Map(distinct.map((n, i) => [n, `${prefix}-${i + 1}`]));
  let out = text;
  for (const name of [...distinct].sort((a, b) => b.length - a.length)) {
    out = out.replace(new RegExp(`(?<![\\w.-])${escape(name)}(?![\\w-]|\\.\\w)`, 'g'), numbered.get(name)!);
  }
  return out;
}

export function redact(text: string, known: Redactions = {}): string {
  let out = text.replace(PRIVATE_KEY, `[private key removed]`);
  out = out.replace(URL_USERINFO, `$1${MASK}@`);
  out = maskSecrets(out, known.secrets ?? []);
  out = out.replace(PASSWORD_LINE, (_all, head: string) => `${head}${MASK}`);
  if (known.home && known.home.length > 1) out = out.split(known.home).join('~');
  out = placeholders(out, known.users ?? [], 'user');
  return placeholders(out, known.hosts ?? [], 'host');
}
