/**
 * Reading one container on the host (`docker inspect`, and Docker's events once it ended), and
 * the words for Docker refusing the login user. Shared by the container/compose target and by
 * a unit that wraps `docker run`.
 */
import type { ExecResult } from '../../transport/transport';
import { isSudoRefusalText, type HostCommand } from '../../transport/shell';
import type { TargetState } from '../targetTypes';
import { dockerSocketRefused, sudoRefusedDocker } from '../../present/words/dockerWords';
import { endEventsCommand, inspectCommand, type DockerTargetConfig } from './dockerTarget';
import {
  containerServiceStatus,
  endedFromEvents,
  hostPathOf,
  parseInspect,
  withEndEvents,
  withPreviousExit,
  type ContainerInfo,
  type InspectResult,
} from './dockerInspect';

export type Exec = (command: HostCommand) => Promise<ExecResult>;

/** Why Docker refused the command, in words that say what to change; undefined when it did not. */
export function dockerAccessHint(stderr: string, sudo: boolean, host: string | undefined): string | undefined {
  if (sudo && isSudoRefusalText(stderr)) {
    return sudoRefusedDocker(host, stderr.trim().split('\n')[0] ?? '');
  }
  // docker-compose v1 (Python) says it as "Error while fetching server API version: (..., PermissionError(13, ...))".
  if (
    !/permission denied.*docker\.sock|docker daemon socket|fetching server API version: .*PermissionError/i.test(stderr)
  )
    return undefined;
  return dockerSocketRefused(host, sudo);
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
      const restartedSince =
        now.running &&
        previous?.id === now.id &&
        previous.startedAt !== now.startedAt &&
        now.restartCount > previous.restartCount;
      this.last = justEnded
        ? withEndEvents(now, (await exec(endEventsCommand(now.id, now.startedAt ?? 0, this.sudo))).stdout)
        : restartedSince
          ? withPreviousExit(
              now,
              previous,
              (await exec(endEventsCommand(now.id, previous.startedAt ?? 0, this.sudo))).stdout,
            )
          : now;
      if (!justEnded && previous?.id === now.id && previous.startedAt === now.startedAt && previous.stopRequested)
        this.last = { ...now, stopRequested: true };
      return { kind: 'found', container: this.last };
    }
    const last = this.last;
    if (inspect.kind === 'error' || last === undefined) return inspect;
    // Seen running, or in the removal that follows its end (`--rm`): how it ended is in its events.
    if (last.running || last.status === 'removing') {
      const events = await exec(endEventsCommand(last.id, last.startedAt ?? 0, this.sudo));
      this.last = endedFromEvents(last, events.stdout);
    }
    return { kind: 'found', container: this.last ?? last };
  }
}

/** A container's inspect result as a target's state: its status, command line and mounts. */
export function containerState(inspect: InspectResult, label: string): TargetState {
  const container = inspect.kind === 'found' ? inspect.container : undefined;
  return {
    unit: containerServiceStatus(inspect, label),
    argv: container?.argv ?? [],
    hostPath: (path) => (container ? hostPathOf(path, container.mounts) : undefined),
  };
}
