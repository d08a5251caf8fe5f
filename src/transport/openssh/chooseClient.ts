/**
 * Which SSH client connects to a host: ssh2 (in-process) unless the host's effective
 * configuration or identity asks for what ssh2 cannot do, then the system OpenSSH client. Pure.
 */

import type { ServerProfile, SshClientSetting } from '../../config/config';
import {
  agentCertificatesGap,
  autoNeedsOpenssh,
  autoNoOpenssh,
  autoSsh2Suffices,
  autoWindows,
  certificateBesideGap,
  certificateFileGap,
  clientSetBy,
  configUnreadableGap,
  kerberosGap,
  knownHostsCommandGap,
  knownHostsMarkerGap,
  matchExecGap,
  pkcs11Gap,
} from '../../present/words/clientChoiceWords';

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

/** One thing a host needs that ssh2 cannot do (present/sshClientWords.ts words it for the tooltip). */
export type Ssh2Gap =
  | 'certificate'
  | 'agent-certificate'
  | 'host-ca'
  | 'revoked-keys'
  | 'kerberos'
  | 'pkcs11'
  | 'known-hosts-command'
  | 'match-exec'
  | 'config-unreadable';

/** Why the client was chosen, as facts. */
export type ClientBecause =
  /** kimiService.ssh.client (`global`) or the server entry's `ssh.client` (`server`). */
  | { readonly kind: 'setting'; readonly where: 'global' | 'server' }
  | { readonly kind: 'windows' }
  | { readonly kind: 'no-openssh' }
  | { readonly kind: 'ssh2-suffices' }
  | { readonly kind: 'needs-openssh'; readonly gaps: readonly Ssh2Gap[] };

export interface ClientChoice {
  readonly client: SshClient;
  /** Why, for the log: "kimiService.ssh.client is ssh2", "CertificateFile /x-cert.pub (ssh2 has no certificates)". */
  readonly reason: string;
  readonly because: ClientBecause;
  /** ssh2 set by hand for a host whose configuration asks for what it cannot do: those things, for a refused login's words. */
  readonly ssh2Gaps?: readonly string[];
}

/** The reasons ssh2 cannot serve the host, each as a fact and in the log's words; empty when it can. */
export function ssh2GapList(f: ClientFacts): { readonly gap: Ssh2Gap; readonly text: string }[] {
  const gaps: { gap: Ssh2Gap; text: string }[] = [];
  const add = (gap: Ssh2Gap, text: string) => gaps.push({ gap, text });
  for (const c of f.certificateFiles) add('certificate', certificateFileGap(c));
  for (const c of f.certificatesBesideIdentities)
    if (!f.certificateFiles.includes(c)) add('certificate', certificateBesideGap(c));
  if (f.agentCertificates > 0) add('agent-certificate', agentCertificatesGap(f.agentCertificates));
  for (const l of f.markerLines) add(l.endsWith('(@revoked)') ? 'revoked-keys' : 'host-ca', knownHostsMarkerGap(l));
  if (f.gssapiAuthentication) add('kerberos', kerberosGap());
  if (f.pkcs11Provider !== undefined) add('pkcs11', pkcs11Gap(f.pkcs11Provider));
  if (f.knownHostsCommand !== undefined) add('known-hosts-command', knownHostsCommandGap());
  if (f.matchExec) add('match-exec', matchExecGap());
  if (f.ssh2ConfigError !== undefined) add('config-unreadable', configUnreadableGap(f.ssh2ConfigError));
  return gaps;
}

/** The reasons ssh2 cannot serve the host, in the user's words; empty when it can. */
export function ssh2Gaps(f: ClientFacts): string[] {
  return ssh2GapList(f).map((g) => g.text);
}

/** The server entry's `ssh.client` wins over kimiService.ssh.client (both are user values only). */
export function clientSettingFor(
  server: Pick<ServerProfile, 'sshClient'>,
  global: SshClientSetting,
): { readonly setting: SshClientSetting; readonly where: 'global' | 'server' } {
  return server.sshClient !== undefined
    ? { setting: server.sshClient, where: 'server' }
    : { setting: global, where: 'global' };
}

export function chooseClient(
  setting: SshClientSetting,
  facts: ClientFacts | undefined,
  platform: NodeJS.Platform = process.platform,
  /** Where `setting` came from: the server's entry (`ssh.client`) or kimiService.ssh.client. */
  where: 'global' | 'server' = 'global',
): ClientChoice {
  if (setting !== 'auto') {
    const gaps = setting === 'ssh2' && facts ? ssh2Gaps(facts) : [];
    return {
      client: setting,
      reason: clientSetBy(where, setting),
      because: { kind: 'setting', where },
      ...(gaps.length > 0 ? { ssh2Gaps: gaps } : {}),
    };
  }
  if (platform === 'win32')
    return {
      client: 'ssh2',
      reason: autoWindows(facts ? ssh2Gaps(facts) : []),
      because: { kind: 'windows' },
    };
  if (facts === undefined)
    return {
      client: 'ssh2',
      reason: autoNoOpenssh(),
      because: { kind: 'no-openssh' },
    };
  const gaps = ssh2GapList(facts);
  if (gaps.length === 0)
    return {
      client: 'ssh2',
      reason: autoSsh2Suffices(),
      because: { kind: 'ssh2-suffices' },
    };
  return {
    client: 'openssh',
    reason: autoNeedsOpenssh(gaps.map((g) => g.text)),
    because: { kind: 'needs-openssh', gaps: [...new Set(gaps.map((g) => g.gap))] },
  };
}
