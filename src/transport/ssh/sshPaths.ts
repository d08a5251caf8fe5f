/**
 * Paths and `%` tokens of ssh_config(5), expanded the way OpenSSH does, for any platform: the
 * platform, home, user and environment are injected, so the Windows and macOS rules are
 * unit-tested on Linux. Pure, except the small system wrapper at the bottom.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SshConfigSyntaxError } from '../errors';
import { noSuchUser, tildeUserOnWindows, unsetVariable, unsupportedToken } from '../../present/words/sshWords';

export interface PathContext {
  readonly platform: NodeJS.Platform;
  /** The current user's home directory (on Windows %USERPROFILE%). */
  readonly homeDir: string;
  readonly localUser: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Another user's home directory from the system's user database; undefined = no such user. */
  readonly userHome?: (name: string) => string | undefined;
  /** This machine's host name, for `%l` / `%L`. */
  readonly localHost?: string;
}

/** The values of the `%` tokens for one host. */
export interface TokenValues {
  /** %h: the host name to dial (after HostName). */
  readonly host: string;
  readonly port: number;
  /** %r */
  readonly remoteUser: string;
  /** %u */
  readonly localUser: string;
  /** %d */
  readonly homeDir: string;
  /** %n: the name as the user wrote it (a ~/.ssh/config alias); defaults to `host`. */
  readonly alias?: string;
  /** %l (full) and %L (first label) */
  readonly localHost?: string;
}

/** Tokens each directive accepts (ssh_config(5) TOKENS); `%%` is always accepted. */
export const TOKENS = {
  /** IdentityFile, UserKnownHostsFile, IdentityAgent (OpenSSH also has %C %i %j %k, not supported here). */
  path: 'dhlLnpru',
  proxyCommand: 'hnpr',
  hostName: 'h',
} as const;

export function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

export function isAbsolutePath(p: string, platform: NodeJS.Platform): boolean {
  return pathApi(platform).isAbsolute(p);
}

/** ~/.ssh of the user (on Windows %USERPROFILE%\.ssh). */
export function sshDir(ctx: PathContext): string {
  return pathApi(ctx.platform).join(ctx.homeDir, '.ssh');
}

/**
 * `~` and `~/x` (on Windows also `~\x`) → the home directory; `~user/x` → that user's home
 * (POSIX only: OpenSSH for Windows knows no `~user`). Other paths are returned unchanged.
 */
export function expandTilde(p: string, ctx: PathContext): string {
  if (!p.startsWith('~')) return p;
  const api = pathApi(ctx.platform);
  const seps = ctx.platform === 'win32' ? /[\\/]/ : /\//;
  const m = seps.exec(p);
  const head = m ? p.slice(1, m.index) : p.slice(1);
  const rest = m ? p.slice(m.index + 1) : '';
  let home: string;
  if (head === '' || head === ctx.localUser) home = ctx.homeDir;
  else if (ctx.platform === 'win32') throw new SshConfigSyntaxError(tildeUserOnWindows(head, p));
  else {
    const found = ctx.userHome?.(head);
    if (found === undefined) throw new SshConfigSyntaxError(noSuchUser(head, p));
    home = found;
  }
  return rest === '' ? home : api.join(home, rest);
}

/**
 * Windows' `%NAME%` environment references (e.g. `%USERPROFILE%\.ssh\id_ed25519`), on Windows
 * only; names are case-insensitive there, and an undefined name is left as written.
 */
export function expandWindowsEnv(p: string, ctx: PathContext): string {
  if (ctx.platform !== 'win32') return p;
  const lower = new Map(Object.entries(ctx.env).map(([k, v]) => [k.toLowerCase(), v]));
  return p.replace(/%([A-Za-z_][A-Za-z0-9_()]+)%/g, (whole, name: string) => lower.get(name.toLowerCase()) ?? whole);
}

/**
 * `%` tokens and `${VAR}` environment references in one pass, as OpenSSH's
 * percent_dollar_expand. A token the directive does not accept, or an unset variable, is an
 * error naming the directive (OpenSSH refuses such a config too).
 */
