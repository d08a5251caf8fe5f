/** The broker (one window watches, the others ask it) in words: why it is not used, and what it refused. */

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
