import type { ErrorObject, ValidateFunction } from 'ajv';
import {
  COMPOSE_SERVICE_NAME,
  DOCKER_NAME,
  isValidAbsolutePath,
  isValidUnitName,
  normalizeUnit,
  type DockerTargetConfig,
} from './names';
import { SECTION } from './namespace';

export type HostKeyPolicy = 'ask' | 'strict' | 'accept-new';

/** One GPU host, validated. `unit` always ends in `.service`. */
export interface ServerProfile {
  readonly name: string;
  /** Host name, address or ~/.ssh/config alias; undefined for `host: "local"`. */
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly username: string | undefined;
  readonly identityFile: string | undefined;
  /** The systemd unit; for a Docker target, a label naming the container or compose service. */
  readonly unit: string;
  /** Set when the server is a Docker container or compose service rather than a unit. */
  readonly docker?: DockerTargetConfig;
  /** The server's address as seen from the GPU host. */
  readonly url: string;
  readonly urlHost: string;
  readonly urlPort: number;
  readonly sudo: boolean;
  /**
   * A multi-node server: every node, node rank 0 first (it serves `url`). `host`, `port`,
   * `username`, `identityFile` and `unit` above are then rank 0's.
   */
  readonly nodes?: readonly NodeProfile[];
}

/** One node of a multi-node server (its own SSH connection, its own unit). */
export interface NodeProfile {
  /** "node 0 (gpu-a)": how messages name it. */
  readonly label: string;
  readonly rank: number;
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly username: string | undefined;
  readonly identityFile: string | undefined;
  readonly unit: string;
}

export interface Settings {
  readonly servers: readonly ServerProfile[];
  readonly activeServer: string | undefined;
  readonly knownHostsFile: string;
  readonly hostKeyPolicy: HostKeyPolicy;
  readonly confirmRestart: boolean;
  readonly pollIntervalMs: number;
  readonly loadTimeoutMs: number;
  readonly stallMs: number;
  readonly unreachableTimeoutMs: number;
  readonly notifyWhenReady: boolean;
  readonly verifyParsersWhenReady: boolean;
  /** Keep watching after ready (journal, /health every healthIntervalMs, the unit now and then). */
  readonly watchAfterReady: boolean;
  readonly healthIntervalMs: number;
}

/** The raw values of the `kimiService.*` settings, as VS Code returns them. */
export type RawSettings = Readonly<Record<string, unknown>>;

export type SettingsResult =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly errors: readonly string[] };

const DEFAULT_URL = 'http://127.0.0.1:30001';

/** Where one server (or one node of a multi-node server) runs, and how it is reached. */
const connectionProperties = {
  host: { type: 'string', minLength: 1, maxLength: 253 },
  port: { type: 'integer', minimum: 1, maximum: 65535 },
  username: { type: 'string', minLength: 1, maxLength: 64 },
  identityFile: { type: 'string', minLength: 1, maxLength: 4096 },
  unit: { type: 'string', minLength: 1, maxLength: 256 },
} as const;

const nodeSchema = {
  type: 'object',
  required: ['host', 'unit'],
  additionalProperties: false,
  properties: connectionProperties,
} as const;

/** host and unit (or container, compose) are required unless `nodes` is given (checked in validateServer). */
const serverSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    ...connectionProperties,
    container: { type: 'string', minLength: 1, maxLength: 128 },
    compose: {
      type: 'object',
      required: ['file', 'service'],
      additionalProperties: false,
      properties: {
        file: { type: 'string', minLength: 1, maxLength: 4096 },
        service: { type: 'string', minLength: 1, maxLength: 128 },
      },
    },
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    sudo: { type: 'boolean' },
    nodes: { type: 'array', items: nodeSchema, minItems: 2, maxItems: 64 },
  },
} as const;

const settingsSchema = {
  type: 'object',
  properties: {
    servers: { type: 'array', items: serverSchema, maxItems: 100 },
    activeServer: { type: 'string', maxLength: 64 },
    knownHostsFile: { type: 'string', minLength: 1, maxLength: 4096 },
    hostKeyPolicy: { enum: ['ask', 'strict', 'accept-new'] },
    confirmRestart: { type: 'boolean' },
    pollIntervalSeconds: { type: 'number', minimum: 0.25, maximum: 60 },
    loadTimeoutMinutes: { type: 'number', minimum: 1, maximum: 600 },
    stallSeconds: { type: 'number', minimum: 10, maximum: 3600 },
    unreachableTimeoutMinutes: { type: 'number', minimum: 0.1, maximum: 120 },
    notifyWhenReady: { type: 'boolean' },
    verifyParsersWhenReady: { type: 'boolean' },
    watchAfterReady: { type: 'boolean' },
    healthIntervalSeconds: { type: 'number', minimum: 5, maximum: 3600 },
  },
} as const;

