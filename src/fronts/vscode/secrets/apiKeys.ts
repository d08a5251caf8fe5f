import * as vscode from 'vscode';
import * as l10n from '@vscode/l10n';
import type { ServerProfile } from '../../../config/config';
import type { FleetSession } from '../../../fleet/fleetTypes';

/**
 * API keys of servers started with --api-key, kept in VS Code's SecretStorage (never in
 * settings or logs). `known` holds the keys seen in this window, for masking.
 */
export class ApiKeys {
  readonly known = new Set<string>();

  constructor(private readonly secrets: vscode.SecretStorage) {}

  async get(serverName: string): Promise<string | undefined> {
    const key = await this.secrets.get(storageKey(serverName));
    if (key) this.known.add(key);
    return key || undefined;
  }

  /** Asks for the key (a password box); undefined when cancelled. An empty answer deletes it. */
  async ask(serverName: string): Promise<{ key: string | undefined } | undefined> {
    const key = await vscode.window.showInputBox({
      title: l10n.t('Kimi: API key of {0}', serverName),
      prompt: l10n.t(
        'The --api-key the server was started with (sent as "Authorization: Bearer …"; kept in VS Code\'s secret storage). Leave empty to remove it.',
      ),
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return undefined;
    const trimmed = key.trim();
    if (trimmed) {
      this.known.add(trimmed);
      await this.secrets.store(storageKey(serverName), trimmed);
      return { key: trimmed };
    }
    await this.secrets.delete(storageKey(serverName));
    return { key: undefined };
  }
}

function storageKey(serverName: string): string {
  return `kimi.apiKey.${serverName}`;
}

/** "Kimi Service: Set server API key": stored in SecretStorage, used at once by the live session. */
export async function setApiKeyCommand(
  apiKeys: ApiKeys | undefined,
  server: ServerProfile | undefined,
  openSession: (server: ServerProfile) => Promise<FleetSession | undefined>,
  log: vscode.LogOutputChannel,
): Promise<void> {
  if (!server || !apiKeys) return;
  const answer = await apiKeys.ask(server.name);
  if (!answer) return;
  const session = await openSession(server);
  session?.client.setApiKey(answer.key);
  log.info(`[${server.name}] API key ${answer.key ? 'set' : 'removed'} (kept in VS Code's secret storage).`);
}
