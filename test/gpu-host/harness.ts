/**
 * The simulated GPU host: a real OpenSSH sshd on 127.0.0.1 (or, with `network`, on the host's own
 * address in its own network namespace: netns.ts) plus stand-ins for systemctl,
 * journalctl, nvidia-smi and sudo, and the SGLang simulator started from the unit's ExecStart.
 *
 * Process layout (all torn down by stop(), and by the kernel if this process dies):
 *
 *   harness (this process)
 *    ├─ unshare --mount --pid --fork --mount-proc --kill-child sh ns-init.sh FIX
 *    │    └─ init (pid 1 of the namespace, perl; reaps orphans; exits when its stdin closes)
 *    │         ├─ supervisor.js per started unit (detached by `systemctl start`) ─ python (simulator)
 *    │         ├─ systemctl.js __run-job per start/stop/restart job (detached by systemctl, which only
 *    │         │    waits for it, or not with --no-block: killing systemctl leaves the job going, as in systemd)
 *    │         └─ ... anything orphaned inside the namespace
 *    └─ nsenter -t <init> -m -p /usr/sbin/sshd -D -e -f FIX/ssh/sshd_config   (stderr captured)
 *         └─ sshd (inside the namespaces) ─ per-connection sshd ─ commands of the SSH sessions
 *
 * Logins: root, and the unprivileged users of `GpuHostOptions.users` (e.g. `kimi`: an account of
 * this machine, created if missing, whose keys are authorized in the fixture). Inside the
 * namespace (ns-init.sh) /usr/bin/systemctl and /usr/bin/journalctl are the stand-ins, so the
 * real `sudo` (Debian's package) runs them; /etc/sudoers.d is the fixture's (installSudoers) and
 * /etc/group the fixture's copy (addToGroup). For root, `sudo` on PATH stays the stand-in
 * (FIX/state/sudo.json can make it want a password); for anyone else it is the real sudo.
 *
 * sshd is started/stopped by the harness *inside* the namespace with nsenter, so stopSshd()
 * (a network drop) kills every sshd process but leaves the unit and its supervisor alive.
 * Killing `unshare` kills init (--kill-child); init's death makes the kernel SIGKILL every
 * process of the pid namespace. init also exits when the pipe on its stdin (held only by this
 * process) closes, so a crashed test runner leaks nothing either.
 */
import { spawn, spawnSync, ChildProcess } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { SIM_NODE_FLAGS, vllmExecStartLines, vllmStandIn } from './vllmUnit';
import { assertUserCanRun, installHostFiles } from './hostFiles';
import type { NetnsHost } from './netns';
import { setUpOneTimeCodes, type OneTimeCodeOptions } from './pamOath';
import { parseExecLine, type ExecEntry } from './execLog';
import { freePort } from '../util/freePort';
import { pidAlive } from '../util/pidAlive';
// The simulated model's tokenizer files (what its /tokenize counts with).
const simTokenizer = require('./sglang-sim/tokenizer.js') as { writeTokenizerFiles(dir: string, kind: string): void };

/**
 * What `journalctl` (and the journal part of `systemctl status`) shows, as for a user in or out of
 * the groups 'adm'/'systemd-journal' (systemd src/shared/journal-util.c):
 *  - 'allowed' (default): everything to root and to members of 'adm' or 'systemd-journal' (the
 *    namespace's /etc/group, see addToGroup); any other user gets 'denied-hint';
 *  - 'denied-hint': the hint "Hint: You are currently not seeing messages from other users and the
 *    system. ..." on stderr (not with -q), none of the unit's lines ("-- No entries --" on stdout
 *    without -f), exit 0; with -f it keeps following and prints nothing;
 *  - 'denied-no-files': the hint, then "No journal files were opened due to insufficient
 *    permissions." on stderr, exit 1 at once, with or without -f.
 * `systemctl status` then shows no journal lines but "Warning: some journal files were not opened
 * due to insufficient permissions.". Decided when each journalctl starts (a running -f keeps its access).
 * The two 'denied-*' modes override the groups: they apply to every user, root included.
 */
export type JournalAccess = 'allowed' | 'denied-hint' | 'denied-no-files';

export interface GpuHostOptions {
  shards?: number;
  shardBytes?: number;
  restartOnFailure?: boolean;
  /** sim.json of the SGLang simulator (see sglang-sim/main.js), e.g. `{ stopDelayMs: 8000 }`. */
  sim?: Record<string, unknown>;
  unitName?: string; // default 'sglang-k26-ddtree'
  modelDirName?: string; // default 'Kimi-K2.6'
  /** Initial journal access (default 'allowed'); see setJournalAccess. */
  journalAccess?: JournalAccess;
  /** TimeoutStopSec= of the default unit (default 5; systemd's own default is 90 s): SIGTERM, then SIGKILL after this long. */
  timeoutStopSec?: number;
  /** false: sshd runs with `AllowTcpForwarding no` (direct-tcpip channels are "administratively prohibited"). Default true. */
  allowTcpForwarding?: boolean;
  /**
   * Unprivileged login users next to root, e.g. ['kimi']: accounts of this machine (created with
   * `useradd -m -s /bin/sh` when missing, kept afterwards), logging in with the client keys.
   */
  users?: readonly string[];
  /** The server the unit runs: SGLang (default) or vLLM (`vllm serve MODEL ...`, see vllmUnit.ts). */
  engine?: 'sglang' | 'vllm';
  /**
   * Runs the host in this network namespace (netns.ts createPrivateNetwork().addHost()): sshd
   * listens on its address there, and the server sees only the private network; without it the
   * host shares this machine's network and sshd listens on 127.0.0.1.
   */
  network?: NetnsHost;
  /** Appended to the default unit's server command line, e.g. `--nnodes 2 --node-rank 1 --dist-init-addr A:P`. */
  extraServerArgs?: string;
  /**
   * sshd with PAM: these login users must give a TOTP code after their key
   * (`AuthenticationMethods publickey,keyboard-interactive`, pam_oath: see pamOath.ts).
   */
  oneTimeCodes?: OneTimeCodeOptions;
  /**
   * The model folder's tokenizer (sglang-sim/tokenizer.js, which /tokenize counts with): Kimi's
   * `tiktoken.model` + tokenizer_config.json (default), a Hugging Face `tokenizer.json`, or none.
   */
  tokenizer?: 'tiktoken' | 'tokenizer.json' | 'none';
  /** config.json has a `vision_config` (a multimodal model such as Kimi K2.5): the simulator takes image_url parts. */
  vision?: boolean;
  /**
   * sshd_config lines placed before the harness's own (sshd keeps the first value of a keyword),
   * made once the host key exists: e.g. `TrustedUserCAKeys`, `AuthorizedKeysFile none`,
   * `HostCertificate` (a certificate of `hostKey`'s public key).
   */
  sshdConfig?: (files: { sshDir: string; hostKey: string }) => readonly string[];
  /** Added to sshd's environment, e.g. KRB5_CONFIG and KRB5_KTNAME for a GSSAPI login. */
  sshdEnv?: () => Record<string, string>;
  /** config.json's `quantization_config` (Kimi K2's block FP8: `{ quant_method: 'fp8', weight_block_size: [128, 128] }`). */
  quantization?: Record<string, unknown>;
}

