/**
 * A server run by Docker rather than by a systemd unit: a container (`docker run --name`) or a
 * compose service. The commands that act on it on the GPU host; pure (no I/O).
 */
import type { DockerTargetConfig } from '../../config/names';
import { commandLine, quote } from '../../transport/shell';

export { COMPOSE_SERVICE_NAME, DOCKER_NAME, type DockerTargetConfig } from '../../config/names';

/**
 * `docker compose` (v2 plugin) where it exists, else `docker-compose` (v1, what Debian 12
 * packages): a shell function the compose commands below call as `dc`.
 */
function composeFunction(sudo: boolean): string {
  const s = sudo ? 'sudo -n ' : '';
  return `dc() { if ${s}docker compose version >/dev/null 2>&1; then ${s}docker compose "$@"; else ${s}docker-compose "$@"; fi; }`;
}

function docker(sudo: boolean, argv: readonly string[]): string {
  return `${sudo ? 'sudo -n ' : ''}${commandLine(['docker', ...argv])}`;
}

type ComposeTarget = Extract<DockerTargetConfig, { kind: 'compose' }>;

/** `dc -f FILE ARGV...`; the command line must start with composeFunction. */
function dc(target: ComposeTarget, argv: readonly string[]): string {
  return `dc ${commandLine(['-f', target.file, ...argv])}`;
}

/** The fields of `docker inspect` the watcher reads (not Config.Env: it may hold secrets). */
export const INSPECT_FORMAT =
  '{"Id":{{json .Id}},"Name":{{json .Name}},"State":{{json .State}},"RestartCount":{{json .RestartCount}},' +
  '"Path":{{json .Path}},"Args":{{json .Args}},"Mounts":{{json .Mounts}},"RestartPolicy":{{json .HostConfig.RestartPolicy}}}';

/**
 * Sets `id` to the container id of a compose service (stopped ones too), or to nothing; `out`
 * keeps what compose said (its error, when it could not answer).
 */
function composeContainerId(target: ComposeTarget, sudo: boolean): string {
  return `${composeFunction(sudo)}; out=$(${dc(target, ['ps', '-a', '-q', target.service])} 2>&1); id=$(printf '%s\\n' "$out" | grep -E '^[0-9a-f]{12,64}$' | head -n 1)`;
}

/**
 * One line of JSON (INSPECT_FORMAT) for the container, or `docker inspect`'s error on stdout
 * (`Error: No such object: NAME`), which `parseInspect` reads as "no such container".
 */
export function inspectCommand(target: DockerTargetConfig, sudo: boolean): string {
  const fmt = quote(INSPECT_FORMAT);
  if (target.kind === 'container')
    return `${docker(sudo, ['inspect', '--type', 'container', '--format'])} ${fmt} ${commandLine(['--', target.name])} 2>&1`;
  return `${composeContainerId(target, sudo)}; if [ -z "$id" ] && [ -n "$out" ]; then printf '%s\\n' "$out"; elif [ -z "$id" ]; then echo 'Error: No such object: compose service ${target.service}'; else ${docker(sudo, ['inspect', '--type', 'container', '--format'])} ${fmt} "$id" 2>&1; fi`;
}

/**
 * `docker restart NAME`. A compose service: `compose restart SERVICE`, or, when the compose
 * file changed after the container was created (parser flags added...) or there is no
 * container, `compose up -d --force-recreate --no-deps SERVICE`, so the file's command applies.
 */
export function restartCommand(target: DockerTargetConfig, sudo: boolean): string {
  if (target.kind === 'container') return docker(sudo, ['restart', '--', target.name]);
  const created = `$(${docker(sudo, ['inspect', '--format', '{{.Created}}'])} "$id")`;
  return [
    composeContainerId(target, sudo),
    `if [ -n "$id" ] && [ -z "$(find ${quote(target.file)} -newermt "${created}" 2>/dev/null)" ]; then ${dc(target, ['restart', target.service])}`,
    `else ${dc(target, ['up', '-d', '--force-recreate', '--no-deps', target.service])}; fi`,
  ].join('; ');
}

/**
 * Follows the container's output (stdout and stderr, where SGLang logs) from `sinceEpochMs`,
 * each line prefixed with its RFC 3339 time. Ends when the container stops.
 */
export function logsFollowCommand(target: DockerTargetConfig, sudo: boolean, sinceEpochMs: number): string {
  const since = (Math.max(0, Math.floor(sinceEpochMs)) / 1000).toFixed(3);
  const argv = ['logs', '--follow', '--timestamps', '--since', since];
  if (target.kind === 'container') return `${docker(sudo, [...argv, '--', target.name])} 2>&1`;
  return `${composeContainerId(target, sudo)}; [ -n "$id" ] && ${docker(sudo, argv)} "$id" 2>&1`;
}

/** The container's last `lines` lines (the cause of a failure). */
export function logsTailCommand(target: DockerTargetConfig, sudo: boolean, lines: number): string {
  const n = String(Math.max(1, Math.min(100000, Math.floor(lines))));
  if (target.kind === 'container')
    return `${docker(sudo, ['logs', '--timestamps', '--tail', n, '--', target.name])} 2>&1`;
  return `${composeContainerId(target, sudo)}; [ -n "$id" ] && ${docker(sudo, ['logs', '--timestamps', '--tail', n])} "$id" 2>&1`;
}

/**
 * The `die`, `oom`, `kill` and `stop` events of one container since its start, up to now, as
 * JSON lines: how a container removed on exit (`--rm`) ended, when `docker inspect` can no
 * longer say, and whether someone stopped it through Docker (`docker stop`, `docker kill`:
 * a `kill` event comes before the `die`) rather than it ending on its own.
 */
export function endEventsCommand(containerId: string, sinceEpochMs: number, sudo: boolean): string {
  if (!/^[0-9a-f]{12,64}$/.test(containerId)) throw new Error(`Invalid container id: ${JSON.stringify(containerId)}`);
  // From the run's start exactly: a restart's own stop and die events come just before it.
  const since = (Math.max(0, Math.floor(sinceEpochMs)) / 1000).toFixed(3);
  return `${docker(sudo, ['events', '--since', since, '--filter', `container=${containerId}`, '--filter', 'event=die', '--filter', 'event=oom', '--filter', 'event=kill', '--filter', 'event=stop', '--format', '{{json .}}'])} --until "$(date +%s.%N)" 2>&1`;
}
