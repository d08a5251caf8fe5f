/** What an SshTransport is given, and what one connection attempt shares with it (hops.ts, handshake.ts, hostKey.ts, sshAuth.ts). */
import type { Client } from 'ssh2';
import type { LoginAnswer, LoginQuestion } from './loginPolicy';
import type { ProxyProcess } from './proxyCommand';
import type { SshTarget } from './sshTargetTypes';
import type { ClientChoice } from '../openssh/chooseClient';

export interface UnknownHostKeyInfo {
  /** The name checked in known_hosts (the resolved HostName). */
  readonly host: string;
  readonly port: number;
  /** What the user wrote when it differs from `host` (a ~/.ssh/config alias). */
  readonly alias: string;
  readonly keyType: string;
  /** `SHA256:...` as `ssh-keygen -lf` prints it. */
  readonly fingerprint: string;
  /** Keys of these other types are already known for the host (worth a warning). */
  readonly otherKeyTypes: readonly string[];
  /** The file a trusted key is written to (UserKnownHostsFile of ~/.ssh/config, else kimiService.knownHostsFile). */
  readonly knownHostsFile: string;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface SshTransportOptions {
  readonly target: SshTarget;
  /**
   * Absolute path (already ~-expanded): the known-hosts file of every host whose ~/.ssh/config
   * entry sets no UserKnownHostsFile.
   */
  readonly knownHostsFile: string;
  /** The host-key policy: `ask` shows a modal, `strict` rejects, `accept-new` trusts. */
  decideUnknownHostKey(info: UnknownHostKeyInfo): Promise<'trust' | 'reject'>;
  /** Asked for an encrypted key; undefined = the user cancelled (the key is skipped). */
  requestPassphrase(keyPath: string, retry: boolean): Promise<string | undefined>;
  /**
   * A keyboard-interactive question (a one-time code, a PAM password) or a password login;
   * undefined = the user cancelled (the attempt ends, nothing is sent). Absent where nobody can
   * answer: a host that needs such a login is then refused with `noLoginHint`. `signal` aborts
   * when the attempt ends without the answer (the server gave up, the transport was disposed):
   * the question should then close.
   */
  requestLogin?(question: LoginQuestion, signal: AbortSignal): Promise<LoginAnswer | undefined>;
  /** Where the user can give an interactive login, said when requestLogin is absent. */
  readonly noLoginHint?: string;
  /**
   * ssh-agent socket or pipe for every hop, instead of OpenSSH's choice (IdentityAgent, then
   * $SSH_AUTH_SOCK, on Windows then the OpenSSH pipe and Pageant). Empty string = no agent.
   */
  readonly agentSocket?: string;
  /** For the agent choice: defaults to this process's platform and environment. */
  readonly platform?: NodeJS.Platform;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly readyTimeoutMs?: number;
  readonly keepaliveIntervalMs?: number;
  readonly keepaliveCountMax?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  readonly timers?: Timers;
  /** Which client was chosen and why (chooseClient.ts), for the tooltip. */
  readonly choice?: ClientChoice;
  /** Log sink: connection events and commands. Never passed a secret. */
  readonly log?: (message: string) => void;
}

/** The transport's state that a connection attempt reads and adds to. */
export interface DialContext {
  readonly options: SshTransportOptions;
  readonly timers: Timers;
  readonly log: (message: string) => void;
  /** Clients of an attempt in progress (so dispose can end them). */
  readonly dialing: Set<Client>;
  /** ProxyCommand processes alive (killed with their connection, or on dispose). */
  readonly proxies: Set<ProxyProcess>;
  /** Passphrases by key path, for the transport's life only. */
  readonly passphrases: Map<string, string>;
  isDisposed(): boolean;
}

export function noop(): void {}
