/**
 * What the watcher acts on: a systemd unit (restart with systemctl, state from `systemctl
 * show`, the journal) or a Docker container / compose service (docker restart, `docker
 * inspect`, `docker logs`). A unit whose ExecStart runs `docker run --name X` is a unit
 * target that reads its state and PID through container X. The watcher sees one shape.
 */
import type { ServerProfile } from '../config/config';
import type { ExecResult } from '../transport/transport';
import { isSudoRefusal, privilegedCommand } from '../transport/shell';
import { COPY_SUDOERS_RULE, privilegedArgv, sudoRefusalMessage } from './systemd/sudoers';
import {
  journalFollowCommand,
  journalTailCommand,
  parseJournalJsonLine,
  type JournalEntry,
} from '../engine/sglang/journal';
import { parseExecStartProperty, parseShow, showCommand, toUnitStatus, UNIT_PROPERTIES } from './systemd/systemd';
import type { UnitStatus } from '../engine/events';
import {
  endEventsCommand,
  inspectCommand,
  logsFollowCommand,
  logsTailCommand,
  restartCommand,
  type DockerTargetConfig,
} from './docker/dockerTarget';
import {
  containerUnitStatus,
  endedFromEvents,
  withEndEvents,
  hostPathOf,
  logLineEntry,
  parseInspect,
  type ContainerInfo,
  type InspectResult,
} from './docker/dockerInspect';
import { wrappedContainer, type WrappedContainer } from './docker/dockerRun';

export interface TargetState {
  /** The service as a unit: what the load state reads. */
  readonly unit: UnitStatus;
  /** The server's command line (ExecStart, or the container's Path and Args). */
  readonly argv: readonly string[];
  /** Where a path of that command line is on the host (a container's mounts); the path itself for a unit. */
  hostPath(path: string): string | undefined;
  /** Something the user should know about how the service is watched (once per watch). */
  readonly note?: string;
}

export type Exec = (command: string) => Promise<ExecResult>;

export interface ServiceTarget {
  /** "sglang-k26.service", "container sglang", "compose service sglang". */
  readonly label: string;
  readonly kind: 'systemd' | 'docker';
  restartCommand(): string;
  /** The user's words for a failed restart command. */
  restartError(stderr: string): string;
  readState(exec: Exec): Promise<TargetState>;
  logFollowCommand(sinceEpochMs: number): string;
  /** The log follow ends when the service stops (`docker logs -f`), not only on trouble (journalctl). */
  readonly logFollowEndsWithService: boolean;
  logTailCommand(lines: number): string;
  parseLogLine(line: string): JournalEntry | undefined;
}

export function targetFor(profile: ServerProfile): ServiceTarget {
  return profile.docker ? new DockerTarget(profile.docker, profile.sudo, profile.host) : new SystemdTarget(profile);
}

function dockerAccessHint(stderr: string, sudo: boolean, host: string | undefined): string | undefined {
  if (sudo && isSudoRefusal(stderr)) {
    return `sudo refused docker on ${host ?? 'this machine'} (${stderr.trim().split('\n')[0]}): allow the docker program that sudo finds (sudo -n sh -c 'command -v docker') for this user in sudoers, or add the user to the docker group and set "sudo": false (either gives root on that host)`;
  }
  if (!/permission denied.*docker\.sock|docker daemon socket/i.test(stderr)) return undefined;
  return sudo
    ? `the Docker socket refused the command even with sudo on ${host ?? 'this machine'}`
    : `the login user may not use Docker on ${host ?? 'this machine'}: add it to the docker group (sudo usermod -aG docker USER, then log in again) or set "sudo": true`;
}

/**
 * Reads one container, keeping the last run seen: a container removed on exit (`--rm`) still
 * tells how it ended (its `die` event), and keeps its run's identity, so its end is not taken
 * for a new run.
 */
export class ContainerReader {
  private last: ContainerInfo | undefined;

  constructor(private readonly sudo: boolean) {}

