/**
 * Start a simulated GPU host and keep it up until SIGINT/SIGTERM (for the demo and manual use).
 *   npx tsx test/gpu-host/cli.ts [--shards N] [--shard-bytes B] [--restart-on-failure] [--sim '{"json":1}'] [--nodes N]
 * Prints one JSON object with the host's details on stdout, then "READY" on stderr.
 * --nodes N (N >= 2, root): a multi-node server instead, N hosts on a private network (netns.ts) whose
 * ranks meet at node rank 0's address; prints the kimiService.servers entry and the known_hosts lines.
 */
import { startGpuHost, GpuHostOptions, type GpuHost } from './harness';
import { createPrivateNetwork, type NetnsHost } from './netns';

let nodeCount = 0;

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
    else if (a === '--nodes') nodeCount = Number(val());
    else {
      process.stderr.write(`unknown option ${a}\n`);
      process.exit(2);
    }
  }
  return o;
}

/** N hosts on a private network running one multi-node server; until SIGINT/SIGTERM. */
async function multiNode(options: GpuHostOptions, count: number): Promise<void> {
  if (!(Number.isInteger(count) && count >= 2 && count <= 16)) throw new Error('--nodes takes 2 to 16');
  const network = await createPrivateNetwork();
  const hosts: GpuHost[] = [];
  const stop = async () => {
    await Promise.all(hosts.map((h) => h.stop()));
    await network.dispose();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
  const places: NetnsHost[] = [];
  for (let i = 0; i < count; i++) places.push(await network.addHost());
  const distPort = 29500;
  hosts.push(
    ...(await Promise.all(
      places.map((place, rank) =>
        startGpuHost({
          ...options,
          network: place,
          extraServerArgs: `--nnodes ${count} --node-rank ${rank} --dist-init-addr ${places[0]!.address}:${distPort} --dist-timeout 120`,
        }),
      ),
    )),
  );
  const entry = {
    name: 'multi-node-sim',
    url: hosts[0]!.serverUrl,
    nodes: hosts.map((h) => ({
      host: h.sshHost,
      port: h.sshPort,
      username: h.username,
      identityFile: h.clientKeyPath,
      unit: h.unitName,
    })),
  };
  process.stdout.write(
    `${JSON.stringify({ server: entry, knownHostsLines: hosts.map((h) => h.knownHostsLine()) }, null, 2)}\n`,
  );
  process.stderr.write('READY (Ctrl-C to stop)\n');
  setInterval(() => {
    /* stay up */
  }, 1 << 30);
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  if (nodeCount) return multiNode(options, nodeCount);
  const host = await startGpuHost(options);
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
    fixtureDir: host.fixtureDir,
    stateDir: host.stateDir,
    sshHost: host.sshHost,
    sshPort: host.sshPort,
    username: host.username,
    httpPort: host.httpPort,
    serverUrl: host.serverUrl,
    unit: host.unit,
    unitName: host.unitName,
    modelPath: host.modelPath,
    unitFilePath: host.unitFilePath,
    clientKeyPath: host.clientKeyPath,
    encryptedClientKeyPath: host.encryptedClientKeyPath,
    encryptedKeyPassphrase: host.encryptedKeyPassphrase,
    hostPublicKey: host.hostPublicKey,
    hostKeyFingerprint: host.hostKeyFingerprint,
    knownHostsLine: host.knownHostsLine(),
    sshCommand: `ssh -i ${host.clientKeyPath} -p ${host.sshPort} -o UserKnownHostsFile=<file with knownHostsLine> root@127.0.0.1`,
  };
  process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
  process.stderr.write('READY (Ctrl-C to stop)\n');
  setInterval(() => {
    /* stay up */
  }, 1 << 30);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
