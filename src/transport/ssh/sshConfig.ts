/**
 * Resolving a `host` setting through ~/.ssh/config (the `ssh-config` package's compute(), after
 * Include files are inlined by sshInclude.ts). Applied: HostName, User, Port, IdentityFile,
 * IdentitiesOnly, IdentityAgent, ProxyJump, ProxyCommand, UserKnownHostsFile, HashKnownHosts,
 * ConnectTimeout, ServerAliveInterval, ServerAliveCountMax; `Match` where ssh-config evaluates it
 * (host, originalhost, user, localuser, all, final). Every other directive that applies to the
 * host is listed in `configNotes`, which the transport logs.
 * `resolveSshTarget` is pure; `loadSshTarget` is the thin fs wrapper.
 */
import * as fs from 'node:fs';
import { parse as parseSshConfig } from 'ssh-config';
import { collectConfigFiles, expandIncludes, NO_FILES, type ConfigFiles } from './sshInclude';
import {
  expandConfigPath,
  expandTokens,
  pathApi,
  sshDir,
  systemPathContext,
  TOKENS,
  type PathContext,
  type TokenValues,
} from './sshPaths';
import { TransportError } from '../transport';

export { expandTokens } from './sshPaths';

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
  /** IdentitiesOnly yes: only the identity files, and only agent keys whose public key is one of theirs. */
  readonly identitiesOnly?: boolean;
  /** IdentityAgent, expanded: a socket or pipe path, or `none`; undefined = not set ($SSH_AUTH_SOCK...). */
  readonly identityAgent?: string;
  /** ProxyCommand, tokens expanded: run locally, its stdio is the connection (first hop only). */
  readonly proxyCommand?: string;
  /** UserKnownHostsFile when the config sets it (the first one is written); undefined = kimiService.knownHostsFile. */
  readonly knownHostsFiles?: readonly string[];
  /** HashKnownHosts yes: new known_hosts lines are written hashed. */
  readonly hashKnownHosts?: boolean;
  /** ConnectTimeout, as the handshake deadline. */
  readonly connectTimeoutMs?: number;
  /** ServerAliveInterval (> 0), as ssh2's keepalive interval. */
  readonly serverAliveIntervalMs?: number;
  readonly serverAliveCountMax?: number;
  /** What the config asks that is not applied (unsupported directives, Match criteria): logged. */
  readonly configNotes?: readonly string[];
}

export interface SshTarget extends SshEndpoint {
  /** Jump hosts in dialing order (first is dialed directly). */
  readonly jumps: readonly SshEndpoint[];
}

export interface ResolveEnv {
  readonly homeDir: string;
  readonly localUser: string;
  /** Defaults to this process's platform. */
  readonly platform?: NodeJS.Platform;
  /** For ${VAR}, %VAR% (Windows), IdentityAgent SSH_AUTH_SOCK; defaults to none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `~user` lookups. */
  readonly userHome?: (name: string) => string | undefined;
  readonly localHost?: string;
  /** The files Include lines reach (see collectConfigFiles); default none. */
  readonly files?: ConfigFiles;
}

const DEFAULT_IDENTITY_FILES = ['~/.ssh/id_ed25519', '~/.ssh/id_ecdsa', '~/.ssh/id_rsa'];
const MAX_JUMP_DEPTH = 8;

/** `~` and `~/x` only (kept for callers of the old API); see sshPaths.expandTilde for `~user` and Windows. */
export function expandTilde(p: string, homeDir: string): string {
  if (p === '~') return homeDir;
  if (p.startsWith('~/')) return pathApi(process.platform).join(homeDir, p.slice(2));
  return p;
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
  if (port !== undefined && !(port >= 1 && port <= 65535))
    throw new Error(`Invalid port in ProxyJump hop: ${JSON.stringify(spec)}`);
  return { host, user, port };
}

type Computed = Record<string, string | string[]>;

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** The directives this module applies (lowercase), and the section keywords. */
const APPLIED = new Set([
  'host',
  'match',
  'include',
  'hostname',
  'user',
  'port',
  'identityfile',
  'identitiesonly',
  'identityagent',
  'proxyjump',
  'proxycommand',
  'userknownhostsfile',
  'hashknownhosts',
  'connecttimeout',
  'serveraliveinterval',
  'serveralivecountmax',
]);

