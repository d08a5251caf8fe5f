import type { GpuHost } from './harness';

/** The `kimiService.servers` entry for a simulated host. */
export function serverEntry(host: GpuHost, name = 'sim'): Record<string, unknown> {
  return {
    name,
    host: host.sshHost,
    port: host.sshPort,
    username: host.username,
    identityFile: host.clientKeyPath,
    unit: host.unitName,
    url: host.serverUrl,
  };
}