export function expandTokens(
  s: string,
  t: TokenValues,
  allowed: string = TOKENS.path,
  directive = 'value',
  env?: Readonly<Record<string, string | undefined>>,
): string {
  return s.replace(
    /%(.?)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g,
    (whole, c: string | undefined, varName: string | undefined) => {
      if (varName !== undefined) {
        if (!env) return whole;
        const v = env[varName];
        if (v === undefined) throw new SshConfigSyntaxError(unsetVariable(directive, varName));
        return v;
      }
      if (c === '%') return '%';
      if (!c || !allowed.includes(c)) throw new SshConfigSyntaxError(unsupportedToken(directive, c ?? '', s));
      switch (c) {
        case 'h':
          return t.host;
        case 'p':
          return String(t.port);
        case 'r':
          return t.remoteUser;
        case 'u':
          return t.localUser;
        case 'd':
          return t.homeDir;
        case 'n':
          return t.alias ?? t.host;
        case 'l':
          return t.localHost ?? 'localhost';
        default:
          return (t.localHost ?? 'localhost').split('.')[0]; // L
      }
    },
  );
}

/**
 * A path directive's value (IdentityFile, UserKnownHostsFile, IdentityAgent) as a file name:
 * Windows `%NAME%`, then `~`/`~user`, then tokens and `${VAR}`; a relative result is taken
 * relative to ~/.ssh.
 */
export function expandConfigPath(raw: string, ctx: PathContext, tokens: TokenValues, directive: string): string {
  const unquoted = raw.replace(/^"(.*)"$/, '$1');
  const expanded = expandTokens(
    expandTilde(expandWindowsEnv(unquoted, ctx), ctx),
    tokens,
    TOKENS.path,
    directive,
    ctx.env,
  );
  const api = pathApi(ctx.platform);
  if (!api.isAbsolute(expanded)) return api.join(sshDir(ctx), expanded);
  // Windows: `%d/.ssh/x` gives mixed separators; one kind reads better in logs and messages.
  return ctx.platform === 'win32' ? api.normalize(expanded) : expanded;
}

/** A path typed in a setting (kimiService.knownHostsFile, identityFile): Windows `%NAME%` and `~`; no tokens. */
export function expandUserPath(p: string, ctx: PathContext): string {
  return expandTilde(expandWindowsEnv(p, ctx), ctx);
}

/** The home directory of `name` in /etc/passwd text (`name:x:uid:gid:gecos:home:shell`). */
export function passwdHome(passwdText: string, name: string): string | undefined {
  for (const line of passwdText.split('\n')) {
    const f = line.split(':');
    if (f.length >= 7 && f[0] === name && f[5] !== '') return f[5];
  }
  return undefined;
}

// ---- system wrapper ----

/** This process's platform, home, user and environment; `~user` from /etc/passwd (macOS: /Users/NAME). */
export function systemPathContext(overrides: Partial<PathContext> = {}): PathContext {
  const platform = overrides.platform ?? process.platform;
  return {
    platform,
    homeDir: overrides.homeDir ?? os.homedir(),
    localUser: overrides.localUser ?? currentUser(),
    env: overrides.env ?? process.env,
    userHome: overrides.userHome ?? ((name) => systemUserHome(name, platform)),
    localHost: overrides.localHost ?? safeHostName(),
  };
}

function systemUserHome(name: string, platform: NodeJS.Platform): string | undefined {
  if (platform === 'win32') return undefined;
  try {
    const home = passwdHome(fs.readFileSync('/etc/passwd', 'utf8'), name);
    if (home) return home;
  } catch {
    // no /etc/passwd: fall through
  }
  // macOS keeps most users in Directory Services, not /etc/passwd.
  if (platform === 'darwin' && /^[A-Za-z0-9._-]+$/.test(name) && fs.existsSync(`/Users/${name}`))
    return `/Users/${name}`;
  return undefined;
}

export function currentUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'root';
  }
}

function safeHostName(): string {
  try {
    return os.hostname();
  } catch {
    return 'localhost';
  }
}
