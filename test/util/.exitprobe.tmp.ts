import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGpuHost } from '../gpu-host/harness';
import { SshTransport } from '../../src/remote/sshTransport';
(async () => {
  const host = await startGpuHost({ shards: 2 });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exitprobe-'));
  const kh = path.join(tmp, 'kh');
  fs.writeFileSync(kh, host.knownHostsLine() + '\n');
  const t = new SshTransport({ target: { alias: 'g', hostName: host.sshHost, port: host.sshPort, username: host.username, identityFiles: [host.clientKeyPath], identityFilesConfigured: true, jumps: [] }, knownHostsFile: kh, agentSocket: '', decideUnknownHostKey: async () => 'reject', requestPassphrase: async () => undefined } as any);
  let nulls = 0;
  const N = Number(process.argv[2] ?? 200);
  for (let i = 0; i < N; i++) {
    const r = await t.exec('echo hello; echo oops >&2; exit 3');
    if (r.code !== 3) { nulls++; console.log(i, JSON.stringify(r)); }
  }
  console.log(`nulls ${nulls}/${N}`);
  const log = host.sshdLog().filter((l) => /child|exit|close/i.test(l)).slice(-20);
  console.log(log.join('\n'));
  t.dispose();
  await host.stop();
  process.exit(0);
})();