/** Who a session logs in as, and with which key. */
export interface Login {
  username: string;
  identityFile: string;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface JournalEntry {
  t: number /* usec */;
  pid: number;
  ident: string;
  unit: string;
  msg: string;
}

export interface GpuHost {
  fixtureDir: string;
  stateDir: string;
  /** 127.0.0.1, or the host's address on its private network (GpuHostOptions.network). */
  sshHost: string;
  sshPort: number;
  username: 'root';
  httpPort: number;
  serverUrl: string;
  unit: string; // 'sglang-k26-ddtree.service'
  unitName: string; // 'sglang-k26-ddtree'
  modelPath: string;
  clientKeyPath: string;
  encryptedClientKeyPath: string;
  encryptedKeyPassphrase: string;
  hostPublicKey: string;
  hostKeyFingerprint: string;
  unitFilePath: string;
  defaultUnitText: string;
  knownHostsLine(opts?: { hashed?: boolean }): string;
  configureSimulator(patch: Record<string, unknown>): Promise<void>;
  /**
   * The server's stop takes this long: on SIGTERM it closes its port and stays alive ms before it
   * exits (sim.json stopDelayMs, read by the running simulator at SIGTERM, so it applies to the
   * process running now). Meanwhile `systemctl show` says ActiveState=deactivating,
   * SubState=stop-sigterm with the old MainPID; after TimeoutStopSec systemd's SIGKILL ends it
   * (Result=timeout). 0 = the default quick exit.
   */
  setStopDelay(ms: number): Promise<void>;
  /** Journal access from now on (a state file read by each journalctl as it starts); see JournalAccess. */
  setJournalAccess(mode: JournalAccess): Promise<void>;
  /**
   * `AllowTcpForwarding yes|no` for new SSH connections: sshd_config is rewritten and sshd reloads
   * it (SIGHUP: it re-executes itself); connections already open keep what they had.
   */
  setTcpForwarding(allowed: boolean): Promise<void>;
  writeUnit(text: string, opts?: { reload?: boolean }): Promise<void>;
  readDropIns(): Promise<Record<string, string>>;
  /** Runs `command` over a real OpenSSH client session, as root or as one of `users`. */
  ssh(command: string, opts?: { user?: string }): Promise<ExecResult>;
  /** The user name and key of a login: root (default) or one of `GpuHostOptions.users`. */
  login(user?: string): Login;
  /**
   * Installs `text` as /etc/sudoers.d/NAME inside the simulated host (0440, root; checked with
   * `visudo -c` first: a broken file would make sudo refuse everything). Real sudo reads it at once.
   */
  installSudoers(text: string, name?: string): Promise<void>;
  /** Removes every file of the host's /etc/sudoers.d. */
  removeSudoers(): Promise<void>;
  /** Group membership in the host's /etc/group (created there when the machine lacks it); applies to new logins. */
  addToGroup(user: string, group: string): Promise<void>;
  removeFromGroup(user: string, group: string): Promise<void>;
  /** Run a shell command inside the simulated host's namespaces without SSH (no handshake). */
  nsExec(command: string): Promise<ExecResult>;
  killServer(signal?: string): Promise<void>;
  mainPid(): Promise<number>;
  stopSshd(): Promise<void>;
  startSshd(): Promise<void>;
  sshdRunning(): boolean;
  /** `Accepted publickey` lines, excluding the harness's own ssh() logins unless includeHarness. */
  handshakes(opts?: { includeHarness?: boolean }): number;
  sshdLog(): string[];
  /** exec.log's lines: "<ISO time> <pid> ssh=<address:port|-> <stand-in> <args>" (see execLog.ts). */
  execLog(): Promise<string[]>;
  /** exec.log parsed, each entry with the SSH connection it ran for (execLog.ts). */
  execEntries(): Promise<ExecEntry[]>;
  journal(): Promise<string[]>;
  /**
   * Appends one entry to the unit's journal (as pid 1 "systemd" unless told otherwise), e.g. a
   * marker that shows a `journalctl -f` started by a test is following.
   */
  appendJournal(msg: string, o?: { pid?: number; ident?: string }): Promise<void>;
  journalEntries(): Promise<JournalEntry[]>;
  firedUpAt(): Promise<number | undefined>;
  /** Host pids of every process currently in the simulated host's pid namespace. */
  nsPids(): number[];
  /** With GpuHostOptions.network: the host drops off (false) or rejoins (true) the network; its processes go on. */
  setNetworkLink(up: boolean): Promise<void>;
  stop(): Promise<void>;
}

// Both test/gpu-host/ and a bundle of it under out/desktop/ sit two levels below the repository.
// Only root runs ns-init.sh from the checkout; what the host runs comes from its copy (hostFiles.ts).
const NS_INIT = path.join(path.resolve(__dirname, '..', '..'), 'test', 'gpu-host', 'ns-init.sh');
const SSHD = '/usr/sbin/sshd';
const READY_LINE = 'The server is fired up and ready to roll!';
const STAND_INS = ['systemctl', 'journalctl', 'nvidia-smi', 'sudo'];
const REAL_SUDO = '/usr/bin/sudo';
const LOGIN_USER = /^[a-z_][a-z0-9_-]{0,31}$/;

/**
 * An unprivileged account of this machine for the simulated host's logins: created when missing
 * (`useradd -m -s /bin/sh`, password field `*`: no password, yet not locked, which sshd without
 * PAM would refuse), left in place afterwards (idempotent).
 */
export function ensureLoginUser(name: string): { uid: number; gid: number } {
  if (!LOGIN_USER.test(name) || name === 'root')
    throw new Error(`not a login user for the simulated host: ${JSON.stringify(name)}`);
  const entry = () => spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  let r = entry();
  if (r.status !== 0) {
    const add = spawnSync('useradd', ['-m', '-s', '/bin/sh', '-p', '*', name], { encoding: 'utf8' });
    // 9: created meanwhile by another harness
    if (add.status !== 0 && add.status !== 9) throw new Error(`useradd ${name} failed (${add.status}): ${add.stderr}`);
    r = entry();
    if (r.status !== 0) throw new Error(`no user ${name} after useradd`);
  }
  const shadow = spawnSync('getent', ['shadow', name], { encoding: 'utf8' }).stdout.split(':')[1] ?? '';
  if (shadow === '!' || shadow === '!*') {
    const mod = spawnSync('usermod', ['-p', '*', name], { encoding: 'utf8' });
    if (mod.status !== 0) throw new Error(`usermod -p '*' ${name} failed: ${mod.stderr}`);
  } else if (shadow.startsWith('!')) {
    throw new Error(`the account ${name} is locked (its password is); sshd would refuse it`);
  }
  const f = r.stdout.trim().split(':');
  return { uid: Number(f[2]), gid: Number(f[3]) };
}

/** /etc/group text with `user` added to or removed from `group` (the group is created when missing). */
export function editGroupText(text: string, user: string, group: string, add: boolean): string {
  const lines = text.split('\n');
  let found = false;
  const out = lines.map((l) => {
    const f = l.split(':');
    if (f.length < 4 || f[0] !== group) return l;
    found = true;
    const members = f[3].split(',').filter((m) => m && m !== user);
    if (add) members.push(user);
    f[3] = members.join(',');
    return f.join(':');
  });
  if (found) return out.join('\n');
  if (!add) return text;
  const gids = lines.map((l) => Number(l.split(':')[2])).filter((n) => Number.isInteger(n));
  let gid = 900;
  while (gids.includes(gid)) gid++;
  const body = out.join('\n').replace(/\n*$/, '\n');
  return `${body}${group}:x:${gid}:${user}\n`;
}

const live = new Set<{ kill(): void; fixture?: string }>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // last resort if a test forgets stop(): kill the namespace (and with it every process in it)
  process.on('exit', () => {
    for (const h of live) {
      try {
        h.kill();
      } catch {
        /* */
      }
    }
    for (const h of live) {
      if (h.fixture) {
        try {
          fs.rmSync(h.fixture, { recursive: true, force: true });
        } catch {
          /* */
        }
      }
    }
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: opts.env ?? process.env,
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs) timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, sig) => {
      if (timer) clearTimeout(timer);
      resolve({
        stdout,
        stderr,
        code: code ?? (sig ? 128 + (os.constants.signals[sig as keyof typeof os.constants.signals] ?? 0) : 1),
      });
    });
    if (child.stdin) {
      child.stdin.on('error', () => {
        /* reader gone */
      });
      child.stdin.end(opts.input);
    }
  });
}