  async read(exec: Exec, config: DockerTargetConfig): Promise<InspectResult> {
    const inspect = parseInspect((await exec(inspectCommand(config, this.sudo))).stdout);
    if (inspect.kind === 'found') {
      const now = inspect.container;
      const previous = this.last;
      const justEnded =
        !now.running &&
        !now.restarting &&
        previous?.id === now.id &&
        previous.startedAt === now.startedAt &&
        previous.running;
      this.last = justEnded
        ? withEndEvents(now, (await exec(endEventsCommand(now.id, now.startedAt ?? 0, this.sudo))).stdout)
        : now;
      if (!justEnded && previous?.id === now.id && previous.startedAt === now.startedAt && previous.stopRequested)
        this.last = { ...now, stopRequested: true };
      return { kind: 'found', container: this.last };
    }
    const last = this.last;
    if (inspect.kind === 'error' || last === undefined) return inspect;
    if (last.running) {
      const events = await exec(endEventsCommand(last.id, last.startedAt ?? 0, this.sudo));
      this.last = endedFromEvents(last, events.stdout);
    }
    return { kind: 'found', container: this.last ?? last };
  }
}

export class DockerTarget implements ServiceTarget {
  readonly kind = 'docker';
  readonly logFollowEndsWithService = true;
  readonly label: string;
  private readonly reader: ContainerReader;

  constructor(
    private readonly config: DockerTargetConfig,
    private readonly sudo: boolean,
    private readonly host: string | undefined,
  ) {
    this.label = config.label;
    this.reader = new ContainerReader(sudo);
  }

  restartCommand(): string {
    return restartCommand(this.config, this.sudo);
  }

  restartError(stderr: string): string {
    const text = stderr.trim();
    const hint = dockerAccessHint(text, this.sudo, this.host);
    const what =
      this.config.kind === 'container'
        ? `docker restart ${this.config.name}`
        : `docker compose restart ${this.config.service}`;
    return `${what} failed: ${hint ?? (text.split('\n').slice(-3).join(' ') || 'no message')}`;
  }

  async readState(exec: Exec): Promise<TargetState> {
    const inspect = await this.reader.read(exec, this.config);
    if (inspect.kind === 'error') {
      throw new Error(
        `docker inspect failed: ${dockerAccessHint(inspect.message, this.sudo, this.host) ?? inspect.message}`,
      );
    }
    return containerState(inspect, this.label);
  }

  logFollowCommand(sinceEpochMs: number): string {
    return logsFollowCommand(this.config, this.sudo, sinceEpochMs);
  }

  logTailCommand(lines: number): string {
    return logsTailCommand(this.config, this.sudo, lines);
  }

  parseLogLine(line: string): JournalEntry | undefined {
    return logLineEntry(line);
  }
}

function containerState(inspect: InspectResult, label: string): TargetState {
  const container = inspect.kind === 'found' ? inspect.container : undefined;
  return {
    unit: containerUnitStatus(inspect, label),
    argv: container?.argv ?? [],
    hostPath: (path) => (container ? hostPathOf(path, container.mounts) : undefined),
  };
}

/**
 * A unit that runs `docker run` (or `docker start -a`): the unit's state with the container's
 * PID (the sampler reads the container's process tree, not the docker client's) and OOM kill.
 * Detached (`docker run -d`, RemainAfterExit=yes) the container is the service: its state is
 * the unit's, and its output is in `docker logs`, not the journal.
 */
export function wrappedUnitStatus(unit: UnitStatus, inspect: InspectResult, wrapped: WrappedContainer): UnitStatus {
  const c = inspect.kind === 'found' ? inspect.container : undefined;
  if (wrapped.detached) {
    if (!c)
      return unit.activeState === 'active'
        ? { ...unit, activeState: 'failed', subState: 'failed', mainPid: 0, result: 'exit-code' }
        : unit;
    // `docker run -d` under way, or failed itself (after the container seen last had ended): the unit says.
    if (!c.running && unit.activeState === 'activating') return unit;
    const startedAfter =
      unit.execMainStartedAt !== undefined && c.finishedAt !== undefined && unit.execMainStartedAt > c.finishedAt;
    if (!c.running && (unit.activeState === 'failed' || unit.activeState === 'deactivating') && startedAfter)
      return unit;
    const fromContainer = containerUnitStatus(inspect, unit.id ?? wrapped.name);
    return {
      ...fromContainer,
      ...(unit.fragmentPath ? { fragmentPath: unit.fragmentPath } : {}),
      dropInPaths: unit.dropInPaths,
      needDaemonReload: unit.needDaemonReload,
    };
  }
  if (c?.running && c.pid > 0 && unit.mainPid > 0) return { ...unit, mainPid: c.pid, execMainPid: c.pid };
  if (c?.oomKilled && !c.running && unit.mainPid === 0 && unit.activeState !== 'active') {
    return { ...unit, result: 'oom-kill', execMainCode: 'killed', execMainStatus: 9 };
  }
  return unit;
}

