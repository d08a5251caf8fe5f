/**
 * "Kimi Service: Copy sudoers rule": the sudoers lines that let the SSH user run exactly the extension's
 * privileged commands for the active server's target (its `privileges`), on the clipboard, with
 * where to install them.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../../config/config';
import { loadSshTarget } from '../../../transport/ssh/sshConfig';
import { targetFor } from '../../../target/target';
import { errorText } from '../../../util/errors';

/** Who runs the commands: this process's user for `host: "local"`, else the SSH user (setting, ~/.ssh/config User, local user). */
async function loginUser(server: ServerProfile): Promise<string> {
  if (server.host === undefined) return os.userInfo().username;
  const target = await loadSshTarget({
    host: server.host,
    port: server.port,
    username: server.username,
    identityFile: server.identityFile,
  });
  return target.username;
}

export async function copySudoersRuleCommand(
  server: ServerProfile | undefined,
  log: vscode.LogOutputChannel,
): Promise<void> {
  if (!server) return;
  const privileges = targetFor(server).privileges;
  if (privileges.kind === 'none') {
    void vscode.window.showInformationMessage(l10n.t('Kimi on {0}: {1}', server.name, privileges.why));
    return;
  }
  let user: string;
  let rules: string;
  try {
    user = await loginUser(server);
    rules = privileges.rules(user);
  } catch (error) {
    void vscode.window.showErrorMessage(
      l10n.t('Kimi on {0}: cannot write the sudoers rules: {1}', server.name, errorText(error)),
    );
    return;
  }
  await vscode.env.clipboard.writeText(rules);
  const where = server.host ?? l10n.t('this machine');
  const install = privileges.installCommand;
  log.info(
    `[${server.name}] sudoers rules for ${user} on ${where} (on the clipboard; install with ${install}):\n${rules}`,
  );
  const notes = [
    user === 'root' ? l10n.t('{0} needs no sudo: these rules are for a login that is not root.', user) : '',
    server.sudo ? '' : l10n.t('Then set "sudo": true for this server in kimiService.servers.'),
  ].filter(Boolean);
  const showRules = l10n.t('Show rules');
  const choice = await vscode.window.showInformationMessage(
    l10n
      .t(
        'Kimi: the sudoers rules for {0} on {1} ({2}) are on the clipboard. On {1}, run {3}, paste them and save (visudo checks them first). {4}',
        user,
        where,
        server.unit,
        install,
        notes.join(' '),
      )
      .trim(),
    showRules,
  );
  if (choice === showRules) {
    const doc = await vscode.workspace.openTextDocument({ content: rules, language: 'plaintext' });
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}
