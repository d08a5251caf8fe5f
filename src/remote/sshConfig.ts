/**
 * Resolving a `host` setting through ~/.ssh/config (the `ssh-config` package's compute()).
 * `resolveSshTarget` is pure; `loadSshTarget` is the thin fs wrapper.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseSshConfig } from 'ssh-config';
import { TransportError } from './transport';

export interface SshSettings {
  readonly host: string;
  /** Overrides the config's Port when set. */
  readonly port?: number;
  readonly username?: string;
  /** Overrides the config's IdentityFile list when set. */
  readonly identityFile?: string;
}

export interface SshEndpoint {
  /** The name the user wrote (alias or host). */
  readonly alias: string;
  /** The address to dial, after HostName. */
  readonly hostName: string;
  readonly port: number;
  readonly username: string;
  /** Absolute paths, in the order to try. */
  readonly identityFiles: readonly string[];
  /** False when `identityFiles` are OpenSSH's defaults (missing ones are skipped silently). */
  readonly identityFilesConfigured: boolean;
}

export interface SshTarget extends SshEndpoint {
  /** Jump hosts in dialing order (first is dialed directly). */
  readonly jumps: readonly SshEndpoint[];
}

export interface ResolveEnv {
  readonly homeDir: string;
  readonly localUser: string;
}

const DEFAULT_IDENTITY_FILES = ['~/.ssh/id_ed25519', '~/.ssh/id_ecdsa', '~/.ssh/id_rsa'];
const MAX_JUMP_DEPTH = 8;

export function expandTilde(p: string, homeDir: string): string {
  if (p === '~') return homeDir;
  if (p.startsWith('~/')) return path.join(homeDir, p.slice(2));
  return p;
}

/** The minimal ssh_config(5) TOKENS: %% %h %p %r %u %d. */
export function expandTokens(s: string, t: { host: string; port: number; remoteUser: string; localUser: string; homeDir: string }): string {
  return s.replace(/%([%hprud])/g, (_m, c: string) => {
    switch (c) {
      case '%': return '%';
      case 'h': return t.host;
      case 'p': return String(t.port);
      case 'r': return t.remoteUser;
      case 'u': return t.localUser;
      default: return t.homeDir; // d
    }
  });
}

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
  if (!host || /\s/.test(host)) throw new Error(`Invalid ProxyJump hop: ${JSON.stringify(spec)}`);
  if (port !== undefined && !(port >= 1 && port <= 65535)) throw new Error(`Invalid port in ProxyJump hop: ${JSON.stringify(spec)}`);
  return { host, user, port };
}

type Computed = Record<string, string | string[]>;

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function resolveEndpoint(computed: Computed, settings: SshSettings, env: ResolveEnv): SshEndpoint {
  const alias = settings.host;
  const cfgPortText = first(computed.port);
  const cfgPort = cfgPortText !== undefined ? Number(cfgPortText) : undefined;
  if (cfgPort !== undefined && !(Number.isInteger(cfgPort) && cfgPort >= 1 && cfgPort <= 65535)) {
    throw new Error(`Invalid Port ${JSON.stringify(cfgPortText)} for ${alias} in ~/.ssh/config`);
  }
  const port = settings.port ?? cfgPort ?? 22;
  const username = settings.username ?? first(computed.user) ?? env.localUser;
  const rawHostName = first(computed.hostname);
  const hostName = rawHostName
    ? expandTokens(rawHostName, { host: alias, port, remoteUser: username, localUser: env.localUser, homeDir: env.homeDir })
    : alias;
  const tokens = { host: hostName, port, remoteUser: username, localUser: env.localUser, homeDir: env.homeDir };

  let files: string[];
  let configured = true;
  if (settings.identityFile) files = [settings.identityFile];
  else {
    files = list(computed.identityfile).filter((f) => f.toLowerCase() !== 'none');
    if (files.length === 0) {
      files = DEFAULT_IDENTITY_FILES;
      configured = false;
    }
  }
  const identityFiles = files.map((f) => {
    const expanded = expandTilde(expandTokens(f.replace(/^"(.*)"$/, '$1'), tokens), env.homeDir);
    return path.isAbsolute(expanded) ? expanded : path.join(env.homeDir, '.ssh', expanded);
  });
  return { alias, hostName, port, username, identityFiles, identityFilesConfigured: configured };
}

function compute(configText: string, host: string, user?: string): Computed {
  const config = parseSshConfig(configText);
  return config.compute({ Host: host, User: user }, { ignoreCase: true, matchExec: false });
}

/**
 * Resolves `settings` through the config text. Explicit port/username/identityFile win over the
 * config; ProxyJump hops are resolved through the config too (a first hop's own ProxyJump
 * is followed, as OpenSSH does).
 */
export function resolveSshTarget(settings: SshSettings, configText: string, env: ResolveEnv): SshTarget {
  return resolveWithJumps(settings, configText, env, 0, new Set());
}

function resolveWithJumps(settings: SshSettings, configText: string, env: ResolveEnv, depth: number, seen: Set<string>): SshTarget {
  if (depth > MAX_JUMP_DEPTH) throw new Error(`ProxyJump chain too long (more than ${MAX_JUMP_DEPTH} hops)`);
  const key = settings.host.toLowerCase();
  if (seen.has(key)) throw new Error(`ProxyJump loop through ${settings.host}`);
  const computed = compute(configText, settings.host, settings.username);
  const endpoint = resolveEndpoint(computed, settings, env);
  const proxyJump = first(computed.proxyjump);
  const jumps: SshEndpoint[] = [];
  if (proxyJump && proxyJump.toLowerCase() !== 'none') {
    const hops = proxyJump.split(',').map(parseJumpHop);
    const nextSeen = new Set(seen).add(key);
    hops.forEach((hop, i) => {
      const resolved = resolveWithJumps({ host: hop.host, port: hop.port, username: hop.user }, configText, env, depth + 1, nextSeen);
      if (i === 0) jumps.push(...resolved.jumps);
      jumps.push(stripJumps(resolved));
    });
  }
  return { ...endpoint, jumps };
}

function stripJumps(t: SshTarget): SshEndpoint {
  const { jumps: _jumps, ...endpoint } = t;
  return endpoint;
}

// ---- fs wrapper ----

export interface LoadOptions {
  readonly configPath?: string;
  readonly homeDir?: string;
  readonly localUser?: string;
}

/** Reads ~/.ssh/config (missing = empty) and resolves `settings` through it. */
export async function loadSshTarget(settings: SshSettings, options: LoadOptions = {}): Promise<SshTarget> {
  const homeDir = options.homeDir ?? os.homedir();
  const localUser = options.localUser ?? safeLocalUser();
  const configPath = options.configPath ?? path.join(homeDir, '.ssh', 'config');
  let text = '';
  try {
    text = await fs.promises.readFile(configPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    return resolveSshTarget(settings, text, { homeDir, localUser });
  } catch (err) {
    throw new TransportError('config', `${configPath}: ${(err as Error).message}`);
  }
}

function safeLocalUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? 'root';
  }
}
