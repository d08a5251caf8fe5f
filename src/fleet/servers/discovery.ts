/**
 * Finding a host's model servers, a fleet verb for every front ("Kimi Service: Add server", `kimi-service
 * discover`): one connection under the usual host-key policy, one remote command per target kind that
 * lists its servers launching SGLang or vLLM, and the `kimiService.servers` entry for the one picked.
 */
import { parseSettings } from '../../config/parseSettings';
import { printable } from '../../config/text';
import type { HostKeyPolicy, Settings } from '../../config/config';
import { proposeServerName, serverNameProblem, type DiscoveredUnit } from '../../target/discovered';
import { HOST_DISCOVERIES, targetIo } from '../../target/target';
import { engineLabels, serverCommandForms } from '../../engine/engine';
import { createSession, type SessionUi } from '../sessions/sessionFactory';
import { loginUid, serverEntry, type TypedHost } from './serverEntry';
import type { LogLevel } from '../../monitor/watch/watchTypes';
import {
  cannotListUnits,
  cannotReachHost,
  entryInvalid,
  listingFailedLine,
  nothingFound,
} from '../../present/words/fleetWords';

const DISCOVERY_TIMEOUT_MS = 30_000;

export class DiscoveryError extends Error {
  constructor(
    message: string,
    readonly kind: 'bad-host' | 'listing-failed' | 'bad-entry' | 'name-taken',
  ) {
    super(message);
    this.name = 'DiscoveryError';
  }
}

export interface Discovery {
  readonly host: TypedHost;
  readonly units: readonly DiscoveredUnit[];
  /** The login's uid on the host (restarts need sudo when it is not root). */
  readonly uid: number | undefined;
}

/** What the connection takes from the user's settings. */
export interface DiscoverySettings {
  readonly knownHostsFile: string;
  readonly hostKeyPolicy: HostKeyPolicy;
}

/**
 * Lists the host's units that launch a model server. Throws TransportError when the host refuses
 * or cannot be reached (the caller words it as every refusal), DiscoveryError when the listing fails.
 */
export async function discoverUnits(
  host: TypedHost,
  settings: DiscoverySettings,
  ui: SessionUi,
  log: (level: LogLevel, message: string) => void,
): Promise<Discovery> {
  const probe = parseSettings({
    servers: [{ name: host.host, ...host, unit: 'kimi-add-server-probe.service' }],
    knownHostsFile: settings.knownHostsFile,
    hostKeyPolicy: settings.hostKeyPolicy,
  });
  if (!probe.ok) throw new DiscoveryError(cannotReachHost(printable(host.host), probe.errors[0]), 'bad-host');
  const session = await createSession(probe.settings.servers[0]!, probe.settings as Settings, ui, log);
  const units: DiscoveredUnit[] = [];
  let uid: number | undefined;
  try {
    await session.transport.connect();
    // Each kind that can list a host's servers, with its own command (the first line says the login's uid).
    const io = targetIo(session.transport, DISCOVERY_TIMEOUT_MS);
    for (const discovery of HOST_DISCOVERIES) {
      const found = await io.exec(discovery.command);
      const listed = discovery.parse(found.stdout);
      if (listed.length === 0 && found.code !== 0) {
        const why = found.stderr.trim().split('\n').slice(-1)[0] || `exit status ${found.code}`;
        log('error', listingFailedLine(host.host, found.code, found.stderr.trim()));
        throw new DiscoveryError(cannotListUnits(host.host, why), 'listing-failed');
      }
      units.push(...listed);
      uid ??= loginUid(found.stdout);
    }
  } finally {
    session.dispose();
  }
  return { host, units, uid };
}

/** Why a discovery found nothing to add (no unit or job of any kind launches a model server). */
export function nothingFoundMessage(host: string): string {
  const kinds = HOST_DISCOVERIES.map((d) => d.what).join(' or ');
  const where = HOST_DISCOVERIES.map((d) => d.where).join(' or ');
  return nothingFound(host, kinds, engineLabels(), serverCommandForms().join(', '), where);
}

/**
 * The `kimiService.servers` entry for `unit` under `name` (proposed when not given), checked against the
 * settings schema and the names taken.
 */
export function entryFor(
  discovery: Discovery,
  unit: DiscoveredUnit,
  taken: readonly string[],
  name: string = proposeServerName(discovery.host.host, unit.unit, taken),
): Record<string, unknown> {
  const problem = serverNameProblem(name, taken);
  if (problem) throw new DiscoveryError(problem, 'name-taken');
  const entry = serverEntry(name, discovery.host, unit, discovery.uid);
  const valid = parseSettings({ servers: [entry] });
  if (!valid.ok) throw new DiscoveryError(entryInvalid(printable(name), valid.errors[0]), 'bad-entry');
  return entry;
}