let validateShape: ValidateFunction | undefined;

/** Ajv loads and compiles on first use, not while the extension activates. */
function shapeValidator(): ValidateFunction {
  if (!validateShape) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { default: Ajv } = require('ajv') as typeof import('ajv');
    validateShape = new Ajv({ allErrors: true, validateSchema: false, meta: false, code: { optimize: false } }).compile(
      settingsSchema,
    );
  }
  return validateShape;
}

// Names that reach a remote shell or a connection: printable, no shell metacharacters.
const HOST_PATTERN = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]+)$/;
const USER_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*\$?$/;
// A control character, including newline: never valid in a path or a name.
const CONTROL = /[\u0000-\u001f\u007f]/;

function settingName(error: ErrorObject): string {
  const path = error.instancePath.split('/').filter(Boolean);
  let name = SECTION;
  for (const part of path) name += /^\d+$/.test(part) ? `[${part}]` : `.${part}`;
  if (error.keyword === 'required') name += `.${String(error.params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') name += `.${String(error.params.additionalProperty)}`;
  return name;
}

function describeShapeError(error: ErrorObject): string {
  const name = settingName(error);
  switch (error.keyword) {
    case 'required':
      return `${name} is missing.`;
    case 'additionalProperties':
      return `${name} is not a known field.`;
    case 'enum':
      return `${name} must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    default:
      return `${name} ${error.message ?? 'is invalid'}.`;
  }
}

function seconds(raw: unknown, fallback: number): number {
  return typeof raw === 'number' ? raw : fallback;
}

/** Where a multi-node entry's connection fields live: in `nodes`, never at the top level. */
const NODE_FIELDS = ['host', 'port', 'username', 'identityFile', 'unit'] as const;

function validateServer(raw: Record<string, unknown>, index: number, errors: string[]): ServerProfile | undefined {
  const at = `kimiService.servers[${index}]`;
  if (Array.isArray(raw.nodes)) return validateMultiNodeServer(raw, raw.nodes as Record<string, unknown>[], at, errors);
  const before0 = errors.length;
  if (raw.host === undefined) errors.push(`${at}.host is missing (or give "nodes" for a multi-node server).`);
  if (raw.unit === undefined && raw.container === undefined && raw.compose === undefined) {
    errors.push(
      `${at}.unit is missing: give "unit" (systemd), "container" (Docker), "compose" ({ "file", "service" }) or "nodes" (multi-node).`,
    );
  }
  if (errors.length > before0) return undefined;
  const name = String(raw.name);
  const hostText = String(raw.host);
  const unitText = String(raw.unit);
  const isLocal = hostText === 'local';
  const before = errors.length;
  const docker = validateDockerTarget(raw, at, errors);

  if (CONTROL.test(name)) errors.push(`${at}.name must not contain control characters.`);
  errors.push(...connectionErrors(raw, at));
  const url = parseServerUrl(typeof raw.url === 'string' ? raw.url : DEFAULT_URL);
  if (typeof url === 'string') errors.push(`${at}.url ${url}`);
  if (errors.length > before || typeof url === 'string') return undefined;

  return {
    name,
    host: isLocal ? undefined : hostText,
    port: typeof raw.port === 'number' ? raw.port : undefined,
    username: typeof raw.username === 'string' ? raw.username : undefined,
    identityFile: typeof raw.identityFile === 'string' ? raw.identityFile : undefined,
    unit: docker ? docker.label : normalizeUnit(unitText),
    ...(docker ? { docker } : {}),
    url: url.href,
    urlHost: url.host,
    urlPort: url.port,
    sudo: raw.sudo === true,
  };
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
  for (const field of ['container', 'compose']) {
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
    nodes,
  };
}

