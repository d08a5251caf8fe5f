/** The broker (one window watches, the others ask it) in words: why it is not used, and what it refused. */
import * as l10n from '@vscode/l10n';

export const PIPE_UNCHECKABLE = "on Windows the named pipe cannot be checked to be this user's (docs/broker.md)";
export const NO_UID = 'no uid to check the broker folder against';

/** The broker's folder cannot be trusted: `why` says how ("is not owned by this user", ...). */
export function unsafeBrokerDir(dir: string, why: string): string {
  return `the broker folder ${dir} ${why}: not used`;
}

export function neitherReachNorClaim(socketPath: string): string {
  return `could neither reach nor claim ${socketPath}`;
}

export function tunnelRefused(host: string, port: number, refusal: string): string {
  return `the window that watches could not open ${host}:${port}: ${refusal || 'closed'}`;
}

export function otherProtocol(theirs: number | string, ours: number | string): string {
  return `broker protocol ${theirs}, not ${ours}`;
}

export function noSuchServerThere(server: string): string {
  return `no server "${server}" in the settings of the window that watches`;
}

export function notTheServersUrl(host: string, port: number, server: string): string {
  return `${host}:${port} is not the url of ${server}`;
}

export const PEER_LEFT = 'the peer left';

export function refusedThere(why: string): string {
  return `refused by the window that watches: ${why}`;
}

export function answerTooLarge(verb: string): string {
  return `the answer to ${verb} is over the size a message may carry`;
}

/** The owner's confirmation of a restart was answered no in a window. */
export function restartCancelled(server: string): string {
  return `the restart of ${server} was cancelled`;
}

// The broker's lines in the output channel.

export function notSharedLine(why: string): string {
  return l10n.t('Broker: not shared ({0}); watching on its own.', why);
}

export function ownerLine(socketPath: string): string {
  return l10n.t('Broker: this process watches for every window of this user ({0}).', socketPath);
}

export function socketTakenLine(): string {
  return l10n.t('Broker: another process owns the socket now; this one goes on watching on its own.');
}

export function peerLine(): string {
  return l10n.t('Broker: this window shows the watches of the window that owns them (one connection per host).');
}

/** The owning window left; `why` may be empty. */
export function ownerLeftLine(why: string): string {
  return why
    ? l10n.t('Broker: the window that watched left ({0}); taking over or following the next.', why)
    : l10n.t('Broker: the window that watched left; taking over or following the next.');
}

export function peerDisconnectedLine(why: string): string {
  return l10n.t('Broker: a peer was disconnected ({0}).', why);
}

export function peerInvalidLine(why: string): string {
  return l10n.t('Broker: a peer sent an invalid message ({0}): disconnected.', why);
}

export function peerJoinedLine(pid: number | string, peers: number): string {
  return l10n.t("Broker: process {0} shares this window's watches ({1} now).", pid, peers);
}

export function callRefusedLine(peer: number | string, why: string): string {
  return l10n.t('Broker: refused a call of peer {0}: {1}.', peer, why);
}

/** Taking over a watch of the window that left failed. */
export function cannotWatchLine(server: string, why: string): string {
  return l10n.t('[{0}] Cannot watch: {1}', server, why);
}
