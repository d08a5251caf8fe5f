/**
 * The Target's vocabulary: its operations, state, log entries and errors (target.ts builds the
 * kinds; each kind's module implements these). No kind is imported here, so none imports a cycle.
 */
import type { ServerProfile } from '../config/config';
import { shellLine, type HostCommand } from '../transport/shell';
import type { ExecResult, RemoteProcess, Transport } from '../transport/transport';
import type { ArgsEditor } from './argsEdit';
import type { HostDiscovery } from './discovered';

export type ServiceManager = 'systemd' | 'docker' | 'scheduler';

/**
 * What the service manager says of the service, in systemd's words (the load state reads one
 * shape): a systemd unit as `systemctl show` describes it, a container's `docker inspect` read
 * into the same fields (`manager: 'docker'`), a Kubernetes pod's status likewise
 * (docs/kubernetes.md). Timestamps are epoch milliseconds.
 */
export interface ServiceStatus {
  readonly loadState: string; // loaded | not-found | ...
  readonly activeState: string; // active | activating | deactivating | inactive | failed
  readonly subState: string; // running | dead | failed | auto-restart | ...
  readonly mainPid: number; // 0 when no process
  readonly nRestarts: number;
  readonly result: string; // success | exit-code | signal | core-dump | ...
  readonly execMainStatus?: number;
  readonly execMainCode?: string; // exited | killed | dumped (from ExecMainCode: 1/2/3)
  readonly execMainStartedAt?: number;
  /** CLOCK_MONOTONIC microseconds of the process start: compares exactly with journal entries. */
  readonly execMainStartedMonotonicUs?: number;
  readonly execMainExitedAt?: number;
  readonly fragmentPath?: string;
  readonly dropInPaths: readonly string[];
  readonly needDaemonReload: boolean;
  readonly id?: string; // e.g. sglang-k26-ddtree.service
  /** Changes on every start: tells a new run from the old one. */
  readonly invocationId?: string;
  readonly controlGroup?: string; // e.g. /system.slice/sglang-k26-ddtree.service
  readonly activeEnteredAt?: number;
  readonly execMainPid?: number;
  /** Who manages the service; absent: systemd. 'docker': a container's state (docker/dockerInspect). */
  readonly manager?: ServiceManager;
  /** The process ended because someone stopped it (`docker stop` or `kill`: Docker's events), not on its own. */
  readonly stopRequested?: boolean;
  /**
   * The manager has a job running or queued on the service (systemd's `Job`): between the stop
   * and the start of a restart the unit is inactive with no process, and about to start.
   */
  readonly jobPending?: boolean;
  /** The manager's name in messages when it is not systemd or Docker (a batch scheduler). */
  readonly managerName?: string;
  /** The manager's own words for how the run ended (a time limit, a preemption): said instead of an exit status. */
  readonly endedBecause?: string;
  /** The manager's words for a service it no longer knows (LoadState=not-found), when not systemd's or Docker's. */
  readonly notFoundText?: string;
  /** Waiting for its turn (a batch job in the queue): no process yet, and why. */
  readonly queued?: { readonly reason?: string; readonly estimatedStartAt?: number };
  /** When the manager ends the run whatever it does (a job's time limit), epoch ms. */
  readonly endsAt?: number;
  /** The manager's own id of the run, when it has one a user names it by (a batch job's id). */
  readonly jobId?: string;
  /** The node the run is on when that is not the SSH host (a job's rank 0 node); absent while it has none. */
  readonly node?: string;
  /** mainPid names the run, not a process of the SSH host (it runs on another node): nothing on the host samples it. */
  readonly mainPidElsewhere?: boolean;
}

/** One entry of the service's log: its text, and when (the engine's grammar reads the text). */
export interface LogEntry {
  readonly message: string;
  /** Epoch milliseconds. */
  readonly at: number;
  readonly pid?: number;
  /** Microseconds on the clock of `ServiceStatus.execMainStartedMonotonicUs`: tells an earlier process's lines. */
  readonly monotonicUs?: number;
  /** Who wrote it, when the log says (journal: SYSLOG_IDENTIFIER, "systemd" for the manager's own words). */
  readonly identifier?: string;
  /** The manager's own line says the service's state changed (a batch job lost a node's tasks): look at the state now. */
  readonly stateNews?: boolean;
}

export interface TargetState {
  /** The service's state: what the load state reads. */
  readonly unit: ServiceStatus;
  /** The server's command line (ExecStart, or the container's Path and Args). */
  readonly argv: readonly string[];
  /** Model files: where a path of that command line is on the host (a container's mounts); the path itself for a unit. */
  hostPath(path: string): string | undefined;
  /** Something the user should know about how the service is watched (once per watch). */
  readonly note?: string;
  /** The node the server runs on when that is not the SSH host (a job's batch host): what `{node}` in the url means. */
  readonly node?: string;
  /** How the host sampler reaches the server's node when it is not the SSH host (`unit.mainPidElsewhere`). */
  readonly serverNode?: ServerNodeShell;
}

/**
 * Running a command where the server runs, when that is not the SSH host (a job's node, reached
 * from the login node inside the job's allocation): the host sampler runs there. `lacking`: it
 * cannot run there now, and why (the job has no node yet).
 */
export type ServerNodeShell =
  | {
      readonly kind: 'inside';
      /** Where, in words: "inside job 42 on n1 (srun --overlap)". */
      readonly where: string;
      /** Changes when the place does (another job, its next run, another node): the sampler starts again. */
      readonly key: string;
      /** sh run there first: sets `roots` to the server's processes on that node (space-separated PIDs), or exits non-zero saying why on stderr. */
      readonly rootsSh: string;
      /** The shell line the SSH host runs: `script` (sh) run on the server's node. */
      wrap(script: string): string;
    }
  | { readonly kind: 'lacking'; readonly why: string };

