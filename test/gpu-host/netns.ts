/**
 * A private network for simulated GPU hosts: a bridge in this machine's network namespace with a
 * private /24 (10.213.X.0/24, X chosen free: no address or route of this machine in it, and
 * claimed by creating the bridge kimibrX, which only one test run can do), and per host a network
 * namespace joined to the bridge by a veth pair, with its own address. The test process reaches
 * every host at its address through the bridge (10.213.X.1); nothing is routed or forwarded
 * anywhere else, so the traffic stays inside. A host drops off the network when the bridge end
 * of its veth goes down. Everything is removed by dispose(), by this process's exit, and (left by
 * a killed run) by the next run's sweep. Needs root and iproute2 (scripts/ensure-system-packages.sh).
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const PREFIX = '10.213';
const STATE_PREFIX = 'kimi-netns-';

export interface NetnsHost {
  /** The network namespace's name (for `ip netns exec`). */
  readonly netns: string;
  /** Its address on the private network, e.g. 10.213.7.10. */
  readonly address: string;
  /** The veth end on the bridge (down = the host is off the network). */
  readonly bridgePort: string;
  /** Puts the host on (true) or off (false) the network; the others go on. */
  setLink(up: boolean): Promise<void>;
}

export interface PrivateNetwork {
  /** e.g. 10.213.7.0/24 */
  readonly subnet: string;
  readonly bridge: string;
  /** This machine's address on the bridge. */
  readonly gateway: string;
  addHost(): Promise<NetnsHost>;
  dispose(): Promise<void>;
}

interface NetState {
  pid: number;
  bridge: string;
  netns: string[];
}

function ip(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

async function mustIp(args: string[]): Promise<void> {
  const r = await ip(args);
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
}

function stateFile(x: number): string {
  return path.join(os.tmpdir(), `${STATE_PREFIX}${x}.json`);
}

function removeSync(state: NetState): void {
  for (const ns of state.netns) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  spawnSync('ip', ['link', 'del', state.bridge], { stdio: 'ignore' });
}

/** Removes what test runs that died without dispose() left behind. */
function sweepStale(): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(STATE_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(os.tmpdir(), name);
    let state: NetState;
    try {
      state = JSON.parse(fs.readFileSync(file, 'utf8')) as NetState;
    } catch {
      continue;
    }
    try {
      process.kill(state.pid, 0);
      continue;
    } catch {
      /* its owner is gone */
    }
    removeSync(state);
    fs.rmSync(file, { force: true });
  }
}

/** The third octets already used by this machine's addresses and routes under 10.213. */
function usedOctets(): Set<number> {
  const text = ['addr', 'route']
    .map((what) => spawnSync('ip', ['-4', '-o', what], { encoding: 'utf8' }).stdout ?? '')
    .join('\n');
  const used = new Set<number>();
  for (const m of text.matchAll(/\b10\.213\.(\d{1,3})\./g)) used.add(Number(m[1]));
  return used;
}

const live = new Set<NetState>();
let exitHook = false;

export async function createPrivateNetwork(): Promise<PrivateNetwork> {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const s of live) removeSync(s);
    });
  }
  sweepStale();
  const used = usedOctets();
  const candidates = Array.from({ length: 250 }, (_, i) => i + 2)
    .filter((x) => !used.has(x))
    .sort(() => Math.random() - 0.5);
  let x: number | undefined;
  for (const candidate of candidates.slice(0, 20)) {
    // Creating the bridge is the claim: a second run trying the same X fails here and tries another.
    const r = await ip(['link', 'add', 'name', `kimibr${candidate}`, 'type', 'bridge']);
    if (r.code === 0) {
      x = candidate;
      break;
    }
    if (!/exists/i.test(r.stderr)) throw new Error(`ip link add (bridge) failed: ${r.stderr.trim()}`);
  }
  if (x === undefined) throw new Error(`no free ${PREFIX}.X.0/24 for a private test network`);
  const bridge = `kimibr${x}`;
  const state: NetState = { pid: process.pid, bridge, netns: [] };
  live.add(state);
  const save = () => fs.writeFileSync(stateFile(x!), JSON.stringify(state));
  save();
  const gateway = `${PREFIX}.${x}.1`;
  try {
    await mustIp(['addr', 'add', `${gateway}/24`, 'dev', bridge]);
    await mustIp(['link', 'set', bridge, 'up']);
  } catch (error) {
    removeSync(state);
    live.delete(state);
    fs.rmSync(stateFile(x), { force: true });
    throw error;
  }

  let hosts = 0;
  let disposed = false;
  return {
    subnet: `${PREFIX}.${x}.0/24`,
    bridge,
    gateway,
    async addHost(): Promise<NetnsHost> {
      if (disposed) throw new Error('the private network was disposed');
      const i = hosts++;
      const netns = `kimi-${x}-${i}-${process.pid}`;
      const bridgePort = `kv${x}h${i}`;
      const inner = `kv${x}n${i}`;
      const address = `${PREFIX}.${x}.${10 + i}`;
      await mustIp(['netns', 'add', netns]);
      state.netns.push(netns);
      save();
      await mustIp(['link', 'add', bridgePort, 'type', 'veth', 'peer', 'name', inner, 'netns', netns]);
      await mustIp(['link', 'set', bridgePort, 'master', bridge]);
      await mustIp(['link', 'set', bridgePort, 'up']);
      await mustIp(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', inner]);
      await mustIp(['-n', netns, 'link', 'set', inner, 'up']);
      await mustIp(['-n', netns, 'link', 'set', 'lo', 'up']);
      return {
        netns,
        address,
        bridgePort,
        setLink: (up) => mustIp(['link', 'set', bridgePort, up ? 'up' : 'down']),
      };
    },
    async dispose(): Promise<void> {
      if (disposed) return;
      disposed = true;
      for (const ns of state.netns) await ip(['netns', 'del', ns]);
      await ip(['link', 'del', bridge]);
      live.delete(state);
      fs.rmSync(stateFile(x!), { force: true });
    },
  };
}
