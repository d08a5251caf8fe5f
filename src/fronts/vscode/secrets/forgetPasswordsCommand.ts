import * as vscode from 'vscode';
import type { KeptPasswords } from './keptPasswords';

/** "Kimi Service: Forget kept SSH passwords": the hosts to forget, picked from those kept. */
export async function forgetPasswordsCommand(kept: KeptPasswords, log: vscode.LogOutputChannel): Promise<void> {
  const hosts = kept.hosts();
  if (hosts.length === 0) {
    void vscode.window.showInformationMessage('Kimi Service: no SSH password is kept.');
    return;
  }
  const picked = await vscode.window.showQuickPick(
    hosts.map((host) => ({ label: host, picked: true })),
    { title: 'Kimi Service: forget the SSH passwords kept for', canPickMany: true, ignoreFocusOut: true },
  );
  if (!picked || picked.length === 0) return;
  for (const { label } of picked) {
    await kept.forget(label);
    log.info(`The SSH password kept for ${label} is forgotten: it is asked for at the next connection.`);
  }
  void vscode.window.showInformationMessage(
    `Kimi Service: forgot the SSH password${picked.length > 1 ? 's' : ''} for ${picked.map((p) => p.label).join(', ')}.`,
  );
}
