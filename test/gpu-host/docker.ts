/**
 * Docker on the simulated GPU host: a private dockerd (Debian's docker.io) inside the host's
 * mount and pid namespaces, so the host's sshd sessions, sudo and units reach it at the usual
 * /run/docker.sock, and the PIDs `docker inspect` reports are the ones the sessions see in /proc.
 *
 *   - /run of the namespace becomes an overlay (upper layer on a tmpfs of the fixture): the
 *     socket, dockerd's exec root and pid file never touch this machine's /run;
 *   - data root under the fixture; --iptables=false --bridge=none: containers use
 *     `--network host` (the simulator listens on the host's loopback, as a unit's would);
 *   - the simulator image is built offline by `docker import` of a root filesystem holding
 *     this machine's node (with the shared libraries ldd names) and test/gpu-host/sglang-sim.
 *
 * dockerd and every container die with the namespace (host.stop()); stop() here removes the
 * containers and ends dockerd first, cleanly.
 */
import { spawnSync } from 'child_process';
import * as fsp from 'fs/promises';
import * as path from 'path';
import type { ExecResult, GpuHost } from './harness';
import { waitFor } from '../util/waitFor';

const SIM_DIR = path.resolve(__dirname, 'sglang-sim');
export const SIM_IMAGE = 'kimi-sglang-sim:test';
/** Where the model folder is mounted inside the simulator's containers. */
export const CONTAINER_MODEL_DIR = '/models/Kimi-K2.6';

export interface DockerEngine {
  readonly image: string;
  readonly dataRoot: string;
  /** Runs `docker ARGS...` (a shell command line) inside the host's namespaces, as root. */
  docker(args: string): Promise<ExecResult>;
  /**
   * The `docker run` words (after `docker run`) of a simulator container named `name`: host
   * network, the model folder mounted at CONTAINER_MODEL_DIR, the simulator's state folder.
   */
  simRunArgs(name: string, extra?: readonly string[]): string[];
  /** The simulator's command inside the image (after the image name). */
  simCommand(): string[];
  /** Host PID (in the namespace) of the container's first process; 0 when it does not run. */
  containerPid(name: string): Promise<number>;
  stop(): Promise<void>;
}

function shq(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Why Docker cannot run here, or undefined when dockerd and the client are installed. */
export function dockerMissing(): string | undefined {
  for (const tool of ['dockerd', 'docker', 'docker-compose']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0) {
      return `${tool} is not installed (scripts/ensure-setup.sh installs docker.io and docker-compose)`;
    }
  }
  return undefined;
}

