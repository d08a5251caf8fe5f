import type * as vscode from 'vscode';

/** The hosts whose SSH password is kept (the names only: SecretStorage cannot list its keys). */
const INDEX_KEY = 'kimiService.keptPasswordHosts';

/**
 * SSH passwords the user chose to keep, in VS Code's SecretStorage (the system keychain), and
 * the list of their hosts in global state, so that "Forget kept SSH passwords" can name them.
 */
export class KeptPasswords {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly index: vscode.Memento,
  ) {}

  get(host: string): Thenable<string | undefined> {
    return this.secrets.get(passwordKey(host));
  }

  async keep(host: string, password: string): Promise<void> {
    await this.secrets.store(passwordKey(host), password);
    await this.index.update(INDEX_KEY, [...new Set([...this.hosts(), host])].sort());
  }

  async forget(host: string): Promise<void> {
    await this.secrets.delete(passwordKey(host));
    await this.index.update(
      INDEX_KEY,
      this.hosts().filter((h) => h !== host),
    );
  }

  hosts(): string[] {
    const hosts = this.index.get<unknown>(INDEX_KEY);
    return Array.isArray(hosts) ? hosts.filter((h): h is string => typeof h === 'string') : [];
  }
}

function passwordKey(host: string): string {
  return `kimiService.sshPassword.${host}`;
}
