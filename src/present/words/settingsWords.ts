/**
 * What the settings reader says: why a setting is read from the user's settings only, what was
 * ignored from a workspace, and why a configuration is refused.
 */
import * as l10n from '@vscode/l10n';

/** The keys (under `kimiService.`) read from the user's settings only. */
export type UserOnlySetting =
  | 'servers'
  | 'knownHostsFile'
  | 'hostKeyPolicy'
  | 'ssh.client'
  | 'confirmRestart'
  | 'verifyParsersWhenReady';

/** Why a key is read from the user's settings only (after "it"). */
export function userOnlyReason(key: UserOnlySetting): string {
  switch (key) {
    case 'servers':
      return l10n.t('chooses the hosts, the login, the identity file, sudo, the unit, the container and the URL');
    case 'knownHostsFile':
      return l10n.t('chooses which host keys are trusted');
    case 'hostKeyPolicy':
      return l10n.t('chooses whether an unknown host key is accepted');
    case 'ssh.client':
      return l10n.t('chooses the program that logs in to the hosts (and the configuration and keys it uses)');
    case 'confirmRestart':
      return l10n.t('chooses whether a restart (and the agent tool kimi_restart) asks first');
    case 'verifyParsersWhenReady':
      return l10n.t('sends requests, with the server API key, to the server without a command');
  }
}

export function workspaceSettingsPlace(): string {
  return l10n.t('workspace settings');
}

/** Where a value was found: a folder's settings, by its label when known. */
export function folderSettingsPlace(folder: string | undefined): string {
  return folder ? l10n.t('folder settings of {0}', folder) : l10n.t('folder settings');
}

/** The one warning for all the user-only settings a workspace set: `settings` and `places` joined. */
export function ignoredSettingsWarning(settings: string, places: string, several: boolean): string {
  return several
    ? l10n.t(
        'Kimi Service ignored {0} from {1}: these settings are read from your user (or remote) settings only, so a workspace cannot choose the hosts, the identity or the host-key policy the extension uses.',
        settings,
        places,
      )
    : l10n.t(
        'Kimi Service ignored {0} from {1}: this setting is read from your user (or remote) settings only, so a workspace cannot choose the hosts, the identity or the host-key policy the extension uses.',
        settings,
        places,
      );
}

/** The log line for one ignored setting and place; `reason` from userOnlyReason. */
export function ignoredSettingLine(setting: string, where: string, reason: string): string {
  return l10n.t(
    'Settings: ignored {0} from {1} (read from the user or remote settings only: it {2}).',
    setting,
    where,
    reason,
  );
}

/**
 * `host: "local"` on the UI side of a remote window: `remote` the remote's name, `setting` the
 * user setting that makes the editor run the extension there.
 */
export function localHostOnUiSide(server: string, remote: string, setting: string): string {
  return l10n.t(
    'kimiService.servers "{0}" has host "local", but this window is connected to {1} and the extension runs on your own machine (the UI side), where "local" is not the GPU host. Install Kimi Service in the remote ("Install in {1}" in the Extensions view) and have the editor run it there: add {2} to your user settings, then reload the window. Or give the GPU host\'s SSH name as "host".',
    server,
    remote,
    setting,
  );
}

export function serverNameTwice(name: string): string {
  return l10n.t('kimiService.servers: the name "{0}" is used twice.', name);
}

export function activeServerUnknown(name: string): string {
  return l10n.t('kimiService.activeServer "{0}" is not the name of any entry of kimiService.servers.', name);
}

export function knownHostsFileControl(): string {
  return l10n.t('kimiService.knownHostsFile must not contain control characters.');
}

/** A url with `{node}` while the job runs on no node. */
export function urlWaitsForNode(template: string): string {
  return l10n.t(
    "{0} names the job's node, and the job runs on no node now (it waits in the queue, or it has ended)",
    template,
  );
}

/** A node name the scheduler gave that is no host name (`node` already made printable). */
export function nodeNotHostName(node: string, template: string): string {
  return l10n.t(
    'the job\'s node "{0}" is not a host name (letters, digits, dots and dashes only): {1} is not used',
    node,
    template,
  );
}

export function userSettingsPlace(): string {
  return l10n.t('user settings');
}

export function remoteSettingsPlace(): string {
  return l10n.t('Remote settings');
}

/** Where a multi-node server runs: `hosts` its nodes' hosts, joined. */
export function everyNode(hosts: string): string {
  return l10n.t('every node ({0})', hosts);
}
