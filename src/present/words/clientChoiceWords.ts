/**
 * Which SSH client connects to a host and why, in the log's words: the setting that chose it, or
 * what the host needs that ssh2 cannot do (transport/openssh/chooseClient.ts finds the facts).
 */
import * as l10n from '@vscode/l10n';

/** The setting chose: the server entry's `ssh.client` or kimiService.ssh.client. */
export function clientSetBy(where: 'global' | 'server', setting: string): string {
  return where === 'server'
    ? l10n.t('the server\'s ssh.client is "{0}"', setting)
    : l10n.t('{0} is "{1}"', 'kimiService.ssh.client', setting);
}

/** On Windows; `gaps`: what the host needs that ssh2 cannot do (it may fail there). */
export function autoWindows(gaps: readonly string[]): string {
  return gaps.length > 0
    ? l10n.t(
        "auto: ssh2, since Windows' OpenSSH has no ControlMaster (docs/ssh.md); ssh2 may fail here: {0}",
        gaps.join('; '),
      )
    : l10n.t("auto: ssh2, since Windows' OpenSSH has no ControlMaster (docs/ssh.md)");
}

export function autoNoOpenssh(): string {
  return l10n.t('auto: the OpenSSH client was not found, so ssh2 (in-process)');
}

export function autoSsh2Suffices(): string {
  return l10n.t("auto: nothing in the host's config needs OpenSSH");
}

export function autoNeedsOpenssh(gaps: readonly string[]): string {
  return l10n.t('auto: {0}', gaps.join('; '));
}

// What a host needs that ssh2 cannot do, one line each.

export function certificateFileGap(file: string): string {
  return l10n.t('CertificateFile {0} (ssh2 cannot log in with certificates)', file);
}

export function certificateBesideGap(file: string): string {
  return l10n.t('certificate {0} beside the identity (ssh2 cannot use it)', file);
}

export function agentCertificatesGap(count: number): string {
  return count === 1
    ? l10n.t('{0} certificate in ssh-agent (ssh2 cannot use them)', count)
    : l10n.t('{0} certificates in ssh-agent (ssh2 cannot use them)', count);
}

/** `line`: where known_hosts marks the host ("FILE line N (@cert-authority)"). */
export function knownHostsMarkerGap(line: string): string {
  return l10n.t('{0} in known_hosts (ssh2 cannot check host certificates or revocations)', line);
}

export function kerberosGap(): string {
  return l10n.t('GSSAPIAuthentication yes (ssh2 has no Kerberos)');
}

export function pkcs11Gap(provider: string): string {
  return l10n.t('PKCS11Provider {0} (ssh2 has no PKCS#11)', provider);
}

export function knownHostsCommandGap(): string {
  return l10n.t('KnownHostsCommand (ssh2 does not run it)');
}

export function matchExecGap(): string {
  return l10n.t('Match exec in the SSH config (only OpenSSH evaluates it)');
}

export function configUnreadableGap(error: string): string {
  return l10n.t('ssh2 cannot read the SSH config: {0}', error);
}
