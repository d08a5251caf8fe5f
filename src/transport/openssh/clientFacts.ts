/** Gathers what chooseClient.ts decides on for one host: `ssh -G`, the files it names, the agent's certificates. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SshTarget } from '../ssh/sshTargetTypes';
import { first, readEffectiveConfig, yes, type HostArgs } from './effectiveConfig';
import type { ClientFacts } from './chooseClient';
import { agentCertificates, certificatesOf, knownHostsFilesOf, markerLines } from './identities';

/** Undefined when the OpenSSH client cannot be run (not installed): ssh2 is then the only choice. */
export async function gatherClientFacts(
  host: HostArgs,
  knownHostsFile: string,
  ssh2Target: () => Promise<SshTarget>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClientFacts | undefined> {
  let config;
  try {
    config = await readEffectiveConfig(host);
  } catch {
    return undefined;
  }
  let ssh2ConfigError: string | undefined;
  let matchExec = false;
  try {
    const target = await ssh2Target();
    matchExec = [target, ...target.jumps].some((ep) => (ep.configNotes ?? []).some((n) => /^Match exec\b/.test(n)));
  } catch (err) {
    ssh2ConfigError = (err as Error).message;
  }
  const known = knownHostsFilesOf(config, knownHostsFile);
  const { files, beside } = certificatesOf(config);
  const pkcs11 = first(config, 'pkcs11provider');
  const khCommand = first(config, 'knownhostscommand');
  return {
    certificateFiles: files,
    certificatesBesideIdentities: beside,
    agentCertificates: (await agentCertificates(config, env)).length,
    markerLines: await markerLines(config, [...known.user, ...known.global]),
    // Debian's and Ubuntu's /etc/ssh/ssh_config turn GSSAPI on for every host: it counts with a
    // ticket, or when the user's own config asks for it (so that a missing ticket is told as such).
    gssapiAuthentication:
      yes(config, 'gssapiauthentication') && ((await hasKerberosTicket(env)) || (await userConfigAsksGssapi(host))),
    ...(pkcs11 !== undefined && pkcs11 !== 'none' ? { pkcs11Provider: pkcs11 } : {}),
    ...(khCommand !== undefined && khCommand !== 'none' ? { knownHostsCommand: khCommand } : {}),
    matchExec,
    ...(ssh2ConfigError !== undefined ? { ssh2ConfigError } : {}),
  };
}

/**
 * GSSAPIAuthentication yes in the user's own config, read without the system-wide one: `-F`
 * already leaves /etc/ssh/ssh_config out; otherwise ~/.ssh/config (of the passwd entry's home, as
 * OpenSSH reads it) is read alone.
 */
async function userConfigAsksGssapi(host: HostArgs): Promise<boolean> {
  if (host.configFile !== undefined) return true;
  const own = path.join(os.userInfo().homedir, '.ssh', 'config');
  if (!fs.existsSync(own)) return false;
  try {
    return yes(await readEffectiveConfig({ ...host, configFile: own }), 'gssapiauthentication');
  } catch {
    return false;
  }
}

/** `klist -s`: a valid Kerberos ticket in the credentials cache (false without klist). */
export function hasKerberosTicket(env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => execFile('klist', ['-s'], { timeout: 5000, env }, (err) => resolve(!err)));
}
