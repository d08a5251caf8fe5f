/**
 * The fleet's refusals and log lines in words, in the display language: a load advice that cannot be
 * applied, a server that cannot be discovered, the SSH client and host-key policy, the port forward.
 */
import * as l10n from '@vscode/l10n';

/** The unit's command line holds no command of the engines named (`engines`: "SGLang or vLLM"). */
export function noServerCommandLine(unit: string, engines: string, argv: string): string {
  return l10n.t('{0}: no {1} server command in its command line ({2})', unit, engines, argv);
}

export function notACommandLineChange(title: string, action: string): string {
  return l10n.t('"{0}" is not a command-line change: {1}', title, action);
}

export function cannotApply(title: string, why: string): string {
  return l10n.t('"{0}" cannot be applied: {1}', title, why);
}

export function cannotReachHost(host: string, why: string | undefined): string {
  return l10n.t('cannot reach {0}: {1}', host, String(why));
}

export function cannotListUnits(host: string, why: string): string {
  return l10n.t('cannot list the units of {0}: {1}', host, why);
}

export function entryInvalid(name: string, why: string | undefined): string {
  return l10n.t('the entry for {0} would not be valid: {1}', name, String(why));
}

/** The log's line when a host's unit listing failed (its whole stderr). */
export function listingFailedLine(host: string, code: number | null, stderr: string): string {
  return l10n.t('{0}: listing the units failed ({1}): {2}', host, String(code), stderr);
}

/** Which SSH client a server's connection uses, and why. */
export function sshClientLine(server: string, client: string, reason: string): string {
  return l10n.t('[{0}] SSH client: {1} ({2})', server, client, reason);
}

export function hostKeyRefusedStrict(fingerprint: string, host: string, port: number): string {
  return l10n.t(
    'Refused the unknown host key {0} of {1} (kimiService.hostKeyPolicy is "strict").',
    fingerprint,
    `${host}:${port}`,
  );
}

export function hostKeyAcceptedNew(fingerprint: string, host: string, port: number): string {
  return l10n.t(
    'Accepted the new host key {0} of {1} (kimiService.hostKeyPolicy is "accept-new").',
    fingerprint,
    `${host}:${port}`,
  );
}

/** A rolling restart found a load under way: it follows it. */
export function rollingFollowed(server: string): string {
  return l10n.t('[{0}] A load was already under way: followed, not restarted again.', server);
}

/** A port forward opened while nothing listens on the server's port yet. */
export function forwardOpensAnyway(server: string, host: string, port: number, why: string): string {
  return l10n.t(
    '[{0}] The server does not answer on {1} yet ({2}); the forward opens anyway and reaches it once it listens.',
    server,
    `${host}:${port}`,
    why,
  );
}

export function forwardClosed(server: string, localPort: number, reason: string): string {
  return l10n.t('[{0}] Closed the forward of {1} ({2}).', server, `127.0.0.1:${localPort}`, reason);
}

/** One forwarded connection's failure, in the log (`message`: forwardWords.couldNotReach). */
export function forwardedConnectionFailed(server: string, message: string): string {
  return l10n.t('[{0}] A forwarded connection {1}', server, message);
}

/** The error a local client of a port forward receives when its connection cannot be carried. */
export function gatewayError(message: string): string {
  return l10n.t('kimi-service port forward: {0}', message);
}

/** A multi-node server's watch ended because every node's watch did. */
export function nodesWatchesEnded(): string {
  return l10n.t("the nodes' watches ended");
}

/** Why the fleet refuses a verb until the settings are fixed. */
export function settingsNotValid(): string {
  return l10n.t('the Kimi settings are not valid');
}

/** Why a multi-node server's node watches were stopped. */
export function watchedAnew(): string {
  return l10n.t('the server is watched anew');
}

export function serverLoadEnded(): string {
  return l10n.t("the server's load ended");
}

export function otherNodeUnwatchable(): string {
  return l10n.t('another node could not be watched');
}

/**
 * A discovery that found nothing: `kinds` the units or jobs looked for ("systemd unit or Slurm
 * job"), `engines` the engines' names, `forms` their command forms, `where` where they were looked for.
 */
export function nothingFound(host: string, kinds: string, engines: string, forms: string, where: string): string {
  return l10n.t('no {0} on {1} launches {2} ({3} in {4})', kinds, host, engines, forms, where);
}

/** A host typed in the add-server dialog that is not `[user@]host[:port]`. */
export function typeAHost(): string {
  return l10n.t('Type a host as host, user@host or user@host:port.');
}

export function notAHostName(host: string): string {
  return l10n.t('"{0}" is not a host name, an address or a ~/.ssh/config alias.', host);
}

export function notAUserName(user: string): string {
  return l10n.t('"{0}" is not a valid user name.', user);
}

export function portOutOfRange(): string {
  return l10n.t('The port must be between 1 and 65535.');
}

/** A servers file the new entry cannot be added to. `code`: the JSON parser's error code. */
export function serversFileNotJson(code: string, offset: number): string {
  return l10n.t('not valid JSON ({0} at offset {1})', code, offset);
}

export function serversFileShapeless(): string {
  return l10n.t('neither an array of servers nor an object of settings');
}

export function serversNotAnArray(key: string): string {
  return l10n.t('"{0}" is not an array', key);
}

/** The CLI found no servers; `xdg`: its own config file's path. */
export function noServersConfigured(xdg: string): string {
  return l10n.t(
    'no servers configured: pass --config FILE, write {0}, pass --settings FILE (a VS Code settings.json with kimiService.servers), or --host and --unit',
    xdg,
  );
}

/** The parser checks refused: `why` is `loading` or `down`. */
export function notReadyForChecks(server: string, why: string): string {
  return l10n.t('{0} is not ready ({1}): its parsers can be checked only on a ready server.', server, why);
}

/** Why a watch under way was stopped: a forced restart replaced it. */
export function restartedAgain(): string {
  return l10n.t('restarted again (force)');
}

export function cannotWatch(why: string): string {
  return l10n.t('Cannot watch: {0}', why);
}

/** A watch's end in the server's log: `loading` when it followed a load; `end` its outcome's kind. */
export function watchEndLine(loading: boolean, end: string, message: string | undefined): string {
  const head = loading ? l10n.t('Load ended') : l10n.t('Watch ended');
  return message ? `${head}: ${end} (${message})` : `${head}: ${end}`;
}

/** Why a watch of a server whose settings changed was stopped. */
export function settingsChanged(): string {
  return l10n.t('settings changed');
}

/** A CLI config or settings file that cannot be read. */
export function noSuchFile(file: string): string {
  return l10n.t('{0}: no such file', file);
}

export function fileNotJson(file: string, code: string, offset: number): string {
  return l10n.t('{0}: not valid JSON ({1} at offset {2})', file, code, offset);
}
