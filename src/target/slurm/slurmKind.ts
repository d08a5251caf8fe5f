/** The Slurm kind as target.ts lists it: a profile with `slurm` (a batch job found from the login node); Add server lists the login user's jobs. */
import type { ServerProfile } from '../../config/config';
import type { TargetKind } from '../targetTypes';
import { jobDiscovery } from './jobDiscovery';
import { SlurmTarget } from './slurmTarget';

export const slurmKind: TargetKind = {
  forProfile: (profile: ServerProfile) => (profile.slurm ? new SlurmTarget(profile.slurm) : undefined),
  discovery: jobDiscovery,
};
