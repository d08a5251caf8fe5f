import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost } from '../gpu-host/harness';
import { serverEntry } from './simHost';
(async () => {
  const host = await startGpuHost({ shards: 8, shardBytes: 2 * 1024 * 1024, sim: { readMBps: 4, warmReadMBps: 4, coldFiles: 'all' } });
  const dir = '/tmp/play';
  fs.writeFileSync(path.join(dir, 'kh'), host.knownHostsLine() + '\n');
  fs.writeFileSync(path.join(dir, 's.json'), JSON.stringify({ servers: [serverEntry(host)], knownHostsFile: path.join(dir, 'kh'), hostKeyPolicy: 'strict', pollIntervalSeconds: 0.5 }));
  const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir + '/c', XDG_STATE_HOME: dir + '/s' };
  const run = (...a: string[]) => { const t = Date.now(); const r = spawnSync(process.execPath, ['dist/cli.js', ...a, '--config', path.join(dir, 's.json')], { env, encoding: 'utf8' }); console.log(`$ kimi-service ${a.join(' ')}  -> exit ${r.status} (${Date.now() - t} ms)\n${r.stdout}${r.stderr ? 'STDERR: ' + r.stderr : ''}`); };
  for (const a of process.argv.slice(2)) {
    if (a.startsWith('stop:')) { await host.setStopDelay(Number(a.slice(5))); continue; }
    if (a.startsWith('log')) { if (a === 'log') { console.log((await host.execLog()).slice(-25).join('\n')); continue; } }
    if (a.startsWith('sleep:')) { await new Promise((r) => setTimeout(r, Number(a.slice(6)))); continue; }
    if (a.startsWith('sim:')) { await host.configureSimulator(JSON.parse(a.slice(4))); continue; }
    run(...a.split(' '));
  }
  await host.stop();
})();
