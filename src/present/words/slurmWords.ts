/** What the Slurm target says when the scheduler's answer about a job cannot be read. */
import * as l10n from '@vscode/l10n';

export function squeueFailed(): string {
  return l10n.t('squeue failed');
}

/** `output`: the start of what the state script printed. */
export function unexpectedOutput(output: string): string {
  return l10n.t('unexpected output: {0}', output);
}

export function scontrolSaidNothing(job: string): string {
  return l10n.t('scontrol show job {0} said nothing', job);
}

export function sacctPrintedNothing(): string {
  return l10n.t('sacct printed nothing for the job');
}
