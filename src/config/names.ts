/**
 * What the settings accept as a systemd unit, a container, a compose service or a remote path:
 * pure checks, shared by config.ts (which reports a bad entry) and the layers that build
 * commands from these names (transport/shell.ts, target/).
 */

const UNIT_CHARS = /^[A-Za-z0-9:_.\\@-]+$/;

/** A systemd unit name, with or without `.service` (other unit types are not ours). */
export function isValidUnitName(s: string): boolean {
  if (typeof s !== 'string' || s.length === 0 || s.length > 256) return false;
  if (!UNIT_CHARS.test(s)) return false;
  // systemd refuses names that start with a dash or are only a suffix; a leading "-" would also read as a flag.
  if (s.startsWith('-') || s.startsWith('.')) return false;
  const stem = s.endsWith('.service') ? s.slice(0, -'.service'.length) : s;
  return stem.length > 0 && !stem.startsWith('.');
}

/** `sglang-k26` -> `sglang-k26.service`; throws on an invalid name. */
export function normalizeUnit(s: string): string {
  const trimmed = typeof s === 'string' ? s.trim() : s;
  if (!isValidUnitName(trimmed)) throw new Error(`Invalid systemd unit name: ${JSON.stringify(s)}`);
  const withSuffix = trimmed.endsWith('.service') ? trimmed : `${trimmed}.service`;
  if (withSuffix.length > 256) throw new Error(`Invalid systemd unit name (too long): ${JSON.stringify(s)}`);
  return withSuffix;
}

/** An absolute remote path without NUL or line breaks (which break journal/unit-file parsing). */
export function isValidAbsolutePath(p: string): boolean {
  return typeof p === 'string' && p.startsWith('/') && p.length <= 4096 && !/[\0\r\n]/.test(p);
}

/** Docker's own rule for container names (daemon/names.go: validContainerNamePattern). */
export const DOCKER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
/** Compose service names as the compose spec accepts them (keys of `services:`), shell-safe. */
export const COMPOSE_SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;

export type DockerTargetConfig =
  | { readonly kind: 'container'; readonly name: string; readonly label: string }
  | { readonly kind: 'compose'; readonly file: string; readonly service: string; readonly label: string };

/** A Slurm job name the target finds the job by (`squeue -n`): shell-safe, no comma (squeue's list separator). */
export const SLURM_JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** The batch script a restart submits: absolute, or under the login user's home (`~/...`). */
export function isValidScriptPath(p: string): boolean {
  if (typeof p !== 'string' || p.length > 4096 || /[\0\r\n]/.test(p)) return false;
  return p.startsWith('/') || (p.startsWith('~/') && p.length > 2);
}

/** A server that runs as a batch job: its name (with the login user, it finds the job) and the script a restart submits. */
export interface SlurmTargetConfig {
  readonly job: string;
  readonly script: string;
  readonly label: string;
}
