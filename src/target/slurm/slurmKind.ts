/** The Slurm kind as target.ts lists it: a profile with `slurm` (a batch job found from the login node). */
import type { ServerProfile } from '../../config/config';
import type { TargetKind } from '../targetTypes';
import { SlurmTarget } from './slurmTarget';

export const slurmKind: TargetKind = {
  forProfile: (profile: ServerProfile) => (profile.slurm ? new SlurmTarget(profile.slurm) : undefined),
};
