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

/** Why a joining window's connection to the window that watches ended before or after its welcome. */
export function closedBeforeHello(): string {
  return l10n.t('the connection closed before the hello');
}

export function noWelcome(): string {
  return l10n.t('no welcome from the owner');
}

export function closedBeforeWelcome(): string {
  return l10n.t('the owner closed the connection before its welcome');
}

/** `verb`: the broker verb asked (restart, watch, ...); `why`: what was wrong with the answer. */
export function answeredSomethingElse(verb: string, why: string): string {
  return l10n.t('the window that watches answered {0} with something else ({1})', verb, why);
}

export function answerNotOne(verb: string): string {
  return l10n.t("the owner's answer to {0} is not one", verb);
}

export function brokerConnectionClosed(): string {
  return l10n.t('the broker connection is closed');
}

export function ownerSentInvalid(why: string): string {
  return l10n.t('the owner sent an invalid message ({0})', why);
}

export function ownerSpeaksProtocol(version: number | string): string {
  return l10n.t('the owner speaks protocol {0}', version);
}

export function watcherClosed(): string {
  return l10n.t('the window that watched closed (another takes over)');
}

/** The refusal a window of another version of the extension receives. */
export function otherExtensionVersion(ours: number | string, theirs: number | string): string {
  return l10n.t(
    'the window that shares the watches speaks broker protocol {0}, this one {1} (another version of the extension)',
    ours,
    theirs,
  );
}

/** Why a peer was dropped: it sent too much in one line, or reads nothing of what it is sent. */
export function lineOverLimit(): string {
  return l10n.t('a line over the size limit');
}

export function peerReadsNothing(): string {
  return l10n.t('the peer reads nothing of what is sent to it');
}

/** Why a folder is unfit for the broker's socket (the end of unsafeBrokerDir's sentence). */
export function isSymbolicLink(): string {
  return l10n.t('is a symbolic link');
}

export function isNotAFolder(): string {
  return l10n.t('is not a folder');
}

export function belongsToUid(owner: number, uid: number): string {
  return l10n.t('belongs to uid {0}, not {1}', owner, uid);
}

export function hasMode(mode: string): string {
  return l10n.t('has mode {0}, not 700', mode);
}
