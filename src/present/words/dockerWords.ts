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
