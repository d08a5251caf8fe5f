/** Gathers what chooseClient.ts decides on for one host: `ssh -G`, the files it names, the agent's certificates. */
import { execFile } from 'node:child_process';
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
    // Debian's and Ubuntu's /etc/ssh/ssh_config turn GSSAPI on for every host: it counts only with a ticket.
    gssapiAuthentication: yes(config, 'gssapiauthentication') && (await hasKerberosTicket(env)),
    ...(pkcs11 !== undefined && pkcs11 !== 'none' ? { pkcs11Provider: pkcs11 } : {}),
    ...(khCommand !== undefined && khCommand !== 'none' ? { knownHostsCommand: khCommand } : {}),
    matchExec,
    ...(ssh2ConfigError !== undefined ? { ssh2ConfigError } : {}),
  };
}

/** `klist -s`: a valid Kerberos ticket in the credentials cache (false without klist). */
export function hasKerberosTicket(env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => execFile('klist', ['-s'], { timeout: 5000, env }, (err) => resolve(!err)));
}