/** `container` or `compose` of one entry, checked; undefined (and no error) when neither is given. */
function validateDockerTarget(
  raw: Record<string, unknown>,
  at: string,
  errors: string[],
): DockerTargetConfig | undefined {
  const given = ['unit', 'container', 'compose'].filter((k) => raw[k] !== undefined);
  if (given.length > 1) {
    errors.push(
      `${at} gives ${given.map((k) => `"${k}"`).join(' and ')}: give only one of "unit", "container" and "compose".`,
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

function parseServerUrl(text: string): { href: string; host: string; port: number } | string {
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

/** Shows a bad value in a message without letting it break the message. */
export function printable(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 77)}...` : clean;
}

/** Validates the `kimiService.*` settings. Every error names the setting it is about. */
export function parseSettings(raw: RawSettings): SettingsResult {
  const validate = shapeValidator();
  if (!validate(raw)) {
    return { ok: false, errors: (validate.errors ?? []).map(describeShapeError) };
  }
  const errors: string[] = [];
  const servers: ServerProfile[] = [];
  const rawServers = (raw.servers as Record<string, unknown>[] | undefined) ?? [];
  rawServers.forEach((server, index) => {
    const profile = validateServer(server, index, errors);
    if (profile) servers.push(profile);
  });
  const names = new Set<string>();
  for (const server of servers) {
    if (names.has(server.name)) errors.push(`kimiService.servers: the name "${printable(server.name)}" is used twice.`);
    names.add(server.name);
  }
  const activeServer = typeof raw.activeServer === 'string' && raw.activeServer !== '' ? raw.activeServer : undefined;
  if (activeServer !== undefined && servers.length > 0 && !names.has(activeServer)) {
    errors.push(
      `kimiService.activeServer "${printable(activeServer)}" is not the name of any entry of kimiService.servers.`,
    );
  }
  const knownHostsFile = typeof raw.knownHostsFile === 'string' ? raw.knownHostsFile : '~/.ssh/known_hosts';
  if (CONTROL.test(knownHostsFile)) errors.push('kimiService.knownHostsFile must not contain control characters.');
  if (errors.length > 0) return { ok: false, errors };

  return {
    ok: true,
    settings: {
      servers,
      activeServer,
      knownHostsFile,
      hostKeyPolicy: (raw.hostKeyPolicy as HostKeyPolicy | undefined) ?? 'ask',
      confirmRestart: raw.confirmRestart !== false,
      pollIntervalMs: seconds(raw.pollIntervalSeconds, 2) * 1000,
      loadTimeoutMs: seconds(raw.loadTimeoutMinutes, 30) * 60_000,
      stallMs: seconds(raw.stallSeconds, 120) * 1000,
      unreachableTimeoutMs: seconds(raw.unreachableTimeoutMinutes, 5) * 60_000,
      notifyWhenReady: raw.notifyWhenReady !== false,
      verifyParsersWhenReady: raw.verifyParsersWhenReady !== false,
      watchAfterReady: raw.watchAfterReady !== false,
      healthIntervalMs: seconds(raw.healthIntervalSeconds, 30) * 1000,
    },
  };
}

/** Where a server runs, for messages: "gpu1", "this machine", or "every node (gpu-a, gpu-b)". */
export function serverHosts(server: ServerProfile): string {
  if (server.nodes) return `every node (${server.nodes.map((n) => n.host ?? 'this machine').join(', ')})`;
  return server.host ?? 'this machine';
}

/** The server the commands act on: `kimiService.activeServer`, else the first. */
export function activeProfile(settings: Settings): ServerProfile | undefined {
  return settings.servers.find((s) => s.name === settings.activeServer) ?? settings.servers[0];
}

/**
 * `host: "local"` runs systemctl on the machine the extension runs on. Installed on the UI side
 * of a remote window (Remote-SSH...), that is the user's laptop, not the GPU host: refuse, and
 * say what to do. `uiSideOfRemote` is the remote's name when the extension runs on the UI side.
 */
export function localHostRefusal(server: ServerProfile, uiSideOfRemote: string | undefined): string | undefined {
  const local = server.nodes ? server.nodes.some((n) => n.host === undefined) : server.host === undefined;
  if (!local || uiSideOfRemote === undefined) return undefined;
  return (
    `kimiService.servers "${server.name}" has host "local", but this window is connected to ${uiSideOfRemote} and the extension runs on your ` +
    `own machine (the UI side), where "local" is not the GPU host. Install Kimi Service in the remote ("Install in ${uiSideOfRemote}"), ` +
    'or give the GPU host\'s SSH name as "host".'
  );
}
