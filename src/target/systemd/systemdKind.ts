/** The systemd kind as target.ts lists it: every server profile names a unit; Add server lists the host's. */
import type { ServerProfile } from '../../config/config';
import type { Target, TargetKind, WrappedService } from '../targetTypes';
import { SystemdTarget } from './systemdTarget';
import { unitDiscovery } from './unitDiscovery';

/** What a unit's ExecStart may wrap (a `docker run`): given by target.ts, so no kind imports another. */
export type WrapperFor = (unit: string, sudo: boolean, host: string | undefined) => WrappedService;

export function systemdKind(wrapperFor: WrapperFor): TargetKind & {
  unitTarget(unit: string, sudo: boolean, host: string | undefined): Target;
} {
  const unitTarget = (unit: string, sudo: boolean, host: string | undefined): Target =>
    new SystemdTarget(unit, sudo, host, wrapperFor(unit, sudo, host));
  return {
    forProfile: (profile: ServerProfile) => unitTarget(profile.unit, profile.sudo, profile.host),
    discovery: unitDiscovery,
    unitTarget,
  };
}
