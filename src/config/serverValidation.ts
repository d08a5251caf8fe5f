/** One entry of `kimiService.servers` checked and made a ServerProfile: systemd, Docker or multi-node. */
import {
  COMPOSE_SERVICE_NAME,
  DOCKER_NAME,
  isValidAbsolutePath,
  isValidScriptPath,
  isValidUnitName,
  normalizeUnit,
  SLURM_JOB_NAME,
  type DockerTargetConfig,
  type SlurmTargetConfig,
} from './names';
import type { NodeProfile, ServerProfile, SshClientSetting } from './config';
import { CONTROL, printable } from './text';
import { hasNodePlaceholder, NODE_PLACEHOLDER } from './nodeUrl';

export const DEFAULT_URL = 'http://127.0.0.1:30001';

// Names that reach a remote shell or a connection: printable, no shell metacharacters.
const HOST_PATTERN = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]+)$/;
const USER_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*\$?$/;

/** Where a multi-node entry's connection fields live: in `nodes`, never at the top level. */
const NODE_FIELDS = ['host', 'port', 'username', 'identityFile', 'unit'] as const;

export function validateServer(
  raw: Record<string, unknown>,
  index: number,
  errors: string[],
): ServerProfile | undefined {
  const at = `kimiService.servers[${index}]`;
  if (Array.isArray(raw.nodes)) return validateMultiNodeServer(raw, raw.nodes as Record<string, unknown>[], at, errors);
  const before0 = errors.length;
  if (raw.host === undefined) errors.push(`${at}.host is missing (or give "nodes" for a multi-node server).`);
  if (raw.unit === undefined && raw.container === undefined && raw.compose === undefined && raw.slurm === undefined) {
    errors.push(
      `${at}.unit is missing: give "unit" (systemd), "container" (Docker), "compose" ({ "file", "service" }), "slurm" ({ "job", "script" }) or "nodes" (multi-node).`,
    );
  }
  if (errors.length > before0) return undefined;
  const name = String(raw.name);
  const hostText = String(raw.host);
  const unitText = String(raw.unit);
  const isLocal = hostText === 'local';
  const before = errors.length;
  const docker = validateDockerTarget(raw, at, errors);
  const slurm = validateSlurmTarget(raw, at, errors);

  if (CONTROL.test(name)) errors.push(`${at}.name must not contain control characters.`);
  errors.push(...connectionErrors(raw, at));
  const url = parseServerUrl(typeof raw.url === 'string' ? raw.url : DEFAULT_URL, slurm !== undefined);
  if (typeof url === 'string') errors.push(`${at}.url ${url}`);
  if (errors.length > before || typeof url === 'string') return undefined;

  return {
    name,
    host: isLocal ? undefined : hostText,
    port: typeof raw.port === 'number' ? raw.port : undefined,
    username: typeof raw.username === 'string' ? raw.username : undefined,
    identityFile: typeof raw.identityFile === 'string' ? raw.identityFile : undefined,
    unit: docker ? docker.label : slurm ? slurm.label : normalizeUnit(unitText),
    ...(docker ? { docker } : {}),
    ...(slurm ? { slurm } : {}),
    url: url.href,
    urlHost: url.host,
    urlPort: url.port,
    sudo: raw.sudo === true,
    ...sshClientOf(raw),
  };
}

/** The entry's `ssh.client` (its shape is checked by the schema), absent when not set. */
function sshClientOf(raw: Record<string, unknown>): { sshClient?: SshClientSetting } {
  const client = (raw.ssh as { client?: SshClientSetting } | undefined)?.client;
  return client !== undefined ? { sshClient: client } : {};
}

/** Checks one connection (host, user, key, unit) of an entry or of a node; pushes errors. */
function connectionErrors(raw: Record<string, unknown>, at: string): string[] {
  const errors: string[] = [];
  const hostText = String(raw.host);
  const unitText = String(raw.unit);
  if (hostText !== 'local' && !HOST_PATTERN.test(hostText)) {
    errors.push(
      `${at}.host "${printable(hostText)}" is not a host name, an address, a ~/.ssh/config alias or "local".`,
    );
  }
  if (raw.unit !== undefined && !isValidUnitName(unitText)) {
    errors.push(
      `${at}.unit "${printable(unitText)}" is not a valid systemd unit name (letters, digits and : _ . @ - only).`,
    );
  }
  if (typeof raw.username === 'string' && !USER_PATTERN.test(raw.username)) {
    errors.push(`${at}.username "${printable(raw.username)}" is not a valid user name.`);
  }
  if (typeof raw.identityFile === 'string' && CONTROL.test(raw.identityFile)) {
    errors.push(`${at}.identityFile must not contain control characters.`);
  }
  return errors;
}

/**
 * A multi-node entry: `nodes` (rank 0 first) replaces the top-level host, port, username,
 * identityFile and unit, which must be absent (one place for each fact); the profile's own
 * connection fields are rank 0's, so everything that talks to "the server" talks to rank 0.
 */
