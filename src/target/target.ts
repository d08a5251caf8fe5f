/**
 * What is restarted and watched, as operations: restart it, read its state, follow and tail
 * its log, find its model files, edit its arguments. Each operation takes the transport (a
 * `TargetIo`) and returns typed results; no caller builds a shell command. Kinds: a systemd
 * unit (systemd/), a plain container or a compose service, and a unit whose ExecStart wraps
 * `docker run` (docker/). A Kubernetes workload fits the same interface (docs/kubernetes.md).
 * Only this file's types are for engine/ and the layers above; the kinds' modules are internal.
 */
import type { ServerProfile } from '../config/config';
import { ContainerTarget } from './docker/containerTarget';
import { DockerRunUnit } from './docker/dockerRunUnit';
import { SystemdTarget } from './systemd/systemdTarget';
import type { Target } from './targetTypes';

export * from './targetTypes';
export { JOURNAL_ACCESS_FIX as LOG_ACCESS_FIX, journalProblem as logProblem } from './journalctl';

/** The target a server profile names: its container or compose service, else its systemd unit. */
export function targetFor(profile: ServerProfile): Target {
  return profile.docker
    ? new ContainerTarget(profile.docker, profile.sudo, profile.host)
    : unitTarget(profile.unit, profile.sudo, profile.host);
}

/** A systemd unit of a host (a node of a multi-node server). */
export function unitTarget(unit: string, sudo: boolean, host: string | undefined): Target {
  return new SystemdTarget(unit, sudo, host, new DockerRunUnit(unit, sudo, host));
}
