import * as vscode from 'vscode';
import type { LoginAnswer, LoginQuestion } from '../../fleet/sessionFactory';
import { askerName } from '../../transport/ssh/loginPolicy';

/**
 * Keyboard-interactive and password questions in VS Code's own input box: the server's text
 * as it sent it, a password box for what it asks without echo. A password (never a one-time
 * code) is kept in SecretStorage only when the user says so, and only once the server took it;
 * a kept password the server refuses is forgotten. Nothing here is logged but who asked.
 */
export function vscodeLogin(
  log: vscode.LogOutputChannel,
  secrets: vscode.SecretStorage,
): (question: LoginQuestion) => Promise<LoginAnswer | undefined> {
  return async (q) => {
    const who = askerName(q);
    const key = passwordKey(q.host);
    log.info(`${who} asks for a login (${q.method}): ${q.prompts.map((p) => JSON.stringify(p.text)).join(', ')}`);
    const answers: string[] = [];
    let typedPassword = false;
    let usedSaved = false;
    for (const [i, p] of q.prompts.entries()) {
      if (p.kind === 'password' && !usedSaved) {
        const saved = await secrets.get(key);
        if (saved) {
          usedSaved = true;
          answers.push(saved);
          log.info(`Using the password kept for ${q.host}.`);
          continue;
        }
      }
      const value = await vscode.window.showInputBox({
        title: `Kimi Service: ${who} asks${q.prompts.length > 1 ? ` (${i + 1} of ${q.prompts.length})` : ''}`,
        prompt: [q.name, q.instructions, p.text].filter((s) => s.trim()).join('\n'),
        password: !p.echo,
        ignoreFocusOut: true,
        ...(p.kind === 'code' ? { placeHolder: 'the one-time code' } : {}),
      });
      if (value === undefined) {
        log.info(`The login question of ${who} was cancelled.`);
        return undefined;
      }
      answers.push(value);
      if (p.kind === 'password') typedPassword = true;
    }
    const remember =
      typedPassword &&
      (await vscode.window.showInformationMessage(
        `Remember the password for ${q.host}?`,
        {
          modal: true,
          detail:
            "Kept in VS Code's secret storage (the system keychain), never in settings or logs, and only once the server has accepted it. One-time codes are never kept.",
        },
        'Remember',
      )) === 'Remember';
    const password = answers[q.prompts.findIndex((p) => p.kind === 'password')];
    return {
      answers,
      settled: (accepted) => {
        if (accepted && remember && password !== undefined) {
          void secrets.store(key, password).then(
            () => log.info(`The password for ${q.host} is kept in VS Code's secret storage.`),
            (err: unknown) => log.warn(`Could not keep the password for ${q.host}: ${String(err)}`),
          );
        }
        if (!accepted && usedSaved) {
          void secrets.delete(key);
          log.warn(`${q.host} refused the kept password: it is forgotten, and asked for at the next connection.`);
        }
      },
    };
  };
}

function passwordKey(host: string): string {
  return `kimiService.sshPassword.${host}`;
}
