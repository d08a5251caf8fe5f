/**
 * Which SSH client connects to a host: ssh2 (in-process) unless the host's effective
 * configuration or identity asks for what ssh2 cannot do, then the system OpenSSH client. Pure.
 */

import type { SshClientSetting } from '../../config/config';

export type SshClient = 'ssh2' | 'openssh';

/** What was found about one host (clientFacts.ts gathers it). */
export interface ClientFacts {
  /** CertificateFile entries of `ssh -G` that exist. */
  readonly certificateFiles: readonly string[];
  /** `<identity>-cert.pub` files beside the host's identity files. */
  readonly certificatesBesideIdentities: readonly string[];
  /** Certificates the agent holds (`ssh-add -L`), counted. */
  readonly agentCertificates: number;
  /** known_hosts lines that match the host with a marker: "FILE line N (@cert-authority)". */
  readonly markerLines: readonly string[];
  /** GSSAPIAuthentication yes, with a Kerberos ticket (klist -s) or set by the user's own config. */
  readonly gssapiAuthentication: boolean;
  readonly pkcs11Provider?: string;
  readonly knownHostsCommand?: string;
  /** The config uses `Match exec` (which only OpenSSH evaluates). */
  readonly matchExec: boolean;
  /** ssh2's own reading of ~/.ssh/config failed with this. */
  readonly ssh2ConfigError?: string;
}

export interface ClientChoice {
  readonly client: SshClient;
  /** Why, for the log: "kimiService.ssh.client is ssh2", "CertificateFile /x-cert.pub (ssh2 has no certificates)". */
  readonly reason: string;
}

/** The reasons ssh2 cannot serve the host, in the user's words; empty when it can. */
export function ssh2Gaps(f: ClientFacts): string[] {
  const gaps: string[] = [];
  for (const c of f.certificateFiles) gaps.push(`CertificateFile ${c} (ssh2 cannot log in with certificates)`);
  for (const c of f.certificatesBesideIdentities)
    if (!f.certificateFiles.includes(c)) gaps.push(`certificate ${c} beside the identity (ssh2 cannot use it)`);
  if (f.agentCertificates > 0)
    gaps.push(
      `${f.agentCertificates} certificate${f.agentCertificates === 1 ? '' : 's'} in ssh-agent (ssh2 cannot use them)`,
    );
  for (const l of f.markerLines) gaps.push(`${l} in known_hosts (ssh2 cannot check host certificates or revocations)`);
  if (f.gssapiAuthentication) gaps.push('GSSAPIAuthentication yes (ssh2 has no Kerberos)');
  if (f.pkcs11Provider !== undefined) gaps.push(`PKCS11Provider ${f.pkcs11Provider} (ssh2 has no PKCS#11)`);
  if (f.knownHostsCommand !== undefined) gaps.push(`KnownHostsCommand (ssh2 does not run it)`);
  if (f.matchExec) gaps.push('Match exec in the SSH config (only OpenSSH evaluates it)');
  if (f.ssh2ConfigError !== undefined) gaps.push(`ssh2 cannot read the SSH config: ${f.ssh2ConfigError}`);
  return gaps;
}

export function chooseClient(
  setting: SshClientSetting,
  facts: ClientFacts | undefined,
  platform: NodeJS.Platform = process.platform,
): ClientChoice {
  if (setting !== 'auto') return { client: setting, reason: `kimiService.ssh.client is "${setting}"` };
  if (platform === 'win32')
    return {
      client: 'ssh2',
      reason: "auto: ssh2, since Windows' OpenSSH has no ControlMaster (docs/ssh.md)" + gapsNote(facts),
    };
  if (facts === undefined)
    return { client: 'ssh2', reason: 'auto: the OpenSSH client was not found, so ssh2 (in-process)' };
  const gaps = ssh2Gaps(facts);
  if (gaps.length === 0) return { client: 'ssh2', reason: "auto: nothing in the host's config needs OpenSSH" };
  return { client: 'openssh', reason: `auto: ${gaps.join('; ')}` };
}

function gapsNote(facts: ClientFacts | undefined): string {
  const gaps = facts ? ssh2Gaps(facts) : [];
  return gaps.length > 0 ? `; ssh2 may fail here: ${gaps.join('; ')}` : '';
}
