/**
 * What the host's effective configuration (`ssh -G`) points at on this machine: certificates
 * (files, beside the identities, in the agent), the known-hosts files and their marker lines.
 * Read-only I/O; each function says what it reads.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hostFieldMatches, hostLookupName, parseKnownHosts, readKnownHostsFile } from '../ssh/knownHosts';
import { all, first, paths, yes, type EffectiveConfig } from './effectiveConfig';

const exists = (p: string) => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

/** CertificateFile entries that exist, and `<identity>-cert.pub` files beside the identity files. */
export function certificatesOf(config: EffectiveConfig): { files: string[]; beside: string[] } {
  return {
    files: all(config, 'certificatefile').filter(exists),
    beside: all(config, 'identityfile')
      .map((id) => `${id}-cert.pub`)
      .filter(exists),
  };
}

/** The agent socket OpenSSH would use: IdentityAgent, else SSH_AUTH_SOCK; undefined = none. */
export function agentSocketOf(config: EffectiveConfig, env: NodeJS.ProcessEnv): string | undefined {
  const set = first(config, 'identityagent');
  if (set !== undefined) {
    if (set.toLowerCase() === 'none') return undefined;
    if (set !== 'SSH_AUTH_SOCK') return set.replace(/^~(?=\/|$)/, os.userInfo().homedir);
  }
  return env.SSH_AUTH_SOCK || undefined;
}

/** The certificates the agent holds (`ssh-add -L` lines of `*-cert-v01@openssh.com` keys). */
export function agentCertificates(config: EffectiveConfig, env: NodeJS.ProcessEnv): Promise<string[]> {
  const sock = agentSocketOf(config, env);
  if (sock === undefined || all(config, 'identitiesonly').some((v) => v === 'yes')) return Promise.resolve([]);
  return new Promise((resolve) => {
    execFile(
      'ssh-add',
      ['-L'],
      { timeout: 5000, encoding: 'utf8', env: { ...env, SSH_AUTH_SOCK: sock } },
      (err, stdout) => resolve(err ? [] : stdout.split('\n').filter((l) => /^\S+-cert-v01@openssh\.com /.test(l))),
    );
  });
}

/** OpenSSH's default UserKnownHostsFile, as `ssh -G` prints it for this user. */
function defaultUserKnownHosts(): string {
  const home = os.userInfo().homedir;
  return `${path.join(home, '.ssh', 'known_hosts')} ${path.join(home, '.ssh', 'known_hosts2')}`;
}

/**
 * The known-hosts files ssh would read for the host: the config's UserKnownHostsFile when it sets
 * one, else `fallback` (kimiService.knownHostsFile), which is then passed to ssh (`override`).
 * The first is where a trusted key is written; the global files are read too.
 */
export function knownHostsFilesOf(
  config: EffectiveConfig,
  fallback: string,
): { user: string[]; global: string[]; override?: string } {
  const configured = first(config, 'userknownhostsfile');
  const global = paths(config, 'globalknownhostsfile');
  if (configured === undefined || configured === defaultUserKnownHosts())
    return { user: [fallback], global, override: fallback };
  return { user: paths(config, 'userknownhostsfile'), global };
}

/** The name the host's keys are recorded under: HostKeyAlias, else `[HostName]:Port`. */
export function knownHostsName(config: EffectiveConfig): { host: string; port: number; name: string } {
  const host = first(config, 'hostkeyalias') ?? first(config, 'hostname') ?? '';
  const port = Number(first(config, 'port') ?? '22');
  return { host, port, name: hostLookupName(host, port) };
}

/** Lines with @cert-authority or @revoked that match the host, as "FILE line N (@marker)". */
export async function markerLines(config: EffectiveConfig, files: readonly string[]): Promise<string[]> {
  const { name } = knownHostsName(config);
  const out: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readKnownHostsFile(file);
    } catch {
      continue;
    }
    for (const e of parseKnownHosts(text))
      if (e.marker !== undefined && hostFieldMatches(e.hosts, name)) out.push(`${file} line ${e.line} (@${e.marker})`);
  }
  return out;
}

export const gssapiOn = (config: EffectiveConfig): boolean => yes(config, 'gssapiauthentication');
