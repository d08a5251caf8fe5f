/** The Docker kind as target.ts lists it: a profile with `docker` (a container or a compose service), and the `docker run` a unit may wrap. */
import type { ServerProfile } from '../../config/config';
import type { TargetKind, WrappedService } from '../targetTypes';
import { ContainerTarget } from './containerTarget';
import { DockerRunUnit } from './dockerRunUnit';

export const dockerKind: TargetKind = {
  forProfile: (profile: ServerProfile) =>
    profile.docker ? new ContainerTarget(profile.docker, profile.sudo, profile.host) : undefined,
};

/** The container a unit's ExecStart runs (`docker run --name X`), when it does. */
export function dockerRunWrapper(unit: string, sudo: boolean, host: string | undefined): WrappedService {
  return new DockerRunUnit(unit, sudo, host);
}
