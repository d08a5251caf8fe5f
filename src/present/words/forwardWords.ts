/**
 * A port forward in words, in the display language: why its port is not the server's, its
 * refusals (a port taken, a host that forbids forwarding), the line once it is open, and why it
 * closed.
 */
import * as l10n from '@vscode/l10n';

/** The SSH host is this machine: the server's own port is taken by the server itself. */
export function serverOwnPortHere(serverPort: number, localPort: number): string {
  return l10n.t(
    "the SSH host is this machine, where port {0} is the server's own, so {1} was chosen",
    serverPort,
    localPort,
  );
}

export function portTakenHere(serverPort: number, localPort: number): string {
  return l10n.t('port {0} is taken on this machine, so {1} was chosen', serverPort, localPort);
}

export function selfForward(serverPort: number): string {
  return l10n.t(
    "the SSH host is this machine and {0} is the server's own port here: pick another local port",
    serverPort,
  );
}

export function portInUse(port: number): string {
  return l10n.t('{0} is already in use on this machine (pick another local port)', `127.0.0.1:${port}`);
}

export function portNeedsPrivileges(port: number): string {
  return l10n.t('{0} needs privileges on this machine (pick a port above 1023)', `127.0.0.1:${port}`);
}

export function cannotListen(port: number, detail: string): string {
  return l10n.t('cannot listen on {0}: {1}', `127.0.0.1:${port}`, detail);
}

export function noLocalPort(): string {
  return l10n.t('no local port to listen on');
}

/** `host: "local"`: `url` is the server's own url on this machine. */
export function nothingToForward(server: string, url: string): string {
  return l10n.t(
    '{0} runs on this machine (host "local"): there is nothing to forward; use {1} directly.',
    server,
    `${url}/v1`,
  );
}

/** sshd refuses direct-tcpip channels; `host` is undefined when the profile names none. */
export function forwardingProhibited(server: string, host: string | undefined): string {
  return l10n.t(
    'cannot forward a port to {0}: the SSH server of {1} forbids TCP forwarding (AllowTcpForwarding no: "administratively prohibited"), so no connection from this machine can reach the model server through SSH. Watching and restarting still work (they run curl on the host). To use the server from this machine, allow forwarding for your login in the host\'s sshd_config (e.g. "Match User <you>" + "AllowTcpForwarding local") and reload sshd.',
    server,
    host ?? l10n.t('the host'),
  );
}

/** One line for the log and the CLI once a forward is open; `note` says why its port is not the server's. */
export function forwardOpened(
  localPort: number,
  remote: string,
  server: string,
  baseUrl: string,
  note: string | undefined,
): string {
  return note
    ? l10n.t(
        "Forwarding {0} on this machine to {1} on {2}'s host ({3}). Base URL: {4}",
        `127.0.0.1:${localPort}`,
        remote,
        server,
        note,
        baseUrl,
      )
    : l10n.t(
        "Forwarding {0} on this machine to {1} on {2}'s host. Base URL: {3}",
        `127.0.0.1:${localPort}`,
        remote,
        server,
        baseUrl,
      );
}

/** One forwarded connection could not be carried to the server. */
export function couldNotReach(remote: string, server: string, why: string): string {
  return l10n.t("could not reach {0} on {1}'s host: {2}", remote, server, why);
}

/** Why a forward closed: the fleet closed, or the settings no longer lead there. */
export function fleetClosed(): string {
  return l10n.t('the fleet was closed');
}

export function hostOrUrlChanged(): string {
  return l10n.t('its host or url changed in the settings');
}

export function serverRemoved(): string {
  return l10n.t('the server was removed from the settings');
}

/** A server whose url names its Slurm job's node: no fixed place to forward to. */
export function followsSlurmNode(server: string, url: string): string {
  return l10n.t(
    "{0}'s url ({1}) follows its Slurm job from node to node: a port forward to it is not supported yet.",
    server,
    url,
  );
}

export function alreadyForwarded(server: string, localPort: number): string {
  return l10n.t('{0} is already forwarded on {1}; close that forward first', server, `127.0.0.1:${localPort}`);
}

export function closedOnRequest(): string {
  return l10n.t('closed on request');
}
