/**
 * A systemd unit whose ExecStart runs `docker run` (or `docker start -a`): the unit's state
 * with the container's PID (the sampler reads the container's process tree, not the docker
 * client's) and OOM kill. Detached (`docker run -d`, RemainAfterExit=yes) the container is
 * the service: its state is the unit's, and its output is in `docker logs`, not the journal.
 * The systemd target (../systemd/systemdTarget.ts) hands such a unit to this part.
 */
import type { ServiceStatus, TargetState, WrappedService } from '../targetTypes';
import { followContainerLog, tailContainerLog } from './dockerLogs';
import { containerState, ContainerReader, dockerAccessHint, type Exec } from './containerReader';
import { containerServiceStatus, type ContainerInfo, type InspectResult } from './dockerInspect';
import { wrappedContainer, type WrappedContainer } from './dockerRun';
import type { DockerTargetConfig } from './dockerTarget';

export function wrappedServiceStatus(
  unit: ServiceStatus,
  inspect: InspectResult,
  wrapped: WrappedContainer,
): ServiceStatus {
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
    const fromContainer = containerServiceStatus(inspect, unit.id ?? wrapped.name);
    return {
      ...fromContainer,
      ...(unit.fragmentPath ? { fragmentPath: unit.fragmentPath } : {}),
      dropInPaths: unit.dropInPaths,
      needDaemonReload: unit.needDaemonReload,
    };
  }
  if (c?.running && c.pid > 0 && unit.mainPid > 0) return { ...unit, mainPid: c.pid, execMainPid: c.pid };
  // The docker client runs but its container has not started yet: the server has no process to
  // follow, so the unit is still starting (the client's own PID would be followed for the whole load).
  if (unit.mainPid > 0 && unit.activeState === 'active' && !containerStartedForRun(c, unit))
    return { ...unit, activeState: 'activating', subState: 'start', mainPid: 0 };
  if (c?.oomKilled && !c.running && unit.mainPid === 0 && unit.activeState !== 'active') {
    return { ...unit, result: 'oom-kill', execMainCode: 'killed', execMainStatus: 9 };
  }
  return unit;
}

/** The container seen was started by this run of the unit (a leftover from an earlier run was not). */
function containerStartedForRun(c: ContainerInfo | undefined, unit: ServiceStatus): boolean {
  if (c?.startedAt === undefined || c.status === 'created') return false;
  return unit.execMainStartedAt === undefined || c.startedAt >= unit.execMainStartedAt;
}

/** The container a unit runs, followed across reads of the unit. */
export class DockerRunUnit implements WrappedService {
  /** The container ExecStart runs, once seen. */
  private wrapped: WrappedContainer | undefined;
  private reader: ContainerReader;

  constructor(
    private readonly label: string,
    private readonly sudo: boolean,
    private readonly host: string | undefined,
  ) {
    this.reader = new ContainerReader(sudo);
  }

  /** The state of a unit read with `systemctl show`, through the container its ExecStart runs (if any). */
  async readState(exec: Exec, unit: ServiceStatus, argv: readonly string[]): Promise<TargetState> {
    const wrapped = wrappedContainer(argv);
    if (wrapped?.kind === 'unnamed') return { unit, argv, hostPath: (p) => p, note: wrapped.message };
    if (wrapped?.container.name !== this.wrapped?.name) this.reader = new ContainerReader(this.sudo);
    this.wrapped = wrapped?.container;
    if (!this.wrapped) return { unit, argv, hostPath: (p) => p };
    const inspect = await this.reader.read(exec, containerConfig(this.wrapped.name));
    const state = containerState(inspect.kind === 'error' ? { kind: 'missing' } : inspect, this.label);
    return {
      ...(inspect.kind === 'error'
        ? {
            note: `${this.label} runs container ${this.wrapped.name}, which cannot be inspected (${dockerAccessHint(inspect.message, this.sudo, this.host) ?? inspect.message}): watching the unit alone, without the container's progress`,
          }
        : {}),
      unit: wrappedServiceStatus(unit, inspect, this.wrapped),
      // The container's own command line (image entrypoint included) when it exists: --model-path is a path inside it.
      argv: inspect.kind === 'found' ? state.argv : argv,
      hostPath: inspect.kind === 'found' ? state.hostPath : () => undefined,
    };
  }

  /** Where the log is when it is not in the journal: a detached container's `docker logs`. */
  get ownLog(): WrappedService['ownLog'] {
    if (!this.wrapped?.detached) return undefined;
    const config = containerConfig(this.wrapped.name);
    return {
      follow: (io, sinceEpochMs, handlers) => followContainerLog(io, config, this.sudo, sinceEpochMs, handlers),
      tail: (io, lines) => tailContainerLog(io, config, this.sudo, lines),
    };
  }
}

function containerConfig(name: string): DockerTargetConfig {
  return { kind: 'container', name, label: `container ${name}` };
}