/** node and the shared libraries it loads (at the same paths), sh, the simulator and a python3 that runs it. */
async function writeRootFs(root: string): Promise<void> {
  const node = await fsp.realpath(process.execPath);
  const ldd = spawnSync('ldd', [node], { encoding: 'utf8' });
  if (ldd.status !== 0) throw new Error(`ldd ${node} failed: ${ldd.stderr}`);
  const libs = [...ldd.stdout.matchAll(/(\/\S+)\s+\(0x/g)].map((m) => m[1] as string);
  for (const file of [node, ...libs]) {
    const target = path.join(root, file === node ? '/usr/bin/node' : file);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.copyFile(await fsp.realpath(file), target);
    await fsp.chmod(target, 0o755);
  }
  await fsp.cp(SIM_DIR, path.join(root, 'sim'), { recursive: true });
  // `python3 -m sglang.launch_server ...` as in SGLang's images: a sh wrapper, as the host's python stand-in.
  await fsp.mkdir(path.join(root, 'bin'), { recursive: true });
  await fsp.copyFile(await fsp.realpath('/bin/sh'), path.join(root, 'bin', 'sh'));
  await fsp.chmod(path.join(root, 'bin', 'sh'), 0o755);
  await fsp.writeFile(path.join(root, 'usr', 'bin', 'python3'), '#!/bin/sh\nexec /usr/bin/node /sim/main.js "$@"\n', {
    mode: 0o755,
  });
  for (const d of ['tmp', 'etc', 'proc', 'sys', 'dev'])
    await fsp.mkdir(path.join(root, d), { recursive: true, mode: d === 'tmp' ? 0o1777 : 0o755 });
  await fsp.chmod(path.join(root, 'tmp'), 0o1777);
  await fsp.writeFile(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  await fsp.writeFile(path.join(root, 'etc', 'group'), 'root:x:0:\n');
}

/** Starts dockerd inside `host`'s namespaces and builds the simulator image. */
export async function startDockerEngine(host: GpuHost): Promise<DockerEngine> {
  const missing = dockerMissing();
  if (missing) throw new Error(`Docker cannot run here: ${missing}`);
  const dir = path.join(host.fixtureDir, 'docker');
  const dataRoot = path.join(dir, 'data');
  const overlay = path.join(dir, 'run-overlay');
  const log = path.join(dir, 'dockerd.log');
  await fsp.mkdir(dataRoot, { recursive: true });
  await fsp.mkdir(overlay, { recursive: true });
  const must = async (command: string): Promise<string> => {
    const r = await host.nsExec(command);
    if (r.code !== 0) throw new Error(`${command.slice(0, 200)} failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  await must(
    `mount -t tmpfs tmpfs ${shq(overlay)} && mkdir ${shq(`${overlay}/upper`)} ${shq(`${overlay}/work`)} && ` +
      `mount -t overlay overlay -o ${shq(`lowerdir=/run,upperdir=${overlay}/upper,workdir=${overlay}/work`)} /run && mkdir -p /run/sshd /run/sudo`,
  );
  // setsid and no inherited stdio: nsExec returns while dockerd goes on, in the namespace.
  await must(
    `setsid dockerd --iptables=false --ip6tables=false --bridge=none --data-root ${shq(dataRoot)} ` +
      `--exec-root /run/docker --pidfile /run/docker.pid -H unix:///run/docker.sock >${shq(log)} 2>&1 </dev/null &`,
  );
  const docker = (args: string): Promise<ExecResult> => host.nsExec(`docker ${args}`);
  const engine: DockerEngine = {
    image: SIM_IMAGE,
    dataRoot,
    docker,
    simRunArgs: (name, extra = []) => [
      '--name',
      name,
      '--network',
      'host',
      '-v',
      `${host.modelPath}:${CONTAINER_MODEL_DIR}:ro`,
      '-v',
      `${host.stateDir}:${host.stateDir}`,
      '-e',
      `KIMI_SIM_ROOT=${host.stateDir}`,
      ...extra,
      SIM_IMAGE,
    ],
    simCommand: () => [
      'python3',
      '-m',
      'sglang.launch_server',
      '--model-path',
      CONTAINER_MODEL_DIR,
      '--served-model-name',
      '/root/models/Kimi-K2.6',
      '--tp',
      '8',
      '--trust-remote-code',
      '--host',
      '127.0.0.1',
      '--port',
      String(host.httpPort),
    ],
    async containerPid(name) {
      const r = await docker(`inspect --format '{{.State.Pid}}' ${shq(name)}`);
      return r.code === 0 ? Number(r.stdout.trim()) || 0 : 0;
    },
    async stop() {
      await host.nsExec(
        'ids=$(docker ps -aq 2>/dev/null); [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1; ' +
          'p=$(cat /run/docker.pid 2>/dev/null) && kill "$p" 2>/dev/null; for i in $(seq 1 100); do [ -e /run/docker.pid ] || break; sleep 0.1; done',
      );
    },
  };
  try {
    await waitFor(async () => (await docker('version --format "{{.Server.Version}}"')).code === 0, {
      timeoutMs: 30_000,
      intervalMs: 100,
      message: 'dockerd to answer',
    }).catch(async (error: Error) => {
      const tail = (await fsp.readFile(log, 'utf8').catch(() => '')).split('\n').slice(-5).join('\n');
      throw new Error(`${error.message}; dockerd's log ends: ${tail}`);
    });
    const root = path.join(dir, 'rootfs');
    await writeRootFs(root);
    await must(`tar -C ${shq(root)} -c . | docker import --change 'ENV PATH=/usr/bin:/bin' - ${SIM_IMAGE} >/dev/null`);
    await fsp.rm(root, { recursive: true, force: true });
  } catch (error) {
    await engine.stop();
    throw error;
  }
  return engine;
}