function validateMultiNodeServer(
  raw: Record<string, unknown>,
  rawNodes: Record<string, unknown>[],
  at: string,
  errors: string[],
): ServerProfile | undefined {
  const before = errors.length;
  const name = String(raw.name);
  if (CONTROL.test(name)) errors.push(`${at}.name must not contain control characters.`);
  for (const field of NODE_FIELDS) {
    if (raw[field] !== undefined)
      errors.push(`${at}.${field} must not be set when "nodes" is: each node has its own (node rank 0 is nodes[0]).`);
  }
  for (const field of ['container', 'compose', 'slurm']) {
    if (raw[field] !== undefined)
      errors.push(
        `${at}.${field}: the nodes of a multi-node server run systemd units ("nodes[].unit"); Docker is for single-host servers.`,
      );
  }
  const nodes: NodeProfile[] = [];
  const seen = new Map<string, number>();
  rawNodes.forEach((node, rank) => {
    const nodeAt = `${at}.nodes[${rank}]`;
    const problems = connectionErrors(node, nodeAt);
    errors.push(...problems);
    if (problems.length > 0) return;
    const host = node.host === 'local' ? undefined : String(node.host);
    const unit = normalizeUnit(String(node.unit));
    const key = `${host ?? 'local'}:${typeof node.port === 'number' ? node.port : ''}:${unit}`;
    const twin = seen.get(key);
    if (twin !== undefined)
      errors.push(`${nodeAt} is the same host and unit as nodes[${twin}]: each node rank runs its own unit.`);
    seen.set(key, rank);
    nodes.push({
      label: `node ${rank} (${host ?? 'local'})`,
      rank,
      host,
      port: typeof node.port === 'number' ? node.port : undefined,
      username: typeof node.username === 'string' ? node.username : undefined,
      identityFile: typeof node.identityFile === 'string' ? node.identityFile : undefined,
      unit,
    });
  });
  const url = parseServerUrl(typeof raw.url === 'string' ? raw.url : DEFAULT_URL);
  if (typeof url === 'string') errors.push(`${at}.url ${url}`);
  const rank0 = nodes[0];
  if (errors.length > before || typeof url === 'string' || rank0 === undefined) return undefined;
  return {
    name,
    host: rank0.host,
    port: rank0.port,
    username: rank0.username,
    identityFile: rank0.identityFile,
    unit: rank0.unit,
    url: url.href,
    urlHost: url.host,
    urlPort: url.port,
    sudo: raw.sudo === true,
    ...sshClientOf(raw),
    nodes,
  };
}

/** `container` or `compose` of one entry, checked; undefined (and no error) when neither is given. */
function validateDockerTarget(
  raw: Record<string, unknown>,
  at: string,
  errors: string[],
): DockerTargetConfig | undefined {
  const given = ['unit', 'container', 'compose', 'slurm'].filter((k) => raw[k] !== undefined);
  if (given.length > 1) {
    errors.push(
      `${at} gives ${given.map((k) => `"${k}"`).join(' and ')}: give only one of "unit", "container", "compose" and "slurm".`,
    );
    return undefined;
  }
  if (typeof raw.container === 'string') {
    if (!DOCKER_NAME.test(raw.container)) {
      errors.push(
        `${at}.container "${printable(raw.container)}" is not a Docker container name (letters, digits and _ . - only, not starting with . _ or -).`,
      );
      return undefined;
    }
    return { kind: 'container', name: raw.container, label: `container ${raw.container}` };
  }
  const compose = raw.compose as { file?: unknown; service?: unknown } | undefined;
  if (compose === undefined) return undefined;
  const file = String(compose.file);
  const service = String(compose.service);
  const before = errors.length;
  if (!isValidAbsolutePath(file))
    errors.push(`${at}.compose.file "${printable(file)}" must be an absolute path on the GPU host (the compose file).`);
  if (!COMPOSE_SERVICE_NAME.test(service))
    errors.push(
      `${at}.compose.service "${printable(service)}" is not a compose service name (letters, digits and _ . - only).`,
    );
  if (errors.length > before) return undefined;
  return { kind: 'compose', file, service, label: `compose service ${service}` };
}

/** `slurm` of one entry (a batch job found by its name, and the script a restart submits), checked. */
function validateSlurmTarget(
  raw: Record<string, unknown>,
  at: string,
  errors: string[],
): SlurmTargetConfig | undefined {
  const slurm = raw.slurm as { job?: unknown; script?: unknown } | undefined;
  if (slurm === undefined || ['unit', 'container', 'compose'].some((k) => raw[k] !== undefined)) return undefined;
  const job = String(slurm.job);
  const script = String(slurm.script);
  const before = errors.length;
  if (!SLURM_JOB_NAME.test(job))
    errors.push(
      `${at}.slurm.job "${printable(job)}" is not a job name this extension accepts (letters, digits and _ . - only).`,
    );
  if (!isValidScriptPath(script))
    errors.push(
      `${at}.slurm.script "${printable(script)}" must be an absolute path or one under ~/ on the login node (the batch script).`,
    );
  if (errors.length > before) return undefined;
  return { job, script, label: `Slurm job ${job}` };
}

/** `{node}` (the job's node) is taken as the url's whole host, and only for a Slurm job. */
function parseServerUrl(text: string, nodeAllowed = false): { href: string; host: string; port: number } | string {
  if (hasNodePlaceholder(text.toLowerCase())) {
    if (!nodeAllowed)
      return `"${printable(text)}" names ${NODE_PLACEHOLDER}, the node of a Slurm job: only a "slurm" entry has one (give the server's host here).`;
    if (!/^http:\/\/\{node\}(?::\d+)?(?:\/|$)/i.test(text))
      return `"${printable(text)}": ${NODE_PLACEHOLDER} must be the url's whole host, e.g. http://${NODE_PLACEHOLDER}:30001.`;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${printable(text)}" is not a URL (expected e.g. ${DEFAULT_URL}).`;
  }
  if (url.protocol !== 'http:') return `must start with http:// (the server is reached through the SSH tunnel).`;
  if (url.username || url.password) return 'must not contain a user name or password.';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : 80;
  return { href: `http://${url.host}${url.pathname.replace(/\/+$/, '')}`, host, port };
}