/** ssh_config(5) keywords, for naming what is not applied the way the user spells it. */
const KEYWORDS = [
  'AddKeysToAgent',
  'AddressFamily',
  'BatchMode',
  'BindAddress',
  'BindInterface',
  'CanonicalDomains',
  'CanonicalizeFallbackLocal',
  'CanonicalizeHostname',
  'CanonicalizeMaxDots',
  'CanonicalizePermittedCNAMEs',
  'CASignatureAlgorithms',
  'CertificateFile',
  'ChannelTimeout',
  'CheckHostIP',
  'Ciphers',
  'ClearAllForwardings',
  'Compression',
  'ConnectionAttempts',
  'ControlMaster',
  'ControlPath',
  'ControlPersist',
  'DynamicForward',
  'EnableEscapeCommandline',
  'EnableSSHKeysign',
  'EscapeChar',
  'ExitOnForwardFailure',
  'FingerprintHash',
  'ForkAfterAuthentication',
  'ForwardAgent',
  'ForwardX11',
  'ForwardX11Timeout',
  'ForwardX11Trusted',
  'GatewayPorts',
  'GlobalKnownHostsFile',
  'GSSAPIAuthentication',
  'GSSAPIDelegateCredentials',
  'HostbasedAcceptedAlgorithms',
  'HostbasedAuthentication',
  'HostKeyAlgorithms',
  'HostKeyAlias',
  'IgnoreUnknown',
  'IPQoS',
  'KbdInteractiveAuthentication',
  'KbdInteractiveDevices',
  'KexAlgorithms',
  'KnownHostsCommand',
  'LocalCommand',
  'LocalForward',
  'LogLevel',
  'LogVerbose',
  'MACs',
  'NoHostAuthenticationForLocalhost',
  'NumberOfPasswordPrompts',
  'ObscureKeystrokeTiming',
  'PasswordAuthentication',
  'PermitLocalCommand',
  'PermitRemoteOpen',
  'PKCS11Provider',
  'PreferredAuthentications',
  'ProxyUseFdpass',
  'PubkeyAcceptedAlgorithms',
  'PubkeyAcceptedKeyTypes',
  'PubkeyAuthentication',
  'RekeyLimit',
  'RemoteCommand',
  'RemoteForward',
  'RequestTTY',
  'RequiredRSASize',
  'RevokedHostKeys',
  'SecurityKeyProvider',
  'SendEnv',
  'SessionType',
  'SetEnv',
  'StdinNull',
  'StreamLocalBindMask',
  'StreamLocalBindUnlink',
  'StrictHostKeyChecking',
  'SyslogFacility',
  'Tag',
  'TCPKeepAlive',
  'Tunnel',
  'TunnelDevice',
  'UpdateHostKeys',
  'UseKeychain',
  'VerifyHostKeyDNS',
  'VisualHostKey',
  'XAuthLocation',
];
const KEYWORD_CASE = new Map(KEYWORDS.map((k) => [k.toLowerCase(), k]));

/** Why some common directives are not applied (the rest are just named). */
const WHY: Readonly<Record<string, string>> = {
  stricthostkeychecking: 'kimiService.hostKeyPolicy decides',
  globalknownhostsfile: 'only UserKnownHostsFile or kimiService.knownHostsFile is read',
  certificatefile: 'ssh2 cannot log in with certificates',
  pkcs11provider: 'ssh2 cannot use PKCS#11; an agent holding the key can',
  securitykeyprovider: 'ssh2 cannot use FIDO keys; an agent holding the key can',
  controlmaster: 'one ssh2 connection is kept instead',
  controlpath: 'one ssh2 connection is kept instead',
  controlpersist: 'one ssh2 connection is kept instead',
  localforward: 'no forwards are opened',
  remoteforward: 'no forwards are opened',
  dynamicforward: 'no forwards are opened',
  hostkeyalias: 'known_hosts is looked up by HostName and Port',
  kexalgorithms: "ssh2's algorithms are used",
  ciphers: "ssh2's algorithms are used",
  macs: "ssh2's algorithms are used",
  hostkeyalgorithms: "ssh2's algorithms are used",
  pubkeyacceptedalgorithms: "ssh2's algorithms are used",
};

/** Match criteria ssh-config evaluates; a Match block using another one never applies. */
const MATCH_EVALUATED = new Set(['all', 'host', 'originalhost', 'user', 'localuser', 'final']);

/** The directives of `computed` this module does not apply, named for the log. */
export function unsupportedDirectives(computed: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(computed)
    .filter((k) => !APPLIED.has(k.toLowerCase()))
    .map((k) => {
      const name = KEYWORD_CASE.get(k.toLowerCase()) ?? k;
      const why = WHY[k.toLowerCase()];
      return why ? `${name} (${why})` : name;
    });
}

