/** The fleet's refusals in words: a load advice that cannot be applied, a server that cannot be discovered. */
import * as l10n from '@vscode/l10n';

/** The unit's command line holds no command of the engines named (`engines`: "SGLang or vLLM"). */
export function noServerCommandLine(unit: string, engines: string, argv: string): string {
  return `${unit}: no ${engines} server command in its command line (${argv})`;
}

export function notACommandLineChange(title: string, action: string): string {
  return `"${title}" is not a command-line change: ${action}`;
}

export function cannotApply(title: string, why: string): string {
  return `"${title}" cannot be applied: ${why}`;
}

export function cannotReachHost(host: string, why: string | undefined): string {
  return `cannot reach ${host}: ${why}`;
}

export function cannotListUnits(host: string, why: string): string {
  return `cannot list the units of ${host}: ${why}`;
}

export function entryInvalid(name: string, why: string | undefined): string {
  return `the entry for ${name} would not be valid: ${why}`;
}

/** The log's line when a host's unit listing failed (its whole stderr). */
export function listingFailedLine(host: string, code: number | null, stderr: string): string {
  return `${host}: listing the units failed (${code}): ${stderr}`;
}

/** Which SSH client a server's connection uses, and why. */
export function sshClientLine(server: string, client: string, reason: string): string {
  return `[${server}] SSH client: ${client} (${reason})`;
}

export function hostKeyRefusedStrict(fingerprint: string, host: string, port: number): string {
  return `Refused the unknown host key ${fingerprint} of ${host}:${port} (kimiService.hostKeyPolicy is "strict").`;
}

export function hostKeyAcceptedNew(fingerprint: string, host: string, port: number): string {
  return `Accepted the new host key ${fingerprint} of ${host}:${port} (kimiService.hostKeyPolicy is "accept-new").`;
}

/** A rolling restart found a load under way: it follows it. */
export function rollingFollowed(server: string): string {
  return `[${server}] A load was already under way: followed, not restarted again.`;
}

/** A port forward opened while nothing listens on the server's port yet. */
export function forwardOpensAnyway(server: string, host: string, port: number, why: string): string {
  return `[${server}] The server does not answer on ${host}:${port} yet (${why}); the forward opens anyway and reaches it once it listens.`;
}

export function forwardClosed(server: string, localPort: number, reason: string): string {
  return `[${server}] Closed the forward of 127.0.0.1:${localPort} (${reason}).`;
}

/** One forwarded connection's failure, in the log. */
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
