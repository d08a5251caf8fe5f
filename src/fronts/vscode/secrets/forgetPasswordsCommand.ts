import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { KeptPasswords } from './keptPasswords';

/** "Kimi Service: Forget kept SSH passwords": the hosts to forget, picked from those kept. */
export async function forgetPasswordsCommand(kept: KeptPasswords, log: vscode.LogOutputChannel): Promise<void> {
  const hosts = kept.hosts();
  if (hosts.length === 0) {
    void vscode.window.showInformationMessage(l10n.t('Kimi Service: no SSH password is kept.'));
    return;
  }
  const picked = await vscode.window.showQuickPick(
    hosts.map((host) => ({ label: host, picked: true })),
    { title: l10n.t('Kimi Service: forget the SSH passwords kept for'), canPickMany: true, ignoreFocusOut: true },
  );
  if (!picked || picked.length === 0) return;
  for (const { label } of picked) {
    await kept.forget(label);
    log.info(`The SSH password kept for ${label} is forgotten: it is asked for at the next connection.`);
  }
  void vscode.window.showInformationMessage(
    picked.length > 1
      ? l10n.t('Kimi Service: forgot the SSH passwords for {0}.', picked.map((p) => p.label).join(', '))
      : l10n.t('Kimi Service: forgot the SSH password for {0}.', picked[0]!.label),
  );
}
