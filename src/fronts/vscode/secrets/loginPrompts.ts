import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { LoginAnswer, LoginQuestion } from '../../../fleet/sessions/sessionFactory';
import { askerName } from '../../../transport/ssh/loginPolicy';
import type { KeptPasswords } from './keptPasswords';

/**
 * Keyboard-interactive and password questions in VS Code's own input box: the server's text
 * as it sent it, a password box for what it asks without echo. A password (never a one-time
 * code) is kept in SecretStorage only when the user says so, asked once the server took it;
 * a kept password the server refuses is forgotten. Nothing here is logged but who asked.
 */
export function vscodeLogin(
  log: vscode.LogOutputChannel,
  kept: KeptPasswords,
): (question: LoginQuestion, signal: AbortSignal) => Promise<LoginAnswer | undefined> {
  return async (q, signal) => {
    const who = askerName(q);
    log.info(`${who} asks for a login (${q.method}): ${q.prompts.map((p) => JSON.stringify(p.text)).join(', ')}`);
    // The attempt may end while a box is open (sshd's LoginGraceTime, a disposed connection): close it.
    const withdrawn = new vscode.CancellationTokenSource();
    const onAbort = () => withdrawn.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await ask(q, who, withdrawn.token);
    } finally {
      signal.removeEventListener('abort', onAbort);
      withdrawn.dispose();
    }
  };

  async function ask(q: LoginQuestion, who: string, token: vscode.CancellationToken): Promise<LoginAnswer | undefined> {
    const answers: string[] = [];
    let typedPassword = false;
    let usedSaved = false;
    for (const [i, p] of q.prompts.entries()) {
      if (p.kind === 'password' && !usedSaved) {
        const saved = await kept.get(q.host);
        if (saved) {
          usedSaved = true;
          answers.push(saved);
          log.info(`Using the password kept for ${q.host}.`);
          continue;
        }
      }
      const value = await vscode.window.showInputBox(
        {
          title:
            q.prompts.length > 1
              ? l10n.t('Kimi Service: {0} asks ({1} of {2})', who, i + 1, q.prompts.length)
              : l10n.t('Kimi Service: {0} asks', who),
          prompt: [q.name, q.instructions, p.text].filter((s) => s.trim()).join('\n'),
          password: !p.echo,
          ignoreFocusOut: true,
          ...(p.kind === 'code' ? { placeHolder: l10n.t('the one-time code') } : {}),
        },
        token,
      );
      if (value === undefined || token.isCancellationRequested) {
        log.info(`The login question of ${who} was cancelled.`);
        return undefined;
      }
      answers.push(value);
      if (p.kind === 'password') typedPassword = true;
    }
    const password = typedPassword ? answers[q.prompts.findIndex((p) => p.kind === 'password')] : undefined;
    return {
      answers,
      settled: (accepted) => {
        // Asked only once the server took it, so a mistyped password is never offered for keeping.
        if (accepted && password !== undefined) void offerToKeep(q.host, password);
        if (!accepted && usedSaved) {
          void kept.forget(q.host);
          log.warn(`${q.host} refused the kept password: it is forgotten, and asked for at the next connection.`);
        }
      },
    };
  }

  async function offerToKeep(host: string, password: string): Promise<void> {
    const remember = l10n.t('Remember');
    const choice = await vscode.window.showInformationMessage(
      l10n.t(
        "Kimi Service: remember the password for {0}? It would be kept in VS Code's secret storage (the system keychain), never in settings or logs.",
        host,
      ),
      remember,
      l10n.t('Not now'),
    );
    if (choice !== remember) return;
    try {
      await kept.keep(host, password);
      log.info(
        `The password for ${host} is kept in VS Code's secret storage (Kimi Service: Forget kept SSH passwords removes it).`,
      );
    } catch (err) {
      log.warn(`Could not keep the password for ${host}: ${String(err)}`);
    }
  }
}
