/**
 * Which SSH client connects to a server and why, in one line for the status bar's tooltip:
 * "SSH: OpenSSH client (certificate in the agent)", "SSH: built-in client". Pure.
 */
import type { ClientChoice, Ssh2Gap } from '../transport/openssh/chooseClient';

const GAP_WORDS: Record<Ssh2Gap, string> = {
  certificate: 'certificate file',
  'agent-certificate': 'certificate in the agent',
  'host-ca': 'host certificate authority in known_hosts',
  'revoked-keys': 'revoked keys in known_hosts',
  kerberos: 'Kerberos ticket',
  pkcs11: 'PKCS#11 token',
  'known-hosts-command': 'KnownHostsCommand',
  'match-exec': 'Match exec in the SSH config',
  'config-unreadable': 'an SSH config the built-in client cannot read',
};

export function sshClientLine(choice: Pick<ClientChoice, 'client' | 'because'>): string {
  const name = choice.client === 'openssh' ? 'OpenSSH client' : 'built-in client';
  const why = becauseWords(choice.because);
  return `SSH: ${name}${why ? ` (${why})` : ''}`;
}

function becauseWords(because: ClientChoice['because']): string | undefined {
  switch (because.kind) {
    case 'setting':
      return because.where === 'server' ? 'set for this server' : 'set by kimiService.ssh.client';
    case 'windows':
      return "Windows' OpenSSH cannot share one login";
    case 'no-openssh':
      return 'no OpenSSH client found';
    case 'ssh2-suffices':
      return undefined;
    case 'needs-openssh':
      return because.gaps.map((g) => GAP_WORDS[g]).join(', ');
  }
}
