/**
 * A server run by Docker rather than by a systemd unit: a container (`docker run --name`) or a
 * compose service. The commands that act on it on the GPU host, as HostCommands; pure (no I/O).
 * A compose service's commands are scripts of constant text (`sh -c SCRIPT sh FILE SERVICE ...`):
 * the file and the service reach them as `$1` and `$2`, never spliced in.
 */
import type { DockerTargetConfig } from '../../config/names';
import type { HostCommand } from '../../transport/shell';

export { COMPOSE_SERVICE_NAME, DOCKER_NAME, type DockerTargetConfig } from '../../config/names';

/** `sudo -n ` before each docker call of a script when asked: constant text, chosen by a boolean. */
function sudoWord(sudo: boolean): string {
  return sudo ? 'sudo -n ' : '';
}

/**
 * `docker compose` (v2 plugin) where it exists, else `docker-compose` (v1, what Debian 12
 * packages): a shell function the compose scripts below call as `dc`.
 */
function composeFunction(sudo: boolean): string {
  const s = sudoWord(sudo);
  return `dc() { if ${s}docker compose version >/dev/null 2>&1; then ${s}docker compose "$@"; else ${s}docker-compose "$@"; fi; }`;
}

type ComposeTarget = Extract<DockerTargetConfig, { kind: 'compose' }>;

/** The fields of `docker inspect` the watcher reads (not Config.Env: it may hold secrets). */
export const INSPECT_FORMAT =
  '{"Id":{{json .Id}},"Name":{{json .Name}},"State":{{json .State}},"RestartCount":{{json .RestartCount}},' +
  '"Path":{{json .Path}},"Args":{{json .Args}},"Mounts":{{json .Mounts}},"RestartPolicy":{{json .HostConfig.RestartPolicy}}}';

/**
 * Sets `id` to the container id of the compose service `$2` of the file `$1` (stopped ones
 * too), or to nothing; `out` keeps what compose said (its error, when it could not answer).
 */
function composeContainerId(sudo: boolean): string {
  return `${composeFunction(sudo)}; out=$(dc -f "$1" ps -a -q "$2" 2>&1); id=$(printf '%s\\n' "$out" | grep -E '^[0-9a-f]{12,64}$' | head -n 1)`;
}

/** A compose script: `$1` the file, `$2` the service, then `extra` as `$3`, ... */
function composeScript(target: ComposeTarget, script: string, extra: readonly string[] = []): HostCommand {
  return { argv: ['sh', '-c', script, 'sh', target.file, target.service, ...extra] };
}

/**
 * One line of JSON (INSPECT_FORMAT) for the container, or `docker inspect`'s error on stdout
 * (`Error: No such object: NAME`), which `parseInspect` reads as "no such container".
 */
export function inspectCommand(target: DockerTargetConfig, sudo: boolean): HostCommand {
  if (target.kind === 'container')
    return {
      argv: ['docker', 'inspect', '--type', 'container', '--format', INSPECT_FORMAT, '--', target.name],
      sudo,
      stderrToStdout: true,
    };
  return composeScript(
    target,
    `${composeContainerId(sudo)}; if [ -z "$id" ] && [ -n "$out" ]; then printf '%s\\n' "$out"; elif [ -z "$id" ]; then echo "Error: No such object: compose service $2"; else ${sudoWord(sudo)}docker inspect --type container --format "$3" "$id" 2>&1; fi`,
    [INSPECT_FORMAT],
  );
}

/**
 * `docker restart NAME`. A compose service: `compose restart SERVICE`, or, when the compose
 * file changed after the container was created (parser flags added...) or there is no
 * container, `compose up -d --force-recreate --no-deps SERVICE`, so the file's command applies.
 */
export function restartCommand(target: DockerTargetConfig, sudo: boolean): HostCommand {
  if (target.kind === 'container') return { argv: ['docker', 'restart', '--', target.name], sudo };
  const created = `$(${sudoWord(sudo)}docker inspect --format '{{.Created}}' "$id")`;
  return composeScript(
    target,
    [
      composeContainerId(sudo),
      `if [ -n "$id" ] && [ -z "$(find "$1" -newermt "${created}" 2>/dev/null)" ]; then dc -f "$1" restart "$2"`,
      `else dc -f "$1" up -d --force-recreate --no-deps "$2"; fi`,
    ].join('; '),
  );
}

function dockerSeconds(epochMs: number): string {
  return (Math.max(0, Math.floor(epochMs)) / 1000).toFixed(3);
}

/**
 * Follows the container's output (stdout and stderr, where SGLang logs) from `sinceEpochMs`,
 * each line prefixed with its RFC 3339 time. Ends when the container stops.
 */
export function logsFollowCommand(target: DockerTargetConfig, sudo: boolean, sinceEpochMs: number): HostCommand {
  const since = dockerSeconds(sinceEpochMs);
  if (target.kind === 'container')
    return {
      argv: ['docker', 'logs', '--follow', '--timestamps', '--since', since, '--', target.name],
      sudo,
      stderrToStdout: true,
    };
  return composeScript(
    target,
    `${composeContainerId(sudo)}; [ -n "$id" ] && ${sudoWord(sudo)}docker logs --follow --timestamps --since "$3" "$id" 2>&1`,
    [since],
  );
}

/** The container's last `lines` lines (the cause of a failure). */
export function logsTailCommand(target: DockerTargetConfig, sudo: boolean, lines: number): HostCommand {
  const n = String(Math.max(1, Math.min(100000, Math.floor(lines))));
  if (target.kind === 'container')
    return { argv: ['docker', 'logs', '--timestamps', '--tail', n, '--', target.name], sudo, stderrToStdout: true };
  return composeScript(
    target,
    `${composeContainerId(sudo)}; [ -n "$id" ] && ${sudoWord(sudo)}docker logs --timestamps --tail "$3" "$id" 2>&1`,
    [n],
  );
}

/**
 * The `die`, `oom`, `kill` and `stop` events of one container since its start, up to now, as
 * JSON lines: how a container removed on exit (`--rm`) ended, when `docker inspect` can no
 * longer say, and whether someone stopped it through Docker (`docker stop`, `docker kill`:
 * a `kill` event comes before the `die`) rather than it ending on its own.
 */
export function endEventsCommand(containerId: string, sinceEpochMs: number, sudo: boolean): HostCommand {
  if (!/^[0-9a-f]{12,64}$/.test(containerId)) throw new Error(`Invalid container id: ${JSON.stringify(containerId)}`);
  // From the run's start exactly: a restart's own stop and die events come just before it.
  const script = `${sudoWord(sudo)}docker events --since "$1" --filter "container=$2" --filter event=die --filter event=oom --filter event=kill --filter event=stop --format '{{json .}}' --until "$(date +%s.%N)" 2>&1`;
  return { argv: ['sh', '-c', script, 'sh', dockerSeconds(sinceEpochMs), containerId] };
}
