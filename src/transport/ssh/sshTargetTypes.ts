/** What a `host` setting resolves to through ~/.ssh/config: the endpoint to dial and its jump hosts. */
import type { ConfigFiles } from './sshInclude';

export interface SshSettings {
  readonly host: string;
  /** Overrides the config's Port when set. */
  readonly port?: number;
  readonly username?: string;
  /** Overrides the config's IdentityFile list when set. */
  readonly identityFile?: string;
}

export interface SshEndpoint {
  /** The name the user wrote (alias or host). */
  readonly alias: string;
  /** The address to dial, after HostName. */
  readonly hostName: string;
  readonly port: number;
  readonly username: string;
  /** Absolute paths, in the order to try. */
  readonly identityFiles: readonly string[];
  /** False when `identityFiles` are OpenSSH's defaults (missing ones are skipped silently). */
  readonly identityFilesConfigured: boolean;
  /** IdentitiesOnly yes: only the identity files, and only agent keys whose public key is one of theirs. */
  readonly identitiesOnly?: boolean;
  /** IdentityAgent, expanded: a socket or pipe path, or `none`; undefined = not set ($SSH_AUTH_SOCK...). */
  readonly identityAgent?: string;
  /** ProxyCommand, tokens expanded: run locally, its stdio is the connection (first hop only). */
  readonly proxyCommand?: string;
  /** UserKnownHostsFile when the config sets it (the first one is written); undefined = kimiService.knownHostsFile. */
  readonly knownHostsFiles?: readonly string[];
  /** HashKnownHosts yes: new known_hosts lines are written hashed. */
  readonly hashKnownHosts?: boolean;
  /** ConnectTimeout, as the handshake deadline. */
  readonly connectTimeoutMs?: number;
  /** ServerAliveInterval (> 0), as ssh2's keepalive interval. */
  readonly serverAliveIntervalMs?: number;
  readonly serverAliveCountMax?: number;
  /** What the config asks that is not applied (unsupported directives, Match criteria): logged. */
  readonly configNotes?: readonly string[];
}

export interface SshTarget extends SshEndpoint {
  /** Jump hosts in dialing order (first is dialed directly). */
  readonly jumps: readonly SshEndpoint[];
}

export interface ResolveEnv {
  readonly homeDir: string;
  readonly localUser: string;
  /** Defaults to this process's platform. */
  readonly platform?: NodeJS.Platform;
  /** For ${VAR}, %VAR% (Windows), IdentityAgent SSH_AUTH_SOCK; defaults to none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `~user` lookups. */
  readonly userHome?: (name: string) => string | undefined;
  readonly localHost?: string;
  /** The files Include lines reach (see collectConfigFiles); default none. */
  readonly files?: ConfigFiles;
}