/** `Match` criteria in the config that ssh-config cannot evaluate (exec, canonical, localnetwork, tagged...). */
export function unevaluatedMatchCriteria(configText: string): string[] {
  const out = new Set<string>();
  for (const line of parseSshConfig(configText)) {
    const l = line as { param?: string; criteria?: Record<string, unknown> };
    if (!l.param || l.param.toLowerCase() !== 'match' || !l.criteria) continue;
    for (const k of Object.keys(l.criteria)) if (!MATCH_EVALUATED.has(k.toLowerCase())) out.add(k.toLowerCase());
  }
  return [...out];
}

function pathContext(env: ResolveEnv): PathContext {
  return {
    platform: env.platform ?? process.platform,
    homeDir: env.homeDir,
    localUser: env.localUser,
    env: env.env ?? {},
    userHome: env.userHome,
    localHost: env.localHost,
  };
}

function yes(v: string | undefined): boolean {
  return v !== undefined && /^(yes|true)$/i.test(v);
}

function seconds(name: string, v: string | undefined, alias: string, min: number): number | undefined {
  if (v === undefined || v.toLowerCase() === 'none') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min)
    throw new Error(`Invalid ${name} ${JSON.stringify(v)} for ${alias} in ~/.ssh/config`);
  return Number(v);
}

function resolveIdentityAgent(raw: string | undefined, ctx: PathContext, tokens: TokenValues): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.toLowerCase() === 'none') return 'none';
  // ssh_config(5): "SSH_AUTH_SOCK" or "$VAR" names an environment variable holding the path.
  if (raw === 'SSH_AUTH_SOCK' || /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(raw))
    return ctx.env[raw.replace(/^\$/, '')] || 'none';
  return expandConfigPath(raw, ctx, tokens, 'IdentityAgent');
}

function resolveEndpoint(
  computed: Computed,
  settings: SshSettings,
  env: ResolveEnv,
  notes: readonly string[],
): SshEndpoint {
  const ctx = pathContext(env);
  const alias = settings.host;
  const cfgPortText = first(computed.port);
  const cfgPort = cfgPortText !== undefined ? Number(cfgPortText) : undefined;
  if (cfgPort !== undefined && !(Number.isInteger(cfgPort) && cfgPort >= 1 && cfgPort <= 65535)) {
    throw new Error(`Invalid Port ${JSON.stringify(cfgPortText)} for ${alias} in ~/.ssh/config`);
  }
  const port = settings.port ?? cfgPort ?? 22;
  const username = settings.username ?? first(computed.user) ?? env.localUser;
  const base = {
    port,
    remoteUser: username,
    localUser: env.localUser,
    homeDir: env.homeDir,
    alias,
    localHost: env.localHost,
  };
  const rawHostName = first(computed.hostname);
  const hostName = rawHostName
    ? expandTokens(rawHostName, { ...base, host: alias }, TOKENS.hostName, 'HostName')
    : alias;
  const tokens: TokenValues = { ...base, host: hostName };

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
  const identityFiles = files.map((f) => expandConfigPath(f, ctx, tokens, 'IdentityFile'));

  const configNotes = [...notes];
  let knownHostsFiles: string[] | undefined;
  const khRaw = list(computed.userknownhostsfile);
  if (khRaw.length > 0) {
    if (khRaw.some((f) => f.toLowerCase() === 'none'))
      configNotes.push('UserKnownHostsFile none (kimiService.knownHostsFile is used)');
    else knownHostsFiles = khRaw.map((f) => expandConfigPath(f, ctx, tokens, 'UserKnownHostsFile'));
  }

  // OpenSSH takes whichever of ProxyCommand and ProxyJump comes first (ssh-config keeps that order).
  const keys = Object.keys(computed);
  const pc = first(computed.proxycommand);
  const pj = first(computed.proxyjump);
  const proxyCommandWins =
    pc !== undefined && (pj === undefined || keys.indexOf('proxycommand') < keys.indexOf('proxyjump'));
  const proxyCommand =
    proxyCommandWins && pc.toLowerCase() !== 'none'
      ? expandTokens(pc, tokens, TOKENS.proxyCommand, 'ProxyCommand')
      : undefined;

  const connectTimeout = seconds('ConnectTimeout', first(computed.connecttimeout), alias, 0);
  const aliveInterval = seconds('ServerAliveInterval', first(computed.serveraliveinterval), alias, 0);
  const aliveCount = seconds('ServerAliveCountMax', first(computed.serveralivecountmax), alias, 0);

  configNotes.push(...unsupportedDirectives(computed));
  return {
    alias,
    hostName,
    port,
    username,
    identityFiles,
    identityFilesConfigured: configured,
    identitiesOnly: yes(first(computed.identitiesonly)),
    identityAgent: resolveIdentityAgent(first(computed.identityagent), ctx, tokens),
    ...(proxyCommand !== undefined ? { proxyCommand } : {}),
    ...(knownHostsFiles ? { knownHostsFiles } : {}),
    hashKnownHosts: yes(first(computed.hashknownhosts)),
    ...(connectTimeout ? { connectTimeoutMs: connectTimeout * 1000 } : {}),
    ...(aliveInterval ? { serverAliveIntervalMs: aliveInterval * 1000 } : {}),
    ...(aliveCount ? { serverAliveCountMax: aliveCount } : {}),
    configNotes,
  };
}

