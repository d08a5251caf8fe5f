import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { SessionUi, SshPrompt, UnknownHostKey } from '../../../fleet/sessions/sessionFactory';
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
    async sshPrompt(p: SshPrompt, signal: AbortSignal): Promise<string | undefined> {
      // The login may end while the box is open (sshd's LoginGraceTime, a disposed connection): close it.
      const withdrawn = new vscode.CancellationTokenSource();
      const onAbort = () => withdrawn.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const value = await vscode.window.showInputBox(
          {
            title: l10n.t('Kimi Service: {0} asks', p.host),
            prompt: p.text.trim(),
            password: p.secret,
            ignoreFocusOut: true,
          },
          withdrawn.token,
        );
        if (value === undefined || withdrawn.token.isCancellationRequested) {
          log.info(`The question of ${p.host} (${p.kind}) was cancelled.`);
          return undefined;
        }
        return value;
      } finally {
        signal.removeEventListener('abort', onAbort);
        withdrawn.dispose();
      }
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
