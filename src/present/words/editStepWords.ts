/**
 * The steps of a change of the server's arguments on the host (each named in the error when it
 * fails: "writing /etc/...: failed (exit 1)"), what a change restarts, and what its undo needs.
 */
import * as l10n from '@vscode/l10n';

export function readingFile(file: string): string {
  return l10n.t('reading {0}', file);
}

export function readingFileBack(file: string): string {
  return l10n.t('reading {0} back', file);
}

export function keepingBackupOf(file: string): string {
  return l10n.t('keeping a backup of {0}', file);
}

export function keepingComposeBackup(): string {
  return l10n.t('keeping a backup of the compose file');
}

export function writingFile(file: string): string {
  return l10n.t('writing {0}', file);
}

export function restoringFile(file: string): string {
  return l10n.t('restoring {0}', file);
}

export function touchingFile(file: string): string {
  return l10n.t('touching {0}', file);
}

/** The systemd drop-in's steps. */
export type DropInStep = 'read-current' | 'read' | 'create-folder' | 'backup' | 'write' | 'remove' | 'restore';

export function dropInStep(step: DropInStep): string {
  switch (step) {
    case 'read-current':
      return l10n.t('reading the current drop-in');
    case 'read':
      return l10n.t('reading the drop-in');
    case 'create-folder':
      return l10n.t('creating the drop-in folder');
    case 'backup':
      return l10n.t('keeping a backup of the drop-in');
    case 'write':
      return l10n.t('writing the drop-in');
    case 'remove':
      return l10n.t('removing the drop-in');
    case 'restore':
      return l10n.t('restoring the drop-in');
  }
}

// What applying a change restarts.

export function restartsComposeService(service: string): string {
  return l10n.t('the compose service {0}', service);
}

export function restartsContainer(name: string): string {
  return l10n.t('the container {0}', name);
}

/** `job`: the job's label ("Slurm job sglang"). */
export function restartsJob(job: string): string {
  return l10n.t('the {0} (submitted again with the changed script)', job);
}

// An undo by hand, and why there is none.

export function copyBackupOver(backup: string, file: string): string {
  return l10n.t('copy {0} over {1}', backup, file);
}

export function removeDropInAndReload(file: string): string {
  return l10n.t('remove {0} and daemon-reload', file);
}

export function sameAsBackup(file: string): string {
  return l10n.t('{0} is the same as its backup, or has none', file);
}

export function noDropInToRollBack(unit: string): string {
  return l10n.t('{0} has no parser drop-in to roll back', unit);
}

export function plainContainerNothingChanged(name: string): string {
  return l10n.t(
    '{0} is a plain container: its command line is the one `docker run` gave it; nothing was changed on the host',
    name,
  );
}
