/** One host's computed ssh_config directives made an SshEndpoint: settings win, paths and tokens expanded. Pure. */
import { expandConfigPath, expandTokens, TOKENS, type PathContext, type TokenValues } from './sshPaths';
import { unsupportedDirectives } from './sshDirectives';
import type { ResolveEnv, SshEndpoint, SshSettings } from './sshTargetTypes';
import { SshConfigSyntaxError } from '../errors';
import { invalidDirective, knownHostsNone } from '../../present/words/sshWords';

const DEFAULT_IDENTITY_FILES = ['~/.ssh/id_ed25519', '~/.ssh/id_ecdsa', '~/.ssh/id_rsa'];

export type Computed = Record<string, string | string[]>;

export function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

export function pathContext(env: ResolveEnv): PathContext {
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
  if (!/^\d+$/.test(v) || Number(v) < min) throw new SshConfigSyntaxError(invalidDirective(name, v, alias));
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

export function resolveEndpoint(
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
    throw new SshConfigSyntaxError(invalidDirective('Port', cfgPortText, alias));
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
    if (khRaw.some((f) => f.toLowerCase() === 'none')) configNotes.push(knownHostsNone());
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
