/**
 * Start a simulated GPU host and keep it up until SIGINT/SIGTERM (for the demo and manual use).
 *   npx tsx test/gpu-host/cli.ts [--shards N] [--shard-bytes B] [--restart-on-failure] [--sim '{"json":1}']
 * Prints one JSON object with the host's details on stdout, then "READY" on stderr.
 */
import { startGpuHost, GpuHostOptions } from './harness';

function parse(argv: string[]): GpuHostOptions {
  const o: GpuHostOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => argv[++i];
    if (a === '--shards') o.shards = Number(val());
    else if (a === '--shard-bytes') o.shardBytes = Number(val());
    else if (a === '--restart-on-failure') o.restartOnFailure = true;
    else if (a === '--sim') o.sim = JSON.parse(val());
    else if (a === '--unit') o.unitName = val();
    else { process.stderr.write(`unknown option ${a}\n`); process.exit(2); }
  }
  return o;
}

async function main(): Promise<void> {
  const host = await startGpuHost(parse(process.argv.slice(2)));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await host.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
  const info = {
    fixtureDir: host.fixtureDir, stateDir: host.stateDir, sshHost: host.sshHost, sshPort: host.sshPort,
    username: host.username, httpPort: host.httpPort, serverUrl: host.serverUrl, unit: host.unit,
    unitName: host.unitName, modelPath: host.modelPath, unitFilePath: host.unitFilePath,
    clientKeyPath: host.clientKeyPath, encryptedClientKeyPath: host.encryptedClientKeyPath,
    encryptedKeyPassphrase: host.encryptedKeyPassphrase, hostPublicKey: host.hostPublicKey,
    hostKeyFingerprint: host.hostKeyFingerprint, knownHostsLine: host.knownHostsLine(),
    sshCommand: `ssh -i ${host.clientKeyPath} -p ${host.sshPort} -o UserKnownHostsFile=<file with knownHostsLine> root@127.0.0.1`,
  };
  process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
  process.stderr.write('READY (Ctrl-C to stop)\n');
  setInterval(() => { /* stay up */ }, 1 << 30);
}

main().catch((e) => { process.stderr.write(`${(e as Error).stack ?? e}\n`); process.exit(1); });
