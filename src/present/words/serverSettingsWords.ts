/**
 * Why an entry of kimiService.servers is refused. `at` names the entry (`kimiService.servers[0]`,
 * or a node of it); a quoted value is already made printable.
 */
import * as l10n from '@vscode/l10n';

export function settingMissing(name: string): string {
  return l10n.t('{0} is missing.', name);
}

export function settingUnknownField(name: string): string {
  return l10n.t('{0} is not a known field.', name);
}

/** `allowed`: the allowed values, each as JSON, joined. */
export function settingNotOneOf(name: string, allowed: string): string {
  return l10n.t('{0} must be one of {1}.', name, allowed);
}

/** `said`: the schema validator's words, or undefined. */
export function settingInvalid(name: string, said: string | undefined): string {
  return said !== undefined ? l10n.t('{0} {1}.', name, said) : l10n.t('{0} is invalid.', name);
}

export function hostMissing(at: string): string {
  return l10n.t('{0}.host is missing (or give "nodes" for a multi-node server).', at);
}

export function unitMissing(at: string): string {
  return l10n.t(
    '{0}.unit is missing: give "unit" (systemd), "container" (Docker), "compose" ({ "file", "service" }), "slurm" ({ "job", "script" }) or "nodes" (multi-node).',
    at,
  );
}

/** `field`: name, identityFile ... */
export function fieldHasControl(at: string, field: string): string {
  return l10n.t('{0}.{1} must not contain control characters.', at, field);
}

/** `problem`: what is wrong with the url (parseServerUrl's words). */
export function urlProblem(at: string, problem: string): string {
  return l10n.t('{0}.url {1}', at, problem);
}

export function notAHost(at: string, host: string): string {
  return l10n.t('{0}.host "{1}" is not a host name, an address, a ~/.ssh/config alias or "local".', at, host);
}

export function notAUnitName(at: string, unit: string): string {
  return l10n.t('{0}.unit "{1}" is not a valid systemd unit name (letters, digits and : _ . @ - only).', at, unit);
}

export function notAUserName(at: string, user: string): string {
  return l10n.t('{0}.username "{1}" is not a valid user name.', at, user);
}

export function fieldBesideNodes(at: string, field: string): string {
  return l10n.t('{0}.{1} must not be set when "nodes" is: each node has its own (node rank 0 is nodes[0]).', at, field);
}

export function dockerBesideNodes(at: string, field: string): string {
  return l10n.t(
    '{0}.{1}: the nodes of a multi-node server run systemd units ("nodes[].unit"); Docker is for single-host servers.',
    at,
    field,
  );
}

export function sameNodeTwice(nodeAt: string, twin: number): string {
  return l10n.t('{0} is the same host and unit as nodes[{1}]: each node rank runs its own unit.', nodeAt, twin);
}

/** `given`: the kinds given, each quoted, joined. */
export function severalKinds(at: string, given: string): string {
  return l10n.t('{0} gives {1}: give only one of "unit", "container", "compose" and "slurm".', at, given);
}

/** Two things given together: '"unit" and "container"'. */
export function bothOf(first: string, second: string): string {
  return l10n.t('{0} and {1}', first, second);
}

export function notAContainerName(at: string, name: string): string {
  return l10n.t(
    '{0}.container "{1}" is not a Docker container name (letters, digits and _ . - only, not starting with . _ or -).',
    at,
    name,
  );
}

export function composeFileNotAbsolute(at: string, file: string): string {
  return l10n.t('{0}.compose.file "{1}" must be an absolute path on the GPU host (the compose file).', at, file);
}

export function notAComposeService(at: string, service: string): string {
  return l10n.t(
    '{0}.compose.service "{1}" is not a compose service name (letters, digits and _ . - only).',
    at,
    service,
  );
}

export function notAJobName(at: string, job: string): string {
  return l10n.t(
    '{0}.slurm.job "{1}" is not a job name this extension accepts (letters, digits and _ . - only).',
    at,
    job,
  );
}

export function scriptNotAbsolute(at: string, script: string): string {
  return l10n.t(
    '{0}.slurm.script "{1}" must be an absolute path or one under ~/ on the login node (the batch script).',
    at,
    script,
  );
}

/** A url naming `{node}` on an entry that has no job. */
export function nodeOutsideSlurm(url: string, placeholder: string): string {
  return l10n.t(
    '"{0}" names {1}, the node of a Slurm job: only a "slurm" entry has one (give the server\'s host here).',
    url,
    placeholder,
  );
}

export function nodeNotWholeHost(url: string, placeholder: string): string {
  return l10n.t('"{0}": {1} must be the url\'s whole host, e.g. http://{1}:30001.', url, placeholder);
}

export function notAUrl(url: string, example: string): string {
  return l10n.t('"{0}" is not a URL (expected e.g. {1}).', url, example);
}

export function urlNotHttp(): string {
  return l10n.t('must start with http:// (the server is reached through the SSH tunnel).');
}

export function urlHasCredentials(): string {
  return l10n.t('must not contain a user name or password.');
}
