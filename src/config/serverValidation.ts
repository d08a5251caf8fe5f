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
import * as w from '../present/words/serverSettingsWords';
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
  if (raw.host === undefined) errors.push(w.hostMissing(at));
  if (raw.unit === undefined && raw.container === undefined && raw.compose === undefined && raw.slurm === undefined) {
    errors.push(w.unitMissing(at));
  }
  if (errors.length > before0) return undefined;
  const name = String(raw.name);
  const hostText = String(raw.host);
  const unitText = String(raw.unit);
  const isLocal = hostText === 'local';
  const before = errors.length;
  const docker = validateDockerTarget(raw, at, errors);
  const slurm = validateSlurmTarget(raw, at, errors);

  if (CONTROL.test(name)) errors.push(w.fieldHasControl(at, 'name'));
  errors.push(...connectionErrors(raw, at));
  const url = parseServerUrl(typeof raw.url === 'string' ? raw.url : DEFAULT_URL, slurm !== undefined);
  if (typeof url === 'string') errors.push(w.urlProblem(at, url));
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
    errors.push(w.notAHost(at, printable(hostText)));
  }
  if (raw.unit !== undefined && !isValidUnitName(unitText)) {
    errors.push(w.notAUnitName(at, printable(unitText)));
  }
  if (typeof raw.username === 'string' && !USER_PATTERN.test(raw.username)) {
    errors.push(w.notAUserName(at, printable(raw.username)));
  }
  if (typeof raw.identityFile === 'string' && CONTROL.test(raw.identityFile)) {
    errors.push(w.fieldHasControl(at, 'identityFile'));
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
  if (CONTROL.test(name)) errors.push(w.fieldHasControl(at, 'name'));
  for (const field of NODE_FIELDS) {
    if (raw[field] !== undefined) errors.push(w.fieldBesideNodes(at, field));
  }
  for (const field of ['container', 'compose', 'slurm']) {
    if (raw[field] !== undefined) errors.push(w.dockerBesideNodes(at, field));
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
    if (twin !== undefined) errors.push(w.sameNodeTwice(nodeAt, twin));
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
  if (typeof url === 'string') errors.push(w.urlProblem(at, url));
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
      w.severalKinds(
        at,
        given.map((k) => `"${k}"`).reduce((a, b) => w.bothOf(a, b)),
      ),
    );
    return undefined;
  }
  if (typeof raw.container === 'string') {
    if (!DOCKER_NAME.test(raw.container)) {
      errors.push(w.notAContainerName(at, printable(raw.container)));
      return undefined;
    }
    return { kind: 'container', name: raw.container, label: `container ${raw.container}` };
  }
  const compose = raw.compose as { file?: unknown; service?: unknown } | undefined;
  if (compose === undefined) return undefined;
  const file = String(compose.file);
  const service = String(compose.service);
  const before = errors.length;
  if (!isValidAbsolutePath(file)) errors.push(w.composeFileNotAbsolute(at, printable(file)));
  if (!COMPOSE_SERVICE_NAME.test(service)) errors.push(w.notAComposeService(at, printable(service)));
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
  if (!SLURM_JOB_NAME.test(job)) errors.push(w.notAJobName(at, printable(job)));
  if (!isValidScriptPath(script)) errors.push(w.scriptNotAbsolute(at, printable(script)));
  if (errors.length > before) return undefined;
  return { job, script, label: `Slurm job ${job}` };
}

/** `{node}` (the job's node) is taken as the url's whole host, and only for a Slurm job. */
function parseServerUrl(text: string, nodeAllowed = false): { href: string; host: string; port: number } | string {
  if (hasNodePlaceholder(text.toLowerCase())) {
    if (!nodeAllowed) return w.nodeOutsideSlurm(printable(text), NODE_PLACEHOLDER);
    if (!/^http:\/\/\{node\}(?::\d+)?(?:\/|$)/i.test(text))
      return w.nodeNotWholeHost(printable(text), NODE_PLACEHOLDER);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return w.notAUrl(printable(text), DEFAULT_URL);
  }
  if (url.protocol !== 'http:') return w.urlNotHttp();
  if (url.username || url.password) return w.urlHasCredentials();
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : 80;
  return { href: `http://${url.host}${url.pathname.replace(/\/+$/, '')}`, host, port };
}
