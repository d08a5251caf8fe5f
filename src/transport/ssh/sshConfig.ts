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
import { collectConfigFiles, expandIncludes, NO_FILES } from './sshInclude';
import { pathApi, sshDir, systemPathContext } from './sshPaths';
import { unevaluatedMatchCriteria } from './sshDirectives';
import { first, pathContext, resolveEndpoint, type Computed } from './sshEndpoint';
import { parseJumpHop } from './sshJumpHop';
import type { ResolveEnv, SshEndpoint, SshSettings, SshTarget } from './sshTargetTypes';
import { ConfigError, SshConfigSyntaxError } from '../errors';
import { jumpChainTooLong, jumpLoop, matchNotEvaluated, sshConfigUnreadable } from '../../present/words/sshWords';

const MAX_JUMP_DEPTH = 8;

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
  if (depth > MAX_JUMP_DEPTH) throw new SshConfigSyntaxError(jumpChainTooLong(MAX_JUMP_DEPTH));
  const key = settings.host.toLowerCase();
  if (seen.has(key)) throw new SshConfigSyntaxError(jumpLoop(settings.host));
  const expanded = expandIncludes(configText, env.files ?? NO_FILES, settings.host, pathContext(env));
  const unevaluated = unevaluatedMatchCriteria(expanded.text).map(matchNotEvaluated);
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
      throw new ConfigError(sshConfigUnreadable(configPath, (err as Error).message));
  }
  try {
    const files = await collectConfigFiles(text, ctx);
    return resolveSshTarget(settings, text, { ...ctx, files });
  } catch (err) {
    throw new ConfigError(sshConfigUnreadable(configPath, (err as Error).message));
  }
}
