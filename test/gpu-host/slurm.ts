/**
 * A real Slurm cluster for the simulated GPU host (Debian's slurm-wlm 22.05 and munge): munged,
 * slurmctld and one slurmd per node, all under one temporary folder, on loopback ports of their
 * own, with short timings (cred_expire=5, sched_interval=2) so a requeue takes seconds, not the
 * two minutes of the defaults. The daemons run as root outside the host's namespaces; the host's
 * SSH sessions find the cluster at /etc/slurm (the folder is bind-mounted there inside the host's
 * mount namespace only), as a login node's users do, and the node names resolve there to 127.0.0.1
 * (an /etc/hosts of the host's own, bind-mounted the same way), as a cluster's DNS has them. Two nodes on one machine work: each slurmd
 * has its own port and `-N` name. `stop()` cancels every job first (a job's processes outlive
 * slurmd), then stops the daemons by their pid files and removes the folder.
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GpuHost } from './harness';
import { waitFor } from '../util/waitFor';
import { freePort } from '../util/freePort';
import { pidAlive } from '../util/pidAlive';

export interface SlurmCluster {
  readonly dir: string;
  readonly confPath: string;
  readonly nodes: readonly string[];
  /** A client command as root (SLURM_CONF set): stdout, stderr, status. */
  run(argv: readonly string[]): { stdout: string; stderr: string; status: number | null };
  /** A folder owned by `user` for its jobs' scripts and output. */
  userDir(user: string, name: string): string;
  stop(): Promise<void>;
}

/** Why this machine cannot run the cluster (a missing program), or undefined. */
export function slurmMissing(): string | undefined {
  for (const p of ['/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/sbin/munged', '/usr/bin/sbatch'])
    if (!fs.existsSync(p))
      return `${p} is missing: apt-get install -y slurm-wlm munge (scripts/ensure-system-packages.sh)`;
  return undefined;
}

/** A run of `count` free consecutive ports (srun's range), found by trying. */
async function freeRange(count: number, taken: readonly number[]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if (ports.some((p) => taken.includes(p))) continue;
    const free = await Promise.all(
      ports.map(
        (p) =>
          new Promise<boolean>((resolve) => {
            const srv = net.createServer();
            srv.once('error', () => resolve(false));
            srv.listen(p, '127.0.0.1', () => srv.close(() => resolve(true)));
          }),
      ),
    );
    if (free.every(Boolean)) return base;
  }
  throw new Error('no free port range for srun');
}