async function mustRun(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** Resolves once something on host:port (default 127.0.0.1) sends an SSH banner. */
async function waitForSshBanner(
  port: number,
  timeoutMs: number,
  alive: () => boolean,
  host = '127.0.0.1',
): Promise<void> {
  const end = Date.now() + timeoutMs;
  let lastErr = '';
  while (Date.now() < end) {
    if (!alive()) throw new Error('sshd exited during start-up');
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host, port });
      let buf = '';
      const t = setTimeout(() => {
        s.destroy();
        resolve(false);
      }, 1000);
      s.on('data', (d) => {
        buf += d.toString('latin1');
        if (buf.startsWith('SSH-')) {
          clearTimeout(t);
          s.destroy();
          resolve(true);
        }
      });
      s.on('error', (e) => {
        lastErr = e.message;
        clearTimeout(t);
        resolve(false);
      });
      s.on('close', () => {
        clearTimeout(t);
        resolve(buf.startsWith('SSH-'));
      });
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`sshd did not answer on ${host}:${port}: ${lastErr}`);
}

function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function keyFingerprint(pubLine: string): string {
  const blob = Buffer.from(pubLine.trim().split(/\s+/)[1], 'base64');
  return 'SHA256:' + crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

/** Drops the files' (clean) pages from the kernel page cache: GNU dd's posix_fadvise(DONTNEED). */
export function evictFromPageCache(files: readonly string[]): void {
  for (const f of files) spawnSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' });
}

/** Model folder: N valid safetensors shards (8-byte LE header length + JSON header + data). */
async function writeModel(
  dir: string,
  shards: number,
  shardBytes: number,
  extras: Pick<GpuHostOptions, 'tokenizer' | 'vision' | 'quantization'> = {},
): Promise<void> {
  await fsp.mkdir(dir, { recursive: true });
  const pad = (n: number) => String(n).padStart(5, '0');
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  for (let i = 1; i <= shards; i++) {
    const name = `model-${pad(i)}-of-${pad(shards)}.safetensors`;
    const tensor = `model.layers.${i - 1}.mlp.experts.weight`;
    const mk = (dataLen: number) => {
      let h = JSON.stringify({
        __metadata__: { format: 'pt' },
        [tensor]: { dtype: 'BF16', shape: [dataLen / 2], data_offsets: [0, dataLen] },
      });
      while ((8 + Buffer.byteLength(h)) % 8 !== 0) h += ' ';
      return h;
    };
    // pick the data length so the whole file is ~shardBytes (data even, for BF16)
    let dataLen = Math.max(2, shardBytes - 8 - Buffer.byteLength(mk(shardBytes)));
    dataLen -= dataLen % 2;
    const header = Buffer.from(mk(dataLen));
    const lenBuf = Buffer.alloc(8);
    lenBuf.writeBigUInt64LE(BigInt(header.length));
    const fh = await fsp.open(path.join(dir, name), 'w');
    try {
      await fh.write(lenBuf);
      await fh.write(header);
      const CH = 4 * 1024 * 1024;
      const chunk = Buffer.allocUnsafe(Math.min(CH, dataLen));
      for (let off = 0; off < dataLen; off += chunk.length) {
        const n = Math.min(chunk.length, dataLen - off);
        crypto.randomFillSync(chunk, 0, n);
        await fh.write(chunk, 0, n);
      }
      // written back, so the page cache can drop it: the simulator's page cache is the real one
      await fh.sync();
    } finally {
      await fh.close();
    }
    weightMap[tensor] = name;
    totalSize += dataLen;
  }
  // a fresh host starts cold, as a freshly booted one does
  evictFromPageCache(
    fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.safetensors'))
      .map((n) => path.join(dir, n)),
  );
  if ((extras.tokenizer ?? 'tiktoken') !== 'none')
    simTokenizer.writeTokenizerFiles(dir, extras.tokenizer === 'tokenizer.json' ? 'tokenizer.json' : 'tiktoken');
  await fsp.writeFile(
    path.join(dir, 'model.safetensors.index.json'),
    JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2),
  );
  await fsp.writeFile(
    path.join(dir, 'config.json'),
    JSON.stringify(
      {
        architectures: ['DeepseekV3ForCausalLM'],
        model_type: 'kimi_k2',
        torch_dtype: 'bfloat16',
        hidden_size: 7168,
        num_hidden_layers: 61,
        num_attention_heads: 64,
        n_routed_experts: 384,
        num_experts_per_tok: 8,
        vocab_size: 163840,
        max_position_embeddings: 262144,
        ...(extras.quantization ? { quantization_config: extras.quantization } : {}),
        ...(extras.vision
          ? { vision_config: { model_type: 'moonvit', patch_size: 14, merge_kernel_size: [2, 2] } }
          : {}),
      },
      null,
      2,
    ),
  );
}

