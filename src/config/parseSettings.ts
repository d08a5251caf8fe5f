/** `kimiService.*` settings validated into Settings: the shape by schema, then each server entry and the names across them. */
import type { HostKeyPolicy, RawSettings, SshClientSetting, ServerProfile, SettingsResult } from './config';
import { describeShapeError, shapeValidator } from './settingsSchema';
import { validateServer } from './serverValidation';
import { CONTROL, printable } from './text';
import { activeServerUnknown, knownHostsFileControl, serverNameTwice } from '../present/words/settingsWords';

function seconds(raw: unknown, fallback: number): number {
  return typeof raw === 'number' ? raw : fallback;
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
    if (names.has(server.name)) errors.push(serverNameTwice(printable(server.name)));
    names.add(server.name);
  }
  const activeServer = typeof raw.activeServer === 'string' && raw.activeServer !== '' ? raw.activeServer : undefined;
  if (activeServer !== undefined && servers.length > 0 && !names.has(activeServer)) {
    errors.push(activeServerUnknown(printable(activeServer)));
  }
  const knownHostsFile = typeof raw.knownHostsFile === 'string' ? raw.knownHostsFile : '~/.ssh/known_hosts';
  if (CONTROL.test(knownHostsFile)) errors.push(knownHostsFileControl());
  if (errors.length > 0) return { ok: false, errors };

  return {
    ok: true,
    settings: {
      servers,
      activeServer,
      knownHostsFile,
      hostKeyPolicy: (raw.hostKeyPolicy as HostKeyPolicy | undefined) ?? 'ask',
      sshClient: (raw['ssh.client'] as SshClientSetting | undefined) ?? 'auto',
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