function must(argv: readonly string[], env: NodeJS.ProcessEnv): void {
  const r = spawnSync(argv[0] ?? '', argv.slice(1), { encoding: 'utf8', env, timeout: 30_000 });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function startSlurm(host: GpuHost, opts: { nodes?: 1 | 2 } = {}): Promise<SlurmCluster> {
  const missing = slurmMissing();
  if (missing) throw new Error(missing);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-slurm-'));
  fs.chmodSync(dir, 0o755);
  const etc = path.join(dir, 'etc');
  const munge = path.join(dir, 'munge');
  for (const d of [
    etc,
    munge,
    path.join(dir, 'state'),
    path.join(dir, 'spool'),
    path.join(dir, 'log'),
    path.join(dir, 'jobs'),
  ])
    fs.mkdirSync(d, { recursive: true, mode: 0o755 });
  fs.chmodSync(munge, 0o755); // munged refuses a socket folder of mode 700
  const socket = path.join(munge, 'munge.socket.2');
  fs.writeFileSync(path.join(munge, 'key'), crypto.randomBytes(1024), { mode: 0o400 });
  const nodes = opts.nodes === 2 ? ['n1', 'n2'] : ['n1'];
  const ctld = await freePort();
  const slurmd = await freePort();
  const nodePorts: number[] = [];
  for (const _ of nodes) nodePorts.push(await freePort());
  const srun = await freeRange(11, [ctld, slurmd, ...nodePorts]);
  const confPath = path.join(etc, 'slurm.conf');
  fs.writeFileSync(
    confPath,
    [
      'ClusterName=kimitest',
      'SlurmctldHost=localhost',
      `SlurmctldPort=${ctld}`,
      `SlurmdPort=${slurmd}`,
      `SrunPortRange=${srun}-${srun + 10}`,
      'CommunicationParameters=NoCtldInAddrAny,NoInAddrAny',
      'SlurmUser=root',
      'SlurmdUser=root',
      'AuthType=auth/munge',
      'CredType=cred/munge',
      `AuthInfo=socket=${socket},cred_expire=5`,
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool/%n`,
      `SlurmctldPidFile=${dir}/log/slurmctld.pid`,
      `SlurmdPidFile=${dir}/log/slurmd-%n.pid`,
      `SlurmctldLogFile=${dir}/log/slurmctld.log`,
      `SlurmdLogFile=${dir}/log/slurmd-%n.log`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'MpiDefault=none',
      'MailProg=/bin/true',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'JobCompType=jobcomp/none',
      'ReturnToService=2',
      'MinJobAge=300',
      'KillWait=5',
      'SchedulerParameters=sched_interval=2,bf_interval=2',
      ...nodes.map(
        (n, i) =>
          `NodeName=${n} NodeHostname=localhost NodeAddr=127.0.0.1 Port=${nodePorts[i]} CPUs=1 RealMemory=8000 State=UNKNOWN`,
      ),
      'PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  if (fs.existsSync('/etc/slurm/plugstack.conf')) fs.writeFileSync(path.join(etc, 'plugstack.conf'), '');
  const env = { ...process.env, SLURM_CONF: confPath };
  const run = (argv: readonly string[]) => {
    const r = spawnSync(argv[0] ?? '', argv.slice(1), { encoding: 'utf8', env, timeout: 30_000 });
    return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', status: r.status };
  };
  const stopDaemons = async () => {
    const pids = [
      ...nodes.map((n) => readPid(path.join(dir, 'log', `slurmd-${n}.pid`))),
      readPid(path.join(dir, 'log', 'slurmctld.pid')),
    ].filter((p): p is number => p !== undefined);
    for (const pid of pids) if (pidAlive(pid)) process.kill(pid, 'SIGTERM');
    await waitFor(() => pids.every((p) => !pidAlive(p)) || undefined, {
      timeoutMs: 20_000,
      intervalMs: 100,
      message: 'the Slurm daemons to stop',
    }).catch(() => pids.forEach((p) => pidAlive(p) && process.kill(p, 'SIGKILL')));
    spawnSync('munged', ['--stop', `--socket=${socket}`], { encoding: 'utf8', timeout: 10_000 });
  };
  const bound = { slurm: false, hosts: false };
  try {
    must(
      [
        'munged',
        `--key-file=${path.join(munge, 'key')}`,
        `--socket=${socket}`,
        `--pid-file=${path.join(munge, 'munged.pid')}`,
        `--log-file=${path.join(munge, 'munged.log')}`,
        `--seed-file=${path.join(munge, 'seed')}`,
      ],
      env,
    );
    must(['slurmctld'], env);
    for (const n of nodes) must(['slurmd', '-N', n], env);
    await waitFor(
      () => {
        const r = run(['sinfo', '-h', '-o', '%D %T']);
        return r.status === 0 && r.stdout.trim() === `${nodes.length} idle` ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'the Slurm nodes idle (sinfo)' },
    );
    // The host's logins read /etc/slurm: this cluster's, inside the host's mount namespace alone.
    const bind = await host.nsExec(`mount --bind '${etc}' /etc/slurm`);
    if (bind.code !== 0) throw new Error(`bind /etc/slurm: ${bind.stderr}`);
    bound.slurm = true;
    const hosts = path.join(dir, 'hosts');
    fs.writeFileSync(hosts, `${fs.readFileSync('/etc/hosts', 'utf8').trimEnd()}\n127.0.0.1 ${nodes.join(' ')}\n`, {
      mode: 0o644,
    });
    const bindHosts = await host.nsExec(`mount --bind '${hosts}' /etc/hosts`);
    if (bindHosts.code !== 0) throw new Error(`bind /etc/hosts: ${bindHosts.stderr}`);
    bound.hosts = true;
  } catch (e) {
    // Only what this start bound: /etc/hosts may be a mount of the machine's own (a container's).
    if (bound.hosts) await host.nsExec('umount /etc/hosts').catch(() => undefined);
    if (bound.slurm) await host.nsExec('umount /etc/slurm').catch(() => undefined);
    await stopDaemons();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    dir,
    confPath,
    nodes,
    run,
    userDir(user, name) {
      const d = path.join(dir, 'jobs', name);
      fs.mkdirSync(d, { recursive: true, mode: 0o755 });
      must(['chown', `${user}:`, d], env);
      return d;
    },
    async stop() {
      run(['scancel', '--full', '--user=root']);
      const users = run(['squeue', '-h', '-o', '%u']).stdout.split('\n').filter(Boolean);
      for (const u of new Set(users)) run(['scancel', '--full', `--user=${u}`]);
      await waitFor(() => (run(['squeue', '-h']).stdout.trim() === '' ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
        message: 'every Slurm job ended',
      }).catch(() => undefined);
      await host.nsExec('umount /etc/hosts');
      await host.nsExec('umount /etc/slurm');
      await stopDaemons();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
