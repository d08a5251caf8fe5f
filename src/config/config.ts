import type { DockerTargetConfig, SlurmTargetConfig } from './names';
import { EXTENSION_ID } from './namespace';
import { everyNode, localHostOnUiSide } from '../present/words/settingsWords';
import { thisMachine } from '../present/words/targetWords';

export type HostKeyPolicy = 'ask' | 'strict' | 'accept-new';

/** kimiService.ssh.client: which SSH client logs in (transport/openssh/chooseClient.ts). */
export type SshClientSetting = 'auto' | 'ssh2' | 'openssh';

/** One GPU host, validated. `unit` always ends in `.service`. */
export interface ServerProfile {
  readonly name: string;
  /** Host name, address or ~/.ssh/config alias; undefined for `host: "local"`. */
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly username: string | undefined;
  readonly identityFile: string | undefined;
  /** The systemd unit; for a Docker target, a label naming the container or compose service. */
  readonly unit: string;
  /** Set when the server is a Docker container or compose service rather than a unit. */
  readonly docker?: DockerTargetConfig;
  /** Set when the server is a batch job of a scheduler, found from the login node `host`. */
  readonly slurm?: SlurmTargetConfig;
  /** The server's address as seen from the GPU host. */
  readonly url: string;
  readonly urlHost: string;
  readonly urlPort: number;
  readonly sudo: boolean;
  /** `ssh.client` of the entry: which SSH client logs in to it (every node), over kimiService.ssh.client. */
  readonly sshClient?: SshClientSetting;
  /**
   * A multi-node server: every node, node rank 0 first (it serves `url`). `host`, `port`,
   * `username`, `identityFile` and `unit` above are then rank 0's.
   */
  readonly nodes?: readonly NodeProfile[];
}

/** One node of a multi-node server (its own SSH connection, its own unit). */
export interface NodeProfile {
  /** "node 0 (gpu-a)": how messages name it. */
  readonly label: string;
  readonly rank: number;
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly username: string | undefined;
  readonly identityFile: string | undefined;
  readonly unit: string;
}

export interface Settings {
  readonly servers: readonly ServerProfile[];
  readonly activeServer: string | undefined;
  readonly knownHostsFile: string;
  readonly hostKeyPolicy: HostKeyPolicy;
  readonly sshClient: SshClientSetting;
  readonly confirmRestart: boolean;
  readonly pollIntervalMs: number;
  readonly loadTimeoutMs: number;
  readonly stallMs: number;
  readonly unreachableTimeoutMs: number;
  readonly notifyWhenReady: boolean;
  readonly verifyParsersWhenReady: boolean;
  /** Keep watching after ready (journal, /health every healthIntervalMs, the unit now and then). */
  readonly watchAfterReady: boolean;
  readonly healthIntervalMs: number;
}

/** The raw values of the `kimiService.*` settings, as VS Code returns them. */
export type RawSettings = Readonly<Record<string, unknown>>;

export type SettingsResult =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Where a server runs, for messages: "gpu1", "this machine", or "every node (gpu-a, gpu-b)". */
export function serverHosts(server: ServerProfile): string {
  if (server.nodes) return everyNode(server.nodes.map((n) => n.host ?? thisMachine()).join(', '));
  return server.host ?? thisMachine();
}

/** The server the commands act on: `kimiService.activeServer`, else the first. */
export function activeProfile(settings: Settings): ServerProfile | undefined {
  return settings.servers.find((s) => s.name === settings.activeServer) ?? settings.servers[0];
}

/**
 * The user setting that makes a remote window run this extension on the remote side: without it
 * the editor keeps preferring the UI side, since the extension declares both kinds.
 */
export const REMOTE_EXTENSION_KIND_SETTING = `"remote.extensionKind": { "${EXTENSION_ID}": ["workspace"] }`;

/**
 * `host: "local"` runs systemctl on the machine the extension runs on. Installed on the UI side
 * of a remote window (Remote-SSH...), that is the user's laptop, not the GPU host: refuse, and
 * say what to do. `uiSideOfRemote` is the remote's name when the extension runs on the UI side.
 */
export function localHostRefusal(server: ServerProfile, uiSideOfRemote: string | undefined): string | undefined {
  const local = server.nodes ? server.nodes.some((n) => n.host === undefined) : server.host === undefined;
  if (!local || uiSideOfRemote === undefined) return undefined;
  return localHostOnUiSide(server.name, uiSideOfRemote, REMOTE_EXTENSION_KIND_SETTING);
}
