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

/** One forwarded connection's failure, in the log (English: `message` is fleet/forward's own). */
export function forwardedConnectionFailed(server: string, message: string): string {
  return `[${server}] A forwarded connection ${message}`;
}

/** The error a local client of a port forward receives when its connection cannot be carried. */
export function gatewayError(message: string): string {
  return l10n.t('kimi-service port forward: {0}', message);
}

/** A multi-node server's watch ended because every node's watch did. */
export function nodesWatchesEnded(): string {
  return l10n.t("the nodes' watches ended");
}
