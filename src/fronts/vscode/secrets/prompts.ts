import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { SessionUi, UnknownHostKey } from '../../../fleet/sessions/sessionFactory';
import { vscodeLogin } from './loginPrompts';
import type { KeptPasswords } from './keptPasswords';

/** The questions a connection may need to ask the user, asked with VS Code's own dialogs. */
export function vscodeSessionUi(log: vscode.LogOutputChannel, keptPasswords: KeptPasswords): SessionUi {
  return {
    login: vscodeLogin(log, keptPasswords),
    async trustUnknownHostKey(key: UnknownHostKey): Promise<boolean> {
      const where = key.port === 22 ? key.host : `[${key.host}]:${key.port}`;
      log.warn(`Unknown host key for ${where}: ${key.keyType} ${key.fingerprint}`);
      const trust = l10n.t('Trust');
      const choice = await vscode.window.showWarningMessage(
        l10n.t("The authenticity of host {0} can't be established.", where),
        {
          modal: true,
          detail: l10n.t(
            '{0} key fingerprint is {1}.\n\nCompare it with the fingerprint on the host (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub). Trust adds the key to {2}.',
            key.keyType,
            key.fingerprint,
            key.knownHostsFile,
          ),
        },
        trust,
      );
      const trusted = choice === trust;
      log.info(`Host key ${key.fingerprint} for ${where} ${trusted ? 'trusted by the user' : 'not trusted'}.`);
      return trusted;
    },
    async requestPassphrase(keyPath: string, retry: boolean): Promise<string | undefined> {
      return vscode.window.showInputBox({
        title: l10n.t('Kimi Service: SSH key passphrase'),
        prompt: retry
          ? l10n.t('Wrong passphrase. Passphrase for {0} (kept in memory only while VS Code runs)', keyPath)
          : l10n.t('Passphrase for {0} (kept in memory only while VS Code runs)', keyPath),
        password: true,
        ignoreFocusOut: true,
      });
    },
  };
}