/**
 * How a target reaches the host: the transport's exec and stream, with the caller's timeout and
 * trace. A target asks in HostCommands (words, sudo, redirections as fields): `targetIo` renders
 * them with transport/shell.ts `shellLine`, the one place they are quoted.
 */
export interface TargetIo {
  exec(command: HostCommand): Promise<ExecResult>;
  stream(
    command: HostCommand,
    onLine: (line: string) => void,
    onStderr?: (line: string) => void,
  ): Promise<RemoteProcess>;
}

/** What the operations that only run commands need (restart, readState, tailLog). */
export type TargetExec = Pick<TargetIo, 'exec'>;

/** A transport as a TargetIo: each command with `timeoutMs`, and shown to `trace` first. */
export function targetIo(transport: Transport, timeoutMs = 20_000, trace?: (command: string) => void): TargetIo {
  return {
    exec: (command) => {
      const line = shellLine(command);
      trace?.(line);
      return transport.exec(line, { timeoutMs });
    },
    stream: (command, onLine, onStderr) => {
      const line = shellLine(command);
      trace?.(line);
      return transport.stream(line, onLine, onStderr);
    },
  };
}

/** What decides the user's words for a refusal; each front adds its own hint (present/hints.ts). */
export type TargetErrorKind =
  /** sudo refused the command (no rule for it): the sudoers rules would allow it. */
  | 'sudo-refused'
  /** The service manager refused the login user (polkit, the Docker socket). */
  | 'access-denied'
  | 'failed';

export class TargetError extends Error {
  constructor(
    readonly kind: TargetErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'TargetError';
  }
}

export type RestartResult = { readonly ok: true } | { readonly ok: false; readonly error: TargetError };

/** The last lines of the log, and why it could not be read (`problem`, journalctl's or Docker's words). */
export interface LogTail {
  readonly entries: readonly LogEntry[];
  readonly problem?: string;
}

export interface LogFollowHandlers {
  onEntry(entry: LogEntry): void;
  /** Each line the follow writes on stderr (a hint that the log is not readable, an error). */
  onStderr(line: string): void;
}

export type TargetKindName = 'systemd' | 'container' | 'compose' | 'slurm';

export interface Target {
  /** "sglang-k26.service", "container sglang", "compose service sglang". */
  readonly label: string;
  readonly kind: TargetKindName;
  /** Asks the manager to restart the service and returns once it took the job (not once the server is up). */
  restart(io: TargetExec): Promise<RestartResult>;
  readState(io: TargetExec): Promise<TargetState>;
  /** Follows the log from `sinceEpochMs`; the process ends on `kill()`, or when the log does. */
  followLog(io: TargetIo, sinceEpochMs: number, handlers: LogFollowHandlers): Promise<RemoteProcess>;
  /** The follow ends when the service stops (`docker logs -f`), not only on trouble (journalctl). */
  readonly logFollowEndsWithService: boolean;
  /**
   * The manager can end the service while neither its log nor its processes say so (a scheduler
   * ends a job whose node failed: rank 0 may answer HTTP and the log stay silent until the node
   * is cleaned up): a watch reads the state at a steady pace, not only as a rare backstop.
   */
  readonly endsOnlyInState?: boolean;
  tailLog(io: TargetExec, lines: number): Promise<LogTail>;
  /** The one way the server's arguments change (parser flags, an advice): a unit drop-in, the compose file, or by hand. */
  readonly argsEdit: ArgsEditor;
  /** The command line the running process was started with (the unit's main process, the container's); undefined when none runs. */
  runningArgv(io: TargetExec): Promise<readonly string[] | undefined>;
  /** The environment the manager gives the server (a unit's Environment=); undefined when it does not say (a container's may hold secrets). */
  readEnvironment(io: TargetExec): Promise<Record<string, string> | undefined>;
  /** The server's programs are the host's own (its Python can be asked for the engine's version); false in a container. */
  readonly commandRunsOnHost: boolean;
  /** What sudo must allow for the target's privileged commands, or why it needs no rule of Kimi's. */
  readonly privileges: TargetPrivileges;
}

export type TargetPrivileges =
  | {
      readonly kind: 'sudoers';
      /** The sudoers lines that let `user` run exactly these commands. */
      rules(user: string): string;
      /** The command that opens the rules file on the host (visudo checks it first). */
      readonly installCommand: string;
    }
  | { readonly kind: 'none'; readonly why: string };

/** One target kind (a folder of target/), as target.ts lists it. */
export interface TargetKind {
  /** The target of a server profile when the profile names this kind; undefined: another kind's. */
  forProfile(profile: ServerProfile): Target | undefined;
  /** How the kind lists a host's servers ("Add server"); undefined: it cannot. */
  readonly discovery?: HostDiscovery;
}

/** What a unit wraps (a `docker run` in its ExecStart): its state, and its own log when it is detached. */
export interface WrappedService {
  readState(exec: TargetExec['exec'], unit: ServiceStatus, argv: readonly string[]): Promise<TargetState>;
  /** The log when the unit's journal does not have it (a detached container's `docker logs`). */
  readonly ownLog:
    | {
        follow(io: TargetIo, sinceEpochMs: number, handlers: LogFollowHandlers): Promise<RemoteProcess>;
        tail(io: TargetExec, lines: number): Promise<LogTail>;
      }
    | undefined;
}
