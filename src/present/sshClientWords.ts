/**
 * Which SSH client connects to a server and why, in one line for the status bar's tooltip:
 * "SSH: OpenSSH client (certificate in the agent)", "SSH: built-in client". Pure.
 */
import * as l10n from '@vscode/l10n';
import type { ClientChoice, Ssh2Gap } from '../transport/openssh/chooseClient';

function gapWord(gap: Ssh2Gap): string {
  switch (gap) {
    case 'certificate':
      return l10n.t('certificate file');
    case 'agent-certificate':
      return l10n.t('certificate in the agent');
    case 'host-ca':
      return l10n.t('host certificate authority in known_hosts');
    case 'revoked-keys':
      return l10n.t('revoked keys in known_hosts');
    case 'kerberos':
      return l10n.t('Kerberos ticket');
    case 'pkcs11':
      return l10n.t('PKCS#11 token');
    case 'known-hosts-command':
      return 'KnownHostsCommand';
    case 'match-exec':
      return l10n.t('Match exec in the SSH config');
    case 'config-unreadable':
      return l10n.t('an SSH config the built-in client cannot read');
  }
}

export function sshClientLine(choice: Pick<ClientChoice, 'client' | 'because'>): string {
  const name = choice.client === 'openssh' ? l10n.t('OpenSSH client') : l10n.t('built-in client');
  const why = becauseWords(choice.because);
  return why ? l10n.t('SSH: {0} ({1})', name, why) : l10n.t('SSH: {0}', name);
}

function becauseWords(because: ClientChoice['because']): string | undefined {
  switch (because.kind) {
    case 'setting':
      return because.where === 'server'
        ? l10n.t('set for this server')
        : l10n.t('set by {0}', 'kimiService.ssh.client');
    case 'windows':
      return l10n.t("Windows' OpenSSH cannot share one login");
    case 'no-openssh':
      return l10n.t('no OpenSSH client found');
    case 'ssh2-suffices':
      return undefined;
    case 'needs-openssh':
      return because.gaps.map(gapWord).join(', ');
  }
}