export class SystemdTarget implements ServiceTarget {
  readonly kind = 'systemd';
  readonly label: string;
  /** The container ExecStart runs, once seen. */
  private wrapped: WrappedContainer | undefined;
  private reader: ContainerReader;

  constructor(private readonly profile: ServerProfile) {
    this.label = profile.unit;
    this.reader = new ContainerReader(profile.sudo);
  }

  restartCommand(): string {
    return privilegedCommand(privilegedArgv.restart(this.profile.unit), this.profile.sudo);
  }

  restartError(stderr: string): string {
    return restartErrorMessage(stderr, this.profile);
  }

  async readState(exec: Exec): Promise<TargetState> {
    const result = await exec(showCommand(this.profile.unit, [...UNIT_PROPERTIES, 'ExecStart']));
    if (result.code !== 0) throw new Error(`systemctl show failed: ${result.stderr.trim() || `exit ${result.code}`}`);
    const properties = parseShow(result.stdout);
    const argv = parseExecStartProperty(properties['ExecStart'] ?? '');
    const unit = toUnitStatus(properties);
    const wrapped = wrappedContainer(argv);
    if (wrapped?.kind === 'unnamed') return { unit, argv, hostPath: (p) => p, note: wrapped.message };
    if (wrapped?.container.name !== this.wrapped?.name) this.reader = new ContainerReader(this.profile.sudo);
    this.wrapped = wrapped?.container;
    if (!this.wrapped) return { unit, argv, hostPath: (p) => p };
    const config: DockerTargetConfig = {
      kind: 'container',
      name: this.wrapped.name,
      label: `container ${this.wrapped.name}`,
    };
    const inspect = await this.reader.read(exec, config);
    const state = containerState(inspect.kind === 'error' ? { kind: 'missing' } : inspect, this.label);
    return {
      ...(inspect.kind === 'error'
        ? {
            note: `${this.label} runs container ${this.wrapped.name}, which cannot be inspected (${dockerAccessHint(inspect.message, this.profile.sudo, this.profile.host) ?? inspect.message}): watching the unit alone, without the container's progress`,
          }
        : {}),
      unit: wrappedUnitStatus(unit, inspect, this.wrapped),
      // The container's own command line (image entrypoint included) when it exists: --model-path is a path inside it.
      argv: inspect.kind === 'found' ? state.argv : argv,
      hostPath: inspect.kind === 'found' ? state.hostPath : () => undefined,
    };
  }

  private get containerLogs(): DockerTargetConfig | undefined {
    return this.wrapped?.detached
      ? { kind: 'container', name: this.wrapped.name, label: `container ${this.wrapped.name}` }
      : undefined;
  }

  get logFollowEndsWithService(): boolean {
    return this.containerLogs !== undefined;
  }

  logFollowCommand(sinceEpochMs: number): string {
    const logs = this.containerLogs;
    return logs
      ? logsFollowCommand(logs, this.profile.sudo, sinceEpochMs)
      : journalFollowCommand(this.profile.unit, sinceEpochMs);
  }

  logTailCommand(lines: number): string {
    const logs = this.containerLogs;
    return logs ? logsTailCommand(logs, this.profile.sudo, lines) : journalTailCommand(this.profile.unit, lines);
  }

  parseLogLine(line: string): JournalEntry | undefined {
    return this.containerLogs ? logLineEntry(line) : parseJournalJsonLine(line);
  }
}

export function restartErrorMessage(stderr: string, profile: ServerProfile): string {
  const text = stderr.trim();
  const command = privilegedCommand(privilegedArgv.restart(profile.unit), profile.sudo);
  if (isSudoRefusal(text)) {
    // Names the refused command and the rules that allow exactly it (Kimi: Copy sudoers rule).
    return sudoRefusalMessage({
      host: profile.host,
      unit: profile.unit,
      action: `systemctl restart ${profile.unit}`,
      command,
      stderr: text,
    });
  }
  if (/access denied|interactive authentication required|permission denied/i.test(text)) {
    return `Not allowed to restart ${profile.unit}: ${text.split('\n')[0]} (${command}). Set "sudo": true for this server and install the rules of "${COPY_SUDOERS_RULE}", or connect as a user who may restart it.`;
  }
  return `systemctl restart ${profile.unit} failed: ${text.split('\n').slice(-3).join(' ') || 'no message'}`;
}