function readChildren(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function pidNsOf(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

/** Host pids of the live (non-zombie) processes in the pid namespace ns. */
function hostPidsInNs(ns: string): number[] {
  const out: number[] = [];
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    if (pidNsOf(Number(n)) === ns && !isZombie(Number(n))) out.push(Number(n));
  }
  return out;
}

function commOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Remove fixtures left by harness processes that died without stop() (e.g. kill -9). */
function sweepStaleFixtures(): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('kimi-gpu-host-'));
  } catch {
    return;
  }
  for (const n of names) {
    const dir = path.join(os.tmpdir(), n);
    let owner = 0;
    try {
      owner = Number(fs.readFileSync(path.join(dir, 'harness.pid'), 'utf8'));
    } catch {
      continue;
    }
    if (!owner) continue;
    if (pidAlive(owner)) continue;
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* */
    }
  }
}

export async function startGpuHost(opts: GpuHostOptions = {}): Promise<GpuHost> {
  installExitHook();
  // Login users read what root's processes write (unit state, journal, the wrappers): the host
  // gets a GPU host's usual umask 022 (this process's, inherited by the namespace and sshd),
  // not a stricter one of whoever runs the tests (077 would make every such file 0600).
  if (opts.users?.length) process.umask(process.umask(0o022) & 0o022);
  sweepStaleFixtures();
  const unitName = (opts.unitName ?? 'sglang-k26-ddtree').replace(/\.service$/, '');
  const unit = `${unitName}.service`;
  const shards = opts.shards ?? 16;
  const shardBytes = opts.shardBytes ?? 4 * 1024 * 1024;
  const fix = await fsp.mkdtemp(path.join(os.tmpdir(), 'kimi-gpu-host-'));
  const stateDir = path.join(fix, 'state');
  const binDir = path.join(fix, 'bin');
  const unitDir = path.join(fix, 'etc', 'systemd', 'system');
  const sshDir = path.join(fix, 'ssh');
  const modelPath = path.join(fix, 'models', opts.modelDirName ?? 'Kimi-K2.6');
  const pythonPath = path.join(fix, 'opt', 'sglang', 'bin', 'python');
  const node = path.resolve(process.execPath);
  const cleanupOnError: Array<() => Promise<void> | void> = [
    async () => {
      await fsp.rm(fix, { recursive: true, force: true });
    },
  ];

  try {
    await fsp.writeFile(path.join(fix, 'harness.pid'), String(process.pid));
    for (const d of [
      binDir,
      unitDir,
      path.join(stateDir, 'units'),
      path.join(stateDir, 'journal'),
      sshDir,
      path.dirname(pythonPath),
      path.join(fix, 'ns'),
    ])
      await fsp.mkdir(d, { recursive: true });

    // --- the host's files, stand-in wrappers and the simulator's python ------------------
    const files = await installHostFiles(path.join(fix, 'host'));
    for (const name of STAND_INS) {
      const js = files.standIn(name);
      // sudo: the stand-in serves root (its sudo.json can make it want a password); any other user gets the real sudo.
      const realSudo = name === 'sudo' ? `if [ "$(id -u)" != 0 ]; then exec ${REAL_SUDO} "$@"; fi\n` : '';
      await fsp.writeFile(
        path.join(binDir, name),
        `#!/bin/sh\n${realSudo}KIMI_SIM_ROOT="\${KIMI_SIM_ROOT:-${stateDir}}"\nexport KIMI_SIM_ROOT\nexec ${shq(node)} ${shq(js)} "$@"\n`,
        { mode: 0o755 },
      );
    }
    // --no-memory-reducer (SIM_NODE_FLAGS): an idle simulator moves no witness (see vllmUnit.ts)
    await fsp.writeFile(
      pythonPath,
      `#!/bin/sh\nKIMI_SIM_ROOT="\${KIMI_SIM_ROOT:-${stateDir}}"\nexport KIMI_SIM_ROOT\nexec ${shq(node)} ${SIM_NODE_FLAGS} ${shq(files.simMain)} "$@"\n`,
      { mode: 0o755 },
    );
    const vllmPath = path.join(fix, 'opt', 'vllm', 'bin', 'vllm');
    if (opts.engine === 'vllm') {
      await fsp.mkdir(path.dirname(vllmPath), { recursive: true });
      await fsp.writeFile(vllmPath, vllmStandIn(node, stateDir, files.vllmSimMain, shq), { mode: 0o755 });
    }

    // --- model, ports, unit, simulator config ------------------------------------------
    const modelP = writeModel(modelPath, shards, shardBytes, {
      tokenizer: opts.tokenizer,
      vision: opts.vision,
      quantization: opts.quantization,
    });
    const sshPort = await freePort();
    const httpPort = await freePort([sshPort]);
    const defaultUnitText = [
      '[Unit]',
      'Description=SGLang Kimi K2.6 (DDTree)',
      'After=network-online.target',
      'Wants=network-online.target',
      '',
      '[Service]',
      'Type=simple',
      'User=root',
      'Environment=PYTHONUNBUFFERED=1',
      'Environment="CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7" SGLANG_ENABLE_JIT_DEEPGEMM=0',
      ...(opts.engine === 'vllm'
        ? vllmExecStartLines(vllmPath, modelPath, httpPort)
        : [
            `ExecStart=${pythonPath} -m sglang.launch_server \\`,
            `    --model-path ${/\s/.test(modelPath) ? `"${modelPath}"` : modelPath} --served-model-name /root/models/Kimi-K2.6 \\`,
            `    --tp 8 --trust-remote-code --host 127.0.0.1 --port ${httpPort}${opts.extraServerArgs ? ` ${opts.extraServerArgs}` : ''}`,
          ]),
      opts.restartOnFailure ? 'Restart=on-failure' : 'Restart=no',
      ...(opts.restartOnFailure ? ['RestartSec=1'] : []),
      `TimeoutStopSec=${opts.timeoutStopSec ?? 5}`,
      'LimitNOFILE=1048576',
      '',
      '[Install]',
      'WantedBy=multi-user.target',
      '',
    ].join('\n');
    const unitFilePath = path.join(unitDir, unit);
    await fsp.writeFile(unitFilePath, defaultUnitText);
    await fsp.writeFile(path.join(stateDir, 'sim.json'), JSON.stringify(opts.sim ?? {}, null, 2));
    await fsp.writeFile(path.join(stateDir, 'exec.log'), '');
    // --- login users, sudoers.d and /etc/group of the namespace --------------------------
    const users = [...new Set(opts.users ?? [])];
    const userIds = new Map(users.map((u) => [u, ensureLoginUser(u)] as const));
    const sudoersDir = path.join(fix, 'ns', 'sudoers.d');
    await fsp.mkdir(sudoersDir, { recursive: true });
    await fsp.chmod(sudoersDir, 0o755);
    const groupFile = path.join(fix, 'ns', 'group');
    await fsp.copyFile('/etc/group', groupFile);
    await fsp.chmod(groupFile, 0o644);
    if (users.length) {
      // What the users read without sudo (systemctl show, journalctl, the stand-ins): readable by
      // all, written only by root (that is, through sudo). exec.log is the harness's record of
      // every stand-in call, the users' own included: anyone may append to it.
      await fsp.chmod(fix, 0o711);
      for (const d of [stateDir, path.join(stateDir, 'units'), path.join(stateDir, 'journal'), binDir])
        await fsp.chmod(d, 0o755);
      await fsp.chmod(path.join(stateDir, 'exec.log'), 0o666);
      for (const [u, id] of userIds)
        assertUserCanRun(
          u,
          id,
          node,
          files,
          STAND_INS.filter((n) => n !== 'sudo'),
        );
    }
    const journalAccessFile = path.join(stateDir, 'journal-access.json');
    const writeJournalAccess = async (mode: JournalAccess): Promise<void> => {
      if (!['allowed', 'denied-hint', 'denied-no-files'].includes(mode))
        throw new Error(`unknown journal access ${JSON.stringify(mode)}`);
      const tmp = `${journalAccessFile}.${process.pid}.tmp`;
      await fsp.writeFile(tmp, JSON.stringify({ mode }));
      await fsp.rename(tmp, journalAccessFile);
    };
    await writeJournalAccess(opts.journalAccess ?? 'allowed');

    const standInEnv = { ...process.env, KIMI_SIM_ROOT: stateDir, KIMI_SIM_NO_EXECLOG: '1' };
    const daemonReload = () => mustRun(node, [files.standIn('systemctl'), 'daemon-reload'], { env: standInEnv });
    await daemonReload();

    // --- keys ----------------------------------------------------------------------------
    const passphrase = `pp-${crypto.randomBytes(6).toString('hex')}`;
    const hostKey = path.join(sshDir, 'ssh_host_ed25519_key');
    const clientKeyPath = path.join(sshDir, 'client_ed25519');
    const encryptedClientKeyPath = path.join(sshDir, 'client_ed25519_enc');
    const harnessKey = path.join(sshDir, 'harness_ed25519');
    await Promise.all([
      mustRun('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kimi-sim-host', '-f', hostKey]),
      mustRun('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kimi-sim-client', '-f', clientKeyPath]),
      mustRun('ssh-keygen', [
        '-q',
        '-t',
        'ed25519',
        '-N',
        passphrase,
        '-C',
        'kimi-sim-client-enc',
        '-f',
        encryptedClientKeyPath,
      ]),
      mustRun('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kimi-sim-harness', '-f', harnessKey]),
    ]);
    const pub = async (f: string) => (await fsp.readFile(`${f}.pub`, 'utf8')).trim();
    const hostPubFull = await pub(hostKey);
    const hostPublicKey = hostPubFull.split(/\s+/).slice(0, 2).join(' ');
    const hostKeyFingerprint = keyFingerprint(hostPublicKey);
    const harnessFingerprint = keyFingerprint(await pub(harnessKey));
    await fsp.writeFile(
      path.join(sshDir, 'authorized_keys'),
      [await pub(clientKeyPath), await pub(encryptedClientKeyPath), await pub(harnessKey), ''].join('\n'),
      { mode: 0o600 },
    );
    const hostPattern = `[${opts.network?.address ?? '127.0.0.1'}]:${sshPort}`;
    const knownHostsLine = (o?: { hashed?: boolean }): string => {
      if (!o?.hashed) return `${hostPattern} ${hostPublicKey}`;
      const salt = crypto.randomBytes(20);
      const hash = crypto.createHmac('sha1', salt).update(hostPattern).digest();
      return `|1|${salt.toString('base64')}|${hash.toString('base64')} ${hostPublicKey}`;
    };
    const harnessKnownHosts = path.join(sshDir, 'known_hosts_harness');
    await fsp.writeFile(harnessKnownHosts, `${knownHostsLine()}\n`);
    // Each user's authorized_keys in the fixture, owned by the user (sshd reads it as the user).
    const userKeysFile = (u: string) => path.join(sshDir, 'users', u, 'authorized_keys');
    for (const [u, id] of userIds) {
      const file = userKeysFile(u);
      await fsp.mkdir(path.dirname(file), { recursive: true });
      await fsp.chmod(sshDir, 0o711);
      await fsp.chmod(path.join(sshDir, 'users'), 0o711);
      await fsp.writeFile(
        file,
        [await pub(clientKeyPath), await pub(encryptedClientKeyPath), await pub(harnessKey), ''].join('\n'),
        { mode: 0o600 },
      );
      await fsp.chown(path.dirname(file), id.uid, id.gid);
      await fsp.chmod(path.dirname(file), 0o700);
      await fsp.chown(file, id.uid, id.gid);
    }

    const sessionPath = `${binDir}:/usr/local/bin:/usr/bin:/bin`;
    const sshAddress = opts.network?.address ?? '127.0.0.1';
    const sshdConfig = path.join(sshDir, 'sshd_config');
    const codes = opts.oneTimeCodes ? await setUpOneTimeCodes(fix, opts.oneTimeCodes) : undefined;
    let tcpForwarding = opts.allowTcpForwarding !== false;
    const extraSshd = opts.sshdConfig?.({ sshDir, hostKey }) ?? [];
    const writeSshdConfig = () =>
      fsp.writeFile(
        sshdConfig,
        [
          ...extraSshd,
          `Port ${sshPort}`,
          `ListenAddress ${sshAddress}`,
          `HostKey ${hostKey}`,
          `AuthorizedKeysFile ${path.join(sshDir, 'authorized_keys')}`,
          'PubkeyAuthentication yes',
          'PermitRootLogin prohibit-password',
          'PasswordAuthentication no',
          ...(codes?.global ?? ['KbdInteractiveAuthentication no', 'UsePAM no']),
          'StrictModes no',
          `PidFile ${path.join(sshDir, 'sshd.pid')}`,
          `SetEnv PATH=${sessionPath} KIMI_SIM_ROOT=${stateDir}`,
          `AllowTcpForwarding ${tcpForwarding ? 'yes' : 'no'}`,
          'LogLevel VERBOSE',
          'PrintMotd no',
          'PrintLastLog no',
          'Subsystem sftp /usr/lib/openssh/sftp-server',
          ...users.flatMap((u) => [
            `Match User ${u}`,
            `  AuthorizedKeysFile ${userKeysFile(u)}`,
            ...(codes?.perUser(u) ?? []),
          ]),
          '',
        ].join('\n'),
      );
    await writeSshdConfig();

    // Login shells (/etc/profile) and root's ~/.bashrc may reset or prepend PATH; inside the
    // namespace they are bind-mounted copies that put FIX/bin back in front.
    const restorePath = `\n# kimi simulated GPU host: keep the stand-ins first on PATH\nif [ -n "$KIMI_SIM_ROOT" ]; then PATH="${binDir}:$PATH"; export PATH; fi\n`;
    // /etc/profile: the machine's own plus the PATH fix. /root/.bashrc (bash sources it for
    // every SSH command): a minimal one, so this machine's personal dotfiles (pyenv init
    // costs ~0.4 s here) neither slow down nor alter every remote command.
    try {
      await fsp.writeFile(path.join(fix, 'ns', 'profile'), (await fsp.readFile('/etc/profile', 'utf8')) + restorePath);
    } catch {
      /* no /etc/profile */
    }
    await fsp.writeFile(
      path.join(fix, 'ns', 'bashrc'),
      `# ~/.bashrc of the simulated GPU host (bind-mounted in its namespace)${restorePath}`,
    );
    await modelP;

    // --- the namespaces ------------------------------------------------------------------
    const unshare = ['unshare', '--mount', '--pid', '--fork', '--mount-proc', '--kill-child', 'sh', NS_INIT, fix];
    // In its own network namespace: nsenter execs unshare there (same pid, so the tree below stays as drawn).
    const nsCommand = opts.network ? ['nsenter', `--net=/run/netns/${opts.network.netns}`, ...unshare] : unshare;
    const ns = spawn(nsCommand[0]!, nsCommand.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    const nsHandle = {
      kill: () => {
        try {
          ns.kill('SIGKILL');
        } catch {
          /* */
        }
      },
      fixture: fix,
    };
    live.add(nsHandle);
    let nsExited = false;
    const nsExit = new Promise<void>((resolve) =>
      ns.on('exit', () => {
        nsExited = true;
        resolve();
      }),
    );
    cleanupOnError.unshift(async () => {
      nsHandle.kill();
      await nsExit;
      live.delete(nsHandle);
    });
    let nsErr = '';
    ns.stderr.setEncoding('utf8').on('data', (d: string) => {
      nsErr += d;
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(`ns-init did not become ready: ${nsErr}`)), 10000);
      ns.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('READY')) {
          clearTimeout(t);
          resolve();
        }
      });
      ns.on('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`unshare exited (${code}): ${nsErr}`));
      });
    });
    let initPid = 0;
    for (let i = 0; i < 100 && !initPid; i++) {
      const kids = readChildren(ns.pid!);
      if (kids.length) initPid = kids[0];
      else await sleep(10);
    }
    if (!initPid) throw new Error('could not find the namespace init process');
    const pidNs = pidNsOf(initPid)!;
    const nsEnv = {
      PATH: `${binDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      KIMI_SIM_ROOT: stateDir,
      HOME: '/root',
      LANG: 'C.UTF-8',
    };

    // -n: init's network namespace (this machine's, or the host's own with GpuHostOptions.network)
    const nsEnter = ['-t', String(initPid), '-m', '-p', ...(opts.network ? ['-n'] : [])];
    const nsExec = (command: string): Promise<ExecResult> =>
      run('nsenter', [...nsEnter, '--', '/bin/sh', '-c', command], { env: nsEnv, timeoutMs: 60000 });

    // --- sshd ----------------------------------------------------------------------------
    const sshdLines: string[] = [];
    let sshd: ChildProcess | undefined;
    let sshdExit: Promise<void> = Promise.resolve();
    const sshdHandle = {
      kill: () => {
        try {
          sshd?.kill('SIGKILL');
        } catch {
          /* */
        }
      },
    };
    const sshdProcs = () => hostPidsInNs(pidNs).filter((p) => commOf(p) === 'sshd');
    const startSshd = async (): Promise<void> => {
      if (sshd && sshd.exitCode === null && sshd.signalCode === null) return;
      const child = spawn('nsenter', [...nsEnter, '--', SSHD, '-D', '-e', '-f', sshdConfig], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...nsEnv, ...opts.sshdEnv?.() },
      });
      sshd = child;
      live.add(sshdHandle);
      let partial = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        partial += d;
        const lines = partial.split('\n');
        partial = lines.pop()!;
        sshdLines.push(...lines);
      });
      let exited = false;
      sshdExit = new Promise<void>((resolve) =>
        child.on('exit', () => {
          exited = true;
          resolve();
        }),
      );
      try {
        await waitForSshBanner(sshPort, 10000, () => !exited, sshAddress);
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${sshdLines.join('\n')}`);
      }
    };
    const stopSshd = async (): Promise<void> => {
      // every sshd of the namespace: the listener and the per-connection processes
      for (let i = 0; i < 50; i++) {
        const procs = sshdProcs();
        if (!procs.length) break;
        for (const p of procs) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            /* */
          }
        }
        await sleep(20);
      }
      await sshdExit;
      live.delete(sshdHandle);
    };
    cleanupOnError.unshift(stopSshd);
    await startSshd();

    const loginOf = (user = 'root'): Login => {
      if (user !== 'root' && !userIds.has(user))
        throw new Error(
          `${user} is not a login of this simulated host (GpuHostOptions.users: ${JSON.stringify(users)})`,
        );
      return { username: user, identityFile: clientKeyPath };
    };
    const ssh = (command: string, o?: { user?: string }): Promise<ExecResult> =>
      run(
        'ssh',
        [
          '-F',
          '/dev/null',
          '-i',
          harnessKey,
          '-p',
          String(sshPort),
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          'StrictHostKeyChecking=yes',
          '-o',
          `UserKnownHostsFile=${harnessKnownHosts}`,
          '-o',
          'GlobalKnownHostsFile=/dev/null',
          '-o',
          'BatchMode=yes',
          '-o',
          'ConnectTimeout=10',
          '-o',
          'LogLevel=ERROR',
          `${loginOf(o?.user).username}@${sshAddress}`,
          command,
        ],
        { timeoutMs: 120000 },
      );

    const visudo = ['/usr/sbin/visudo', '/sbin/visudo'].find((p) => fs.existsSync(p));
    const editGroup = async (user: string, group: string, add: boolean): Promise<void> => {
      if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(group)) throw new Error(`not a group name: ${JSON.stringify(group)}`);
      const text = await fsp.readFile(groupFile, 'utf8');
      // written in place: the bind mount over /etc/group holds this inode
      await fsp.writeFile(groupFile, editGroupText(text, user, group, add));
    };

    const readExecLog = async (): Promise<string[]> => {
      try {
        return (await fsp.readFile(path.join(stateDir, 'exec.log'), 'utf8')).split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    const readJournal = async (): Promise<JournalEntry[]> => {
      let text = '';
      try {
        text = await fsp.readFile(path.join(stateDir, 'journal', `${unit}.jsonl`), 'utf8');
      } catch {
        return [];
      }
      const out: JournalEntry[] = [];
      for (const l of text.split('\n')) {
        if (l) {
          try {
            out.push(JSON.parse(l));
          } catch {
            /* torn */
          }
        }
      }
      return out;
    };
    const mainPid = async (): Promise<number> => {
      try {
        return (
          Number(JSON.parse(await fsp.readFile(path.join(stateDir, 'units', `${unit}.json`), 'utf8')).MainPID) || 0
        );
      } catch {
        return 0;
      }
    };

    let stopped = false;
    const host: GpuHost = {
      fixtureDir: fix,
      stateDir,
      sshHost: sshAddress,
      sshPort,
      username: 'root',
      httpPort,
      serverUrl: `http://127.0.0.1:${httpPort}`,
      unit,
      unitName,
      modelPath,
      clientKeyPath,
      encryptedClientKeyPath,
      encryptedKeyPassphrase: passphrase,
      hostPublicKey,
      hostKeyFingerprint,
      unitFilePath,
      defaultUnitText,
      knownHostsLine,
      async configureSimulator(patch) {
        const file = path.join(stateDir, 'sim.json');
        let cur: Record<string, unknown> = {};
        try {
          cur = JSON.parse(await fsp.readFile(file, 'utf8'));
        } catch {
          /* fresh */
        }
        const tmp = `${file}.${process.pid}.tmp`;
        // Each top-level key of the patch replaces the old value, so `{fault: {}}` clears every fault.
        await fsp.writeFile(tmp, JSON.stringify({ ...cur, ...patch }, null, 2));
        await fsp.rename(tmp, file);
      },
      async setStopDelay(ms) {
        await host.configureSimulator({ stopDelayMs: Math.max(0, Math.round(ms)) });
      },
      setJournalAccess: writeJournalAccess,
      async setTcpForwarding(allowed) {
        if (allowed === tcpForwarding) return;
        tcpForwarding = allowed;
        await writeSshdConfig();
        const listener = sshd ? readChildren(sshd.pid!).find((p) => commOf(p) === 'sshd') : undefined;
        if (!listener) return; // sshd is down: startSshd() reads the new file
        // sshd -D -e logs "Server listening on ..." each time it (re)starts listening
        const listening = () => sshdLines.filter((l) => l.includes('Server listening on')).length;
        const before = listening();
        process.kill(listener, 'SIGHUP');
        const end = Date.now() + 10000;
        while (listening() === before) {
          if (Date.now() > end)
            throw new Error(`sshd did not reload its configuration\n${sshdLines.slice(-5).join('\n')}`);
          await sleep(20);
        }
        await waitForSshBanner(sshPort, 10000, () => !!sshd && sshd.exitCode === null, sshAddress);
      },
      async writeUnit(text, o) {
        await fsp.writeFile(unitFilePath, text);
        if (o?.reload !== false) await daemonReload();
      },
      async readDropIns() {
        const dir = path.join(unitDir, `${unit}.d`);
        const out: Record<string, string> = {};
        let names: string[] = [];
        try {
          names = (await fsp.readdir(dir)).filter((n) => n.endsWith('.conf')).sort();
        } catch {
          return out;
        }
        for (const n of names) out[n] = await fsp.readFile(path.join(dir, n), 'utf8');
        return out;
      },
      ssh,
      login: loginOf,
      async installSudoers(text, name = 'kimi') {
        if (!/^[A-Za-z0-9_-]+$/.test(name))
          throw new Error(`sudo would skip the sudoers.d file name ${JSON.stringify(name)}`);
        if (!visudo) throw new Error('visudo is missing: install the sudo package (scripts/ensure-system-packages.sh)');
        // A name with a dot: sudo's @includedir skips it until it is complete and checked.
        const tmp = path.join(sudoersDir, `.${name}.tmp`);
        await fsp.writeFile(tmp, text, { mode: 0o440 });
        await fsp.chmod(tmp, 0o440);
        const check = await run(visudo, ['-c', '-q', '-f', tmp]);
        if (check.code !== 0) {
          await fsp.rm(tmp, { force: true });
          throw new Error(`visudo refuses the sudoers text: ${check.stdout}${check.stderr}`);
        }
        await fsp.rename(tmp, path.join(sudoersDir, name));
      },
      async removeSudoers() {
        for (const n of await fsp.readdir(sudoersDir)) await fsp.rm(path.join(sudoersDir, n), { force: true });
      },
      addToGroup: (user, group) => editGroup(user, group, true),
      removeFromGroup: (user, group) => editGroup(user, group, false),
      nsExec,
      mainPid,
      async killServer(signal = 'SIGKILL') {
        const pid = await mainPid();
        if (!pid) throw new Error(`${unit} has no MainPID (not running)`);
        const sig = signal.replace(/^SIG/, '');
        const r = await nsExec(`kill -s ${sig} ${pid}`);
        if (r.code !== 0) throw new Error(`kill -s ${sig} ${pid} failed: ${r.stderr}`);
      },
      stopSshd,
      startSshd,
      sshdRunning: () => !!sshd && sshd.exitCode === null && sshd.signalCode === null,
      handshakes(o) {
        return sshdLines.filter(
          (l) => l.includes('Accepted publickey') && (o?.includeHarness || !l.includes(harnessFingerprint)),
        ).length;
      },
      sshdLog: () => sshdLines.slice(),
      execLog: readExecLog,
      execEntries: async () => (await readExecLog()).map(parseExecLine),
      async journal() {
        return (await readJournal()).map((e) => e.msg);
      },
      async appendJournal(msg, o) {
        const e = { t: Date.now() * 1000, pid: o?.pid ?? 1, ident: o?.ident ?? 'systemd', unit, msg };
        await fsp.appendFile(path.join(stateDir, 'journal', `${unit}.jsonl`), `${JSON.stringify(e)}\n`);
      },
      journalEntries: readJournal,
      async firedUpAt() {
        const j = await readJournal();
        let start = -1;
        for (let i = j.length - 1; i >= 0; i--) {
          if (j[i].pid === 1 && j[i].msg.startsWith(`Started ${unit}`)) {
            start = i;
            break;
          }
        }
        for (let i = start + 1; i < j.length; i++) {
          if (j[i].pid !== 1 && j[i].msg.includes(READY_LINE)) return Math.floor(j[i].t / 1000);
        }
        return undefined;
      },
      nsPids: () => (nsExited ? [] : hostPidsInNs(pidNs)),
      async setNetworkLink(up) {
        if (!opts.network)
          throw new Error("this simulated host shares the machine's network (start it with GpuHostOptions.network)");
        await opts.network.setLink(up);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await stopSshd();
        } catch {
          /* */
        }
        // closing init's stdin makes it exit (its parent unshare reaps it, then exits);
        // SIGKILL to unshare (--kill-child) is the fallback
        try {
          ns.stdin!.end();
        } catch {
          /* */
        }
        const t = setTimeout(() => nsHandle.kill(), 2000);
        await nsExit;
        clearTimeout(t);
        live.delete(nsHandle);
        // the pid namespace dies with its init; wait until the kernel has reaped everything
        for (let i = 0; i < 100 && hostPidsInNs(pidNs).length; i++) await sleep(20);
        await fsp.rm(fix, { recursive: true, force: true });
      },
    };

    // Sanity: the session PATH must reach commands run over SSH.
    const check = await ssh('command -v systemctl');
    if (check.code !== 0 || check.stdout.trim() !== path.join(binDir, 'systemctl')) {
      throw new Error(`SSH session PATH does not start with ${binDir}: ${JSON.stringify(check)}`);
    }
    return host;
  } catch (e) {
    for (const f of cleanupOnError) {
      try {
        await f();
      } catch {
        /* */
      }
    }
    throw e;
  }
}
