/**
 * Builds the extension's own session (SSH transport + HTTP through the tunnel + watcher) for a
 * simulated GPU host, exactly as the extension does, without VS Code.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings, type HostKeyPolicy, type Settings } from '../../src/config';
import type { ServerSession } from '../../src/monitor/session';
import type { WatchOptions } from '../../src/monitor/watcher';
import { createSession, type SessionUi, type UnknownHostKey } from '../../src/sessionFactory';
import type { GpuHost } from '../gpu-host/harness';

export interface TestSession {
  readonly session: ServerSession;
  readonly settings: Settings;
  readonly knownHostsFile: string;
  readonly asked: UnknownHostKey[];
  readonly logLines: string[];
  dispose(): void;
}

export const FAST_WATCH: WatchOptions = {
  pollIntervalMs: 500,
  stallMs: 60_000,
  loadTimeoutMs: 120_000,
  unreachableTimeoutMs: 60_000,
};

export async function sessionForHost(
  host: GpuHost,
  opts: {
    policy?: HostKeyPolicy;
    knownHosts?: string;
    trust?: boolean;
    server?: Record<string, unknown>;
  } = {},
): Promise<TestSession> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-test-'));
  const knownHostsFile = path.join(dir, 'known_hosts');
  fs.writeFileSync(knownHostsFile, opts.knownHosts ?? `${host.knownHostsLine()}\n`);
  const result = parseSettings({
    servers: [
      {
        name: 'sim',
        host: host.sshHost,
        port: host.sshPort,
        username: host.username,
        identityFile: host.clientKeyPath,
        unit: host.unitName,
        url: host.serverUrl,
        ...opts.server,
      },
    ],
    knownHostsFile,
    hostKeyPolicy: opts.policy ?? 'strict',
  });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const asked: UnknownHostKey[] = [];
  const logLines: string[] = [];
  const ui: SessionUi = {
    trustUnknownHostKey: async (key) => {
      asked.push(key);
      return opts.trust ?? false;
    },
    requestPassphrase: async () => undefined,
  };
  const session = await createSession(result.settings.servers[0], result.settings, ui, (level, message) =>
    logLines.push(`${level}: ${message}`),
  );
  return {
    session,
    settings: result.settings,
    knownHostsFile,
    asked,
    logLines,
    dispose: () => {
      session.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
