/** What the Docker target says when it cannot read a container: docker's output, or the unit that runs it. */
import * as l10n from '@vscode/l10n';

export function inspectPrintedNothing(): string {
  return l10n.t('docker inspect printed nothing');
}

/** `line`: the start of what docker printed instead. */
export function inspectNotJson(line: string): string {
  return l10n.t('docker inspect printed something else than JSON: {0}', line);
}

export function dockerStartUnnamed(): string {
  return l10n.t('ExecStart runs `docker start` without a container name Kimi can read');
}

export function dockerRunUnnamed(): string {
  return l10n.t(
    'ExecStart runs `docker run` without `--name`: Kimi cannot tell which container to watch. Add `--name NAME` to the docker run line',
  );
}

/** The Docker socket refused the login user; `host` undefined for the machine the extension runs on. */
export function dockerSocketRefused(host: string | undefined, sudo: boolean): string {
  const where = host ?? l10n.t('this machine');
  return sudo
    ? l10n.t('the Docker socket refused the command even with sudo on {0}', where)
    : l10n.t(
        'the login user may not use Docker on {0}: add it to the docker group (sudo usermod -aG docker USER, then log in again) or set "sudo": true',
        where,
      );
}

/** How a container removed on exit ended, when nothing tells its exit status. */
export function removedExitUnknown(): string {
  return l10n.t('container removed, exit status unknown');
}

/** sudo refused docker on `host` (undefined: this machine); `said` its first line. */
export function sudoRefusedDocker(host: string | undefined, said: string): string {
  return l10n.t(
    'sudo refused docker on {0} ({1}): allow the docker program that sudo finds (sudo -n sh -c \'command -v docker\') for this user in sudoers, or add the user to the docker group and set "sudo": false (either gives root on that host)',
    host ?? l10n.t('this machine'),
    said,
  );
}

/** Why a container needs no Kimi sudoers rule, and what the login user needs instead. */
export function containerNeedsNoRule(label: string): string {
  return l10n.t(
    '{0} needs no Kimi sudoers rule. The login user needs Docker: the docker group, or "sudo": true with a sudoers rule for the docker program (either is root on that host).',
    label,
  );
}
