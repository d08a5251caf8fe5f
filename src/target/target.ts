/**
 * What is restarted and watched, as operations: restart it, read its state, follow and tail
 * its log, edit its arguments (`argsEdit`), say its privileges. Each operation takes the
 * transport (a `TargetIo`) and returns typed results; no caller builds a shell command. Each
 * kind is one folder that this file lists in TARGET_KINDS: a systemd unit (systemd/), a plain
 * container or a compose service, and the `docker run` a unit's ExecStart may wrap (docker/), a
 * batch job of a scheduler found from its login node (slurm/).
 * A Kubernetes workload fits the same interface (docs/kubernetes.md). Only target/'s top-level
 * files are for the layers above (ESLint refuses an import of a kind's folder from outside).
 */
import type { ServerProfile } from '../config/config';
import type { HostDiscovery } from './discovered';
import { dockerKind, dockerRunWrapper } from './docker/dockerKind';
import { slurmKind } from './slurm/slurmKind';
import { systemdKind } from './systemd/systemdKind';
import type { Target, TargetKind } from './targetTypes';
import { noTargetKind } from '../present/words/targetWords';

export * from './targetTypes';
export { JOURNAL_ACCESS_FIX as LOG_ACCESS_FIX, journalProblem as logProblem } from './journalctl';

const systemd = systemdKind(dockerRunWrapper);

/** The target kinds, in the order a server profile is matched: the first that claims it. */
export const TARGET_KINDS: readonly TargetKind[] = [dockerKind, slurmKind, systemd];

/** The target a server profile names: its container or compose service, else its systemd unit. */
export function targetFor(profile: ServerProfile): Target {
  for (const kind of TARGET_KINDS) {
    const target = kind.forProfile(profile);
    if (target) return target;
  }
  throw new Error(noTargetKind(profile.name));
}

/** A systemd unit of a host (a node of a multi-node server). */
export function unitTarget(unit: string, sudo: boolean, host: string | undefined): Target {
  return systemd.unitTarget(unit, sudo, host);
}

/** How the kinds list a host's servers ("Add server"), each its own command: units first, as most hosts have them. */
export const HOST_DISCOVERIES: readonly HostDiscovery[] = [
  systemd,
  ...TARGET_KINDS.filter((k) => k !== systemd),
].flatMap((kind) => (kind.discovery ? [kind.discovery] : []));