function compute(configText: string, host: string, user?: string): Computed {
  const config = parseSshConfig(configText);
  return config.compute({ Host: host, User: user }, { ignoreCase: true, matchExec: false });
}

/**
 * Resolves `settings` through the config text. Explicit port/username/identityFile win over the
 * config; ProxyJump hops are resolved through the config too (a first hop's own ProxyJump or
 * ProxyCommand is followed, as OpenSSH does; later hops are reached through the previous one).
 */
export function resolveSshTarget(settings: SshSettings, configText: string, env: ResolveEnv): SshTarget {
  return resolveWithJumps(settings, configText, env, 0, new Set());
}

function resolveWithJumps(
  settings: SshSettings,
  configText: string,
  env: ResolveEnv,
  depth: number,
  seen: Set<string>,
): SshTarget {
  if (depth > MAX_JUMP_DEPTH) throw new Error(`ProxyJump chain too long (more than ${MAX_JUMP_DEPTH} hops)`);
  const key = settings.host.toLowerCase();
  if (seen.has(key)) throw new Error(`ProxyJump loop through ${settings.host}`);
  const expanded = expandIncludes(configText, env.files ?? NO_FILES, settings.host, pathContext(env));
  const unevaluated = unevaluatedMatchCriteria(expanded.text).map(
    (c) => `Match ${c} (not evaluated: such blocks never apply)`,
  );
  const computed = compute(expanded.text, settings.host, settings.username);
  const endpoint = resolveEndpoint(computed, settings, env, [...expanded.notes, ...unevaluated]);
  const proxyJump = endpoint.proxyCommand === undefined ? first(computed.proxyjump) : undefined;
  const jumps: SshEndpoint[] = [];
  if (proxyJump && proxyJump.toLowerCase() !== 'none') {
    const hops = proxyJump.split(',').map(parseJumpHop);
    const nextSeen = new Set(seen).add(key);
    hops.forEach((hop, i) => {
      const resolved = resolveWithJumps(
        { host: hop.host, port: hop.port, username: hop.user },
        configText,
        env,
        depth + 1,
        nextSeen,
      );
      if (i === 0) jumps.push(...resolved.jumps);
      const ep = stripJumps(resolved);
      // Hops after the first are reached through the one before (as `ssh -J a,b`): their own ProxyCommand does not apply.
      if (i > 0 && ep.proxyCommand !== undefined) {
        const { proxyCommand: _pc, ...rest } = ep;
        jumps.push(rest);
      } else jumps.push(ep);
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
  readonly platform?: NodeJS.Platform;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Reads ~/.ssh/config (missing = empty) and the files it Includes, and resolves `settings` through them. */
export async function loadSshTarget(settings: SshSettings, options: LoadOptions = {}): Promise<SshTarget> {
  const ctx = systemPathContext({
    ...(options.homeDir !== undefined ? { homeDir: options.homeDir } : {}),
    ...(options.localUser !== undefined ? { localUser: options.localUser } : {}),
    ...(options.platform !== undefined ? { platform: options.platform } : {}),
    ...(options.env !== undefined ? { env: options.env } : {}),
  });
  const configPath = options.configPath ?? pathApi(ctx.platform).join(sshDir(ctx), 'config');
  let text = '';
  try {
    text = await fs.promises.readFile(configPath, 'utf8');
  } catch (err) {
    // Unreadable (EACCES, a directory, ...): the user's to fix, like a bad line in it.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new TransportError('config', `${configPath}: ${(err as Error).message}`);
  }
  try {
    const files = await collectConfigFiles(text, ctx);
    return resolveSshTarget(settings, text, { ...ctx, files });
  } catch (err) {
    throw new TransportError('config', `${configPath}: ${(err as Error).message}`);
  }
}
