/**
 * The host's effective configuration as OpenSSH itself computes it (`ssh -G HOST`: Include,
 * Match, canonicalisation, tokens, defaults), parsed. Pure apart from `readEffectiveConfig`.
 */
import { execFile } from 'node:child_process';
import { ConfigError } from '../errors';
import { hostStartsWithDash, sshDashGFailed, sshNotInstalled } from '../../present/words/opensshWords';

/** `ssh -G`'s keywords (lower case) and their values; keywords that repeat keep every value, in order. */
export type EffectiveConfig = ReadonlyMap<string, readonly string[]>;

export function parseEffectiveConfig(text: string): EffectiveConfig {
  const out = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const space = line.indexOf(' ');
    const key = (space < 0 ? line : line.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : line.slice(space + 1);
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

/** The first value of `key`, if any. */
export function first(config: EffectiveConfig, key: string): string | undefined {
  return config.get(key)?.[0];
}

/** Every value of a repeating keyword (identityfile, certificatefile...), `none` dropped. */
export function all(config: EffectiveConfig, key: string): string[] {
  return (config.get(key) ?? []).filter((v) => v !== '' && v.toLowerCase() !== 'none');
}

/** A yes/no keyword (`ssh -G` prints yes, true, no, false). */
export function yes(config: EffectiveConfig, key: string): boolean {
  const v = first(config, key)?.toLowerCase();
  return v === 'yes' || v === 'true';
}

/** Space-separated paths of one keyword (userknownhostsfile, globalknownhostsfile). */
export function paths(config: EffectiveConfig, key: string): string[] {
  return (first(config, key) ?? '').split(/\s+/).filter((p) => p !== '' && p.toLowerCase() !== 'none');
}

/** What a `host` setting (and its overrides) is, as arguments of `ssh`: `-p`, `-l`, `-i`, then the host. */
export interface HostArgs {
  readonly host: string;
  readonly port?: number;
  readonly username?: string;
  readonly identityFile?: string;
  /** `-F FILE` (tests, or a config elsewhere); undefined = OpenSSH's own choice (~/.ssh/config). */
  readonly configFile?: string;
}

export function hostArgs(h: HostArgs): string[] {
  if (h.host.startsWith('-')) throw new ConfigError(hostStartsWithDash(h.host));
  return [
    ...(h.configFile !== undefined ? ['-F', h.configFile] : []),
    ...(h.port !== undefined ? ['-p', String(h.port)] : []),
    ...(h.username !== undefined ? ['-l', h.username] : []),
    ...(h.identityFile !== undefined ? ['-i', h.identityFile] : []),
  ];
}

/** Runs `ssh -G` for the host; rejects with a ConfigError in OpenSSH's words. */
export function readEffectiveConfig(h: HostArgs, sshPath = 'ssh'): Promise<EffectiveConfig> {
  return new Promise((resolve, reject) => {
    execFile(
      sshPath,
      ['-G', ...hostArgs(h), '--', h.host],
      { timeout: 15_000, maxBuffer: 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
          return reject(
            new ConfigError(missing ? sshNotInstalled(sshPath) : sshDashGFailed(h.host, stderr.trim() || err.message)),
          );
        }
        resolve(parseEffectiveConfig(stdout));
      },
    );
  });
}
