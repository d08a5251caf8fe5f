/**
 * "Connect like OpenSSH", against real OpenSSH daemons on loopback: the configuration is read
 * from a ~/.ssh/config in a throw-away home (loadSshTarget, as the extension does) and the
 * connection made by SshTransport. Daemons: a target, a jump host, and a host with a host
 * certificate, each a plain `sshd -D` with its own keys (LogLevel DEBUG1, so the test sees
 * every key a client offers). The agent is a real `ssh-agent` started by the test, keys added
 * with `ssh-add` (the encrypted one through an SSH_ASKPASS script).
 */
import { strict as assert } from 'node:assert';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fingerprintSha256 } from '../../src/transport/ssh/knownHosts';
import { loadSshTarget } from '../../src/transport/ssh/sshConfig';
import { SshTransport } from '../../src/transport/ssh/sshTransport';
import type { SshTransportOptions } from '../../src/transport/ssh/sshOptions';
import { waitFor } from '../util/waitFor';
import { freePort } from '../util/freePort';
import { refusingAsker } from '../util/refusingAsker';
import { stopChild } from '../util/stopChild';
import { transportRejection as rejection } from '../util/rejection';

const SSHD = '/usr/sbin/sshd';

function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The OpenSSH client's own run of `command` as root, the host key checked against `knownHosts` only. */
function opensshRun(identity: string, port: number, knownHosts: string, command: string) {
  return run('ssh', [
    '-F',
    '/dev/null',
    '-i',
    identity,
    '-p',
    String(port),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'BatchMode=yes',
    'root@127.0.0.1',
    command,
  ]);
}

interface Key {
  path: string;
  pub: string; // "type base64"
  fingerprint: string;
}

function keygen(file: string, passphrase = '', type = 'ed25519'): Key {
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', passphrase, '-C', path.basename(file), '-f', file]);
  const pub = fs.readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  return { path: file, pub, fingerprint: fingerprintSha256(Buffer.from(pub.split(' ')[1], 'base64')) };
}

/** A plain OpenSSH sshd on 127.0.0.1 (root logins with keys only). */
class Sshd {
  readonly lines: string[] = [];
  port = 0;
  hostKey!: Key;
  private child?: ChildProcess;

  constructor(
    readonly name: string,
    private readonly dir: string,
    private readonly authorized: () => readonly Key[],
    private readonly extra: readonly string[] = [],
  ) {}

  get knownHostsLine(): string {
    return `[127.0.0.1]:${this.port} ${this.hostKey.pub}`;
  }

  private get configFile(): string {
    return path.join(this.dir, 'sshd_config');
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    fs.mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation directory
    this.hostKey = keygen(path.join(this.dir, 'host_ed25519'));
    this.port = await freePort();
    const authorizedKeys = path.join(this.dir, 'authorized_keys');
    fs.writeFileSync(
      authorizedKeys,
      this.authorized()
        .map((k) => k.pub)
        .join('\n') + '\n',
      { mode: 0o600 },
    );
    fs.writeFileSync(
      this.configFile,
      [
        `Port ${this.port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${this.hostKey.path}`,
        `AuthorizedKeysFile ${authorizedKeys}`,
        'PubkeyAuthentication yes',
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'StrictModes no',
        'UsePAM no',
        'AllowTcpForwarding yes',
        `PidFile ${path.join(this.dir, 'sshd.pid')}`,
        'LogLevel DEBUG1',
        ...this.extra,
        '',
      ].join('\n'),
    );
    await this.launch();
  }

  /** Starts sshd on the config as it is now (same host key and port); `addLines` are appended first. */
  async launch(...addLines: string[]): Promise<void> {
    if (addLines.length > 0) fs.appendFileSync(this.configFile, addLines.join('\n') + '\n');
    const child = spawn(SSHD, ['-D', '-e', '-f', this.configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    const from = this.lines.length;
    let partial = '';
    child.stderr!.on('data', (d: Buffer) => {
      const parts = (partial + d.toString()).split('\n');
      partial = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    await waitFor(
      () => this.lines.slice(from).some((l) => l.includes('Server listening on')) || child.exitCode !== null,
      {
        timeoutMs: 10_000,
        intervalMs: 20,
        message: `${this.name} sshd listening`,
      },
    );
    if (child.exitCode !== null) throw new Error(`${this.name} sshd exited: ${this.lines.join('\n')}`);
  }

  /** Fingerprints of the keys clients offered (queried) since `from` (an index into `lines`). */
  offered(from = 0): string[] {
    return this.lines.slice(from).flatMap((l) => /userauth_pubkey: .*pkblob \S+ (SHA256:\S+)/.exec(l)?.[1] ?? []);
  }

  accepted(from = 0): string[] {
    return this.lines
      .slice(from)
      .flatMap((l) => /Accepted publickey for \S+ from .* ssh2: \S+ (SHA256:\S+)/.exec(l)?.[1] ?? []);
  }

  /**
   * Waits until the log (a pipe, read apart from the SSH socket) shows what a client already
   * saw: `n` accepted logins, or the connection's end, since `from`.
   */
  async caughtUp(from: number, what: 'accepted' | 'closed', n = 1): Promise<void> {
    const done = () =>
      what === 'accepted'
        ? this.accepted(from).length >= n
        : this.lines
            .slice(from)
            .some((l) =>
              /Disconnecting|Connection closed|Disconnected from|Received disconnect|maximum authentication attempts/.test(
                l,
              ),
            );
    await waitFor(done, { timeoutMs: 5000, intervalMs: 10, message: `${this.name} sshd log: ${what}` });
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/** A real ssh-agent (foreground, so this test owns its pid) on a socket of its own. */
class Agent {
  readonly socket: string;
  private child?: ChildProcess;

  constructor(private readonly dir: string) {
    this.socket = path.join(dir, 'agent.sock');
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    this.child = spawn('ssh-agent', ['-D', '-a', this.socket], { stdio: 'ignore' });
    await waitFor(() => fs.existsSync(this.socket), { timeoutMs: 10_000, intervalMs: 20, message: 'ssh-agent socket' });
  }

  /** ssh-add, answering an encrypted key's passphrase through SSH_ASKPASS (no terminal). */
  async add(key: Key, passphrase?: string): Promise<void> {
    const askpass = path.join(this.dir, `askpass-${path.basename(key.path)}`);
    fs.writeFileSync(askpass, `#!/bin/sh\nprintf '%s\\n' '${(passphrase ?? '').replace(/'/g, `'\\''`)}'\n`, {
      mode: 0o700,
    });
    const env = {
      ...process.env,
      SSH_AUTH_SOCK: this.socket,
      SSH_ASKPASS: askpass,
      SSH_ASKPASS_REQUIRE: 'force',
      DISPLAY: 'none',
    };
    const r = await run('ssh-add', [key.path], env);
    assert.equal(r.code, 0, `ssh-add ${key.path}: ${r.stderr}`);
  }

  async list(): Promise<string[]> {
    const r = await run('ssh-add', ['-l'], { ...process.env, SSH_AUTH_SOCK: this.socket });
    return r.stdout.split('\n').flatMap((l) => /(SHA256:\S+)/.exec(l)?.[1] ?? []);
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

describe('SSH parity with OpenSSH (real sshd, ssh-agent, ~/.ssh/config)', function () {
  this.timeout(120_000);
  let tmp: string;
  let home: string;
  let dotSsh: string;
  let target: Sshd;
  let jump: Sshd;
  let certHost: Sshd;
  const keys: Record<string, Key> = {};
  const PASSPHRASE = 'correct horse battery';
  const open: SshTransport[] = [];
  const agents: Agent[] = [];

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ssh-parity-'));
    home = path.join(tmp, 'home');
    dotSsh = path.join(home, '.ssh');
    fs.mkdirSync(dotSsh, { recursive: true, mode: 0o700 });
    keys.id = keygen(path.join(dotSsh, 'id_test'));
    keys.enc = keygen(path.join(dotSsh, 'id_encrypted'), PASSPHRASE);
    keys.file = keygen(path.join(dotSsh, 'id_file'));
    keys.agentOnly = keygen(path.join(tmp, 'agent_only'));
    for (let i = 1; i <= 4; i++) keys[`decoy${i}`] = keygen(path.join(tmp, `decoy${i}`));
    keys.wanted = keygen(path.join(tmp, 'wanted'));
    // only id_wanted.pub is in ~/.ssh (as with 1Password or Secretive): the agent holds the private half
    fs.copyFileSync(`${keys.wanted.path}.pub`, path.join(dotSsh, 'id_wanted.pub'));
    const authorized = [keys.id, keys.enc, keys.file, keys.agentOnly, keys.wanted];
    // MaxAuthTries 3: an agent that offers four wrong keys first gets the connection closed.
    target = new Sshd('target', path.join(tmp, 'sshd-target'), () => authorized, ['MaxAuthTries 3']);
    jump = new Sshd('jump', path.join(tmp, 'sshd-jump'), () => [keys.id]);
    const caDir = path.join(tmp, 'ca');
    fs.mkdirSync(caDir);
    keys.ca = keygen(path.join(caDir, 'host_ca'));
    certHost = new Sshd('cert-host', path.join(tmp, 'sshd-cert'), () => [keys.id]);
    await Promise.all([target.start(), jump.start()]);
    // The certificate host: start once to make its host key, sign it, restart with HostCertificate.
    await certHost.start();
    await certHost.stop();
    execFileSync('ssh-keygen', [
      '-q',
      '-s',
      keys.ca.path,
      '-h',
      '-I',
      'cert-host',
      '-n',
      '127.0.0.1',
      `${certHost.hostKey.path}.pub`,
    ]);
    await certHost.launch(`HostCertificate ${certHost.hostKey.path}-cert.pub`);
  });

  after(async () => {
    for (const t of open) t.dispose();
    for (const a of agents) await a.stop();
    await Promise.all([target?.stop(), jump?.stop(), certHost?.stop()]);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  afterEach(async () => {
    while (open.length) open.pop()!.dispose();
    while (agents.length) await agents.pop()!.stop();
    for (const f of fs.readdirSync(dotSsh))
      if (/^(config|known_hosts)/.test(f) || f === 'conf.d' || f === 'kh.d')
        fs.rmSync(path.join(dotSsh, f), { recursive: true, force: true });
  });

  async function startAgent(): Promise<Agent> {
    const a = new Agent(path.join(tmp, `agent-${agents.length}-${Date.now()}`));
    agents.push(a);
    await a.start();
    return a;
  }

  function writeConfig(text: string): void {
    fs.writeFileSync(path.join(dotSsh, 'config'), text);
  }

  function writeKnownHosts(file: string, ...lines: string[]): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, lines.join('\n') + '\n');
  }

  /** The connection the extension makes for `host`, from this test's ~/.ssh/config; no $SSH_AUTH_SOCK. */
  async function connectTo(host: string, over: Partial<SshTransportOptions> = {}) {
    const { asked, passphraseAsks, questions } = refusingAsker();
    const log: string[] = [];
    const t = new SshTransport({
      target: await loadSshTarget({ host }, { homeDir: home, localUser: 'root', env: {} }),
      knownHostsFile: path.join(dotSsh, 'known_hosts'),
      env: {},
      ...questions,
      log: (m) => log.push(m),
      ...over,
    });
    open.push(t);
    return { t, asked, passphraseAsks, log };
  }

  const hostBlock = (alias: string, s: Sshd, ...lines: string[]) =>
    [
      `Host ${alias}`,
      '  HostName 127.0.0.1',
      `  Port ${s.port}`,
      '  User root',
      ...lines.map((l) => `  ${l}`),
      '',
    ].join('\n');

  it('agent first: an encrypted key held by ssh-agent (IdentityAgent) logs in, no passphrase asked', async () => {
    const agent = await startAgent();
    await agent.add(keys.enc, PASSPHRASE);
    assert.deepEqual(await agent.list(), [keys.enc.fingerprint]);
    writeConfig(hostBlock('gpu', target, `IdentityFile ~/.ssh/id_encrypted`, `IdentityAgent ${agent.socket}`));
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);
    const from = target.lines.length;
    const { t, passphraseAsks, log } = await connectTo('gpu');
    assert.equal((await t.exec('echo through-agent')).stdout, 'through-agent\n');
    assert.deepEqual(passphraseAsks, [], 'the agent signed: no passphrase asked');
    assert.ok(
      log.includes(`gpu: agent: ssh-agent ${agent.socket} (IdentityAgent) ${keys.enc.fingerprint}`),
      log.join('\n'),
    );
    await target.caughtUp(from, 'accepted');
    assert.deepEqual(target.accepted(from), [keys.enc.fingerprint]);
  });

  it('the agent is asked before the identity files; a file is unlocked only when the agent cannot sign', async () => {
    const agent = await startAgent();
    await agent.add(keys.agentOnly);
    // both the agent's key and the (unencrypted) file key would do: the agent's is used
    writeConfig(hostBlock('gpu', target, 'IdentityFile ~/.ssh/id_file', `IdentityAgent ${agent.socket}`));
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);
    let from = target.lines.length;
    const first = await connectTo('gpu');
    await first.t.connect();
    await target.caughtUp(from, 'accepted');
    assert.deepEqual(target.offered(from), [keys.agentOnly.fingerprint]);
    assert.deepEqual(target.accepted(from), [keys.agentOnly.fingerprint]);

    // an agent without the encrypted key: the file is tried next and its passphrase is asked
    writeConfig(hostBlock('gpu', target, 'IdentityFile ~/.ssh/id_encrypted', `IdentityAgent ${agent.socket}`));
    fs.writeFileSync(path.join(tmp, 'sshd-target', 'authorized_keys'), `${keys.enc.pub}\n`);
    try {
      from = target.lines.length;
      const asks: string[] = [];
      const second = await connectTo('gpu', {
        requestPassphrase: async (p) => {
          asks.push(p);
          return PASSPHRASE;
        },
      });
      await second.t.connect();
      await target.caughtUp(from, 'accepted');
      assert.deepEqual(asks, [keys.enc.path]);
      assert.deepEqual(
        target.offered(from),
        [keys.agentOnly.fingerprint, keys.enc.fingerprint],
        'agent key first, then the file',
      );
      assert.deepEqual(target.accepted(from), [keys.enc.fingerprint]);
    } finally {
      fs.writeFileSync(
        path.join(tmp, 'sshd-target', 'authorized_keys'),
        [keys.id, keys.enc, keys.file, keys.agentOnly, keys.wanted].map((k) => k.pub).join('\n') + '\n',
      );
    }
  });

  it('IdentitiesOnly yes: of an agent holding five keys only the configured one is offered', async () => {
    const agent = await startAgent();
    for (const k of [keys.decoy1, keys.decoy2, keys.decoy3, keys.decoy4, keys.wanted]) await agent.add(k);
    assert.equal((await agent.list()).length, 5);
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);

    // Without IdentitiesOnly the agent's keys go in its order: four wrong ones exceed MaxAuthTries 3.
    writeConfig(hostBlock('gpu', target, 'IdentityFile ~/.ssh/id_wanted', `IdentityAgent ${agent.socket}`));
    let from = target.lines.length;
    const loose = await connectTo('gpu');
    const err = await rejection(loose.t.connect());
    await target.caughtUp(from, 'closed');
    assert.equal(err.kind, 'auth', err.message);
    assert.match(
      err.message,
      /Too many authentication failures\); tried: ssh-agent .* \(IdentityAgent\) SHA256:.*IdentitiesOnly yes/,
    );
    assert.ok(target.offered(from).length >= 3, `offered: ${target.offered(from).join(', ')}`);
    assert.ok(!target.offered(from).includes(keys.wanted.fingerprint));

    // With it (and only id_wanted.pub on disk, as with 1Password or Secretive): just that key.
    writeConfig(
      hostBlock('gpu', target, 'IdentityFile ~/.ssh/id_wanted', 'IdentitiesOnly yes', `IdentityAgent ${agent.socket}`),
    );
    from = target.lines.length;
    const strict = await connectTo('gpu');
    assert.equal((await strict.t.exec('echo only')).stdout, 'only\n');
    await target.caughtUp(from, 'accepted');
    assert.deepEqual(target.offered(from), [keys.wanted.fingerprint]);
    assert.deepEqual(target.accepted(from), [keys.wanted.fingerprint]);
    assert.ok(
      strict.log.some((l) => l.includes('IdentitiesOnly yes')),
      strict.log.join('\n'),
    );
  });

  it('$SSH_AUTH_SOCK is the agent when the config names none; IdentityAgent none turns it off', async () => {
    const agent = await startAgent();
    await agent.add(keys.agentOnly);
    writeConfig(hostBlock('gpu', target) + hostBlock('noagent', target, 'IdentityAgent none'));
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);
    const withEnv = await connectTo('gpu', { env: { SSH_AUTH_SOCK: agent.socket } });
    assert.equal((await withEnv.t.exec('echo env-agent')).stdout, 'env-agent\n');
    const off = await connectTo('noagent', { env: { SSH_AUTH_SOCK: agent.socket } });
    const err = await rejection(off.t.connect());
    assert.equal(err.kind, 'auth');
    assert.match(err.message, /tried: no key and no ssh-agent/);
  });

  it('Include with a glob (relative to ~/.ssh); unsupported directives named in the log', async () => {
    fs.mkdirSync(path.join(dotSsh, 'conf.d'));
    fs.writeFileSync(
      path.join(dotSsh, 'conf.d', '10-gpu.conf'),
      hostBlock(
        'included-gpu',
        target,
        'IdentityFile ~/.ssh/id_test',
        'LocalForward 18080 127.0.0.1:80',
        'ControlMaster auto',
      ),
    );
    fs.writeFileSync(path.join(dotSsh, 'conf.d', '20-late.conf'), 'Host included-gpu\n  Port 1\n  User nobody\n');
    fs.writeFileSync(path.join(dotSsh, 'conf.d', 'notes.txt'), 'Host included-gpu\n  Port 2\n');
    writeConfig('Include conf.d/*.conf\n\nHost *\n  ServerAliveInterval 9\n');
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);
    const { t, log } = await connectTo('included-gpu');
    assert.equal((await t.exec('echo included')).stdout, 'included\n');
    assert.equal(t.description, `root@127.0.0.1:${target.port}`);
    const notes = log.find((l) => l.includes('directives not applied'));
    assert.ok(notes, log.join('\n'));
    assert.match(notes, /LocalForward \(no forwards are opened\)/);
    assert.match(notes, /ControlMaster/);
    assert.doesNotMatch(notes, /ServerAliveInterval/, 'applied, so not named');
  });

  it('ProxyCommand: OpenSSH `ssh -W %h:%p` through the jump host is the socket; killed with the connection', async () => {
    // The system ssh client reaches the jump host with its own config, key and known_hosts.
    const proxyDir = path.join(tmp, `proxy-${Date.now()}`);
    fs.mkdirSync(proxyDir);
    const proxyConfig = path.join(proxyDir, 'ssh_config');
    const proxyKnownHosts = path.join(proxyDir, 'known_hosts');
    fs.writeFileSync(proxyKnownHosts, `${jump.knownHostsLine}\n`);
    fs.writeFileSync(
      proxyConfig,
      [
        'Host jumphost',
        '  HostName 127.0.0.1',
        `  Port ${jump.port}`,
        '  User root',
        `  IdentityFile ${keys.id.path}`,
        '  IdentitiesOnly yes',
        '  IdentityAgent none',
        `  UserKnownHostsFile ${proxyKnownHosts}`,
        '  GlobalKnownHostsFile /dev/null',
        '  StrictHostKeyChecking yes',
        '  BatchMode yes',
        '',
      ].join('\n'),
    );
    writeConfig(
      hostBlock(
        'proxied',
        target,
        'IdentityFile ~/.ssh/id_test',
        `ProxyCommand ssh -F ${proxyConfig} -W %h:%p jumphost`,
      ),
    );
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);
    const fromJump = jump.lines.length;
    const fromTarget = target.lines.length;
    const { t, log } = await connectTo('proxied');
    assert.match(t.description, /\(ProxyCommand\)$/);
    assert.equal((await t.exec('echo proxied')).stdout, 'proxied\n');
    await Promise.all([jump.caughtUp(fromJump, 'accepted'), target.caughtUp(fromTarget, 'accepted')]);
    assert.deepEqual(jump.accepted(fromJump), [keys.id.fingerprint], 'the proxy logged in to the jump host');
    assert.ok(
      jump.lines.slice(fromJump).some((l) => l.includes(`target 127.0.0.1 port ${target.port}`)),
      'the jump host forwarded to the target',
    );
    assert.deepEqual(target.accepted(fromTarget), [keys.id.fingerprint]);
    assert.ok(
      log.some((l) => l.includes(`ProxyCommand ssh -F ${proxyConfig} -W 127.0.0.1:${target.port} jumphost`)),
      log.join('\n'),
    );
    const alive = async () => (await run('pgrep', ['-f', `ssh -F ${proxyConfig}`])).code === 0;
    assert.ok(await alive(), 'the proxy runs while connected');
    t.dispose();
    await waitFor(async () => !(await alive()), {
      timeoutMs: 10_000,
      intervalMs: 50,
      message: 'the ProxyCommand ends with the connection',
    });

    // A proxy that cannot reach the target: its own words are the error.
    const closed = await freePort();
    writeConfig(
      hostBlock(
        'proxied-closed',
        target,
        'IdentityFile ~/.ssh/id_test',
        `ProxyCommand ssh -F ${proxyConfig} -W %h:${closed} jumphost`,
      ),
    );
    const failed = await connectTo('proxied-closed');
    const err = await rejection(failed.t.connect());
    assert.equal(err.kind, 'refused', err.message);
    assert.match(
      err.message,
      /^ProxyCommand "ssh -F .* -W 127\.0\.0\.1:\d+ jumphost" exited with code 255 before the SSH connection was made: .*Connection refused/s,
    );
  });

  it('ProxyJump: a second sshd as the jump host, both host keys verified', async () => {
    writeConfig(
      hostBlock('jumped', target, 'IdentityFile ~/.ssh/id_test', 'ProxyJump bastion') +
        hostBlock('bastion', jump, 'IdentityFile ~/.ssh/id_test'),
    );
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine, jump.knownHostsLine);
    const fromJump = jump.lines.length;
    const fromTarget = target.lines.length;
    const { t, asked } = await connectTo('jumped');
    assert.equal(t.description, `root@127.0.0.1:${target.port} via 127.0.0.1`);
    assert.equal((await t.exec('echo jumped')).stdout, 'jumped\n');
    assert.deepEqual(asked, []);
    await Promise.all([jump.caughtUp(fromJump, 'accepted'), target.caughtUp(fromTarget, 'accepted')]);
    assert.deepEqual(jump.accepted(fromJump), [keys.id.fingerprint]);
    assert.deepEqual(target.accepted(fromTarget), [keys.id.fingerprint]);

    // the jump host's key unknown: refused there, the target is never tried
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), target.knownHostsLine);
    const second = await connectTo('jumped');
    const err = await rejection(second.t.connect());
    assert.equal(err.kind, 'host-key-unknown');
    assert.equal(second.asked[0].port, jump.port);
  });

  it('UserKnownHostsFile in the config (with %h-%p) is the known-hosts file for that host', async () => {
    writeConfig(hostBlock('kh', target, 'IdentityFile ~/.ssh/id_test', 'UserKnownHostsFile ~/.ssh/kh.d/%h-%p'));
    const perHost = path.join(dotSsh, 'kh.d', `127.0.0.1-${target.port}`);
    writeKnownHosts(perHost, target.knownHostsLine);
    writeKnownHosts(path.join(dotSsh, 'known_hosts'), '# kimiService.knownHostsFile: nothing here');
    const { t, asked, log } = await connectTo('kh');
    assert.equal((await t.exec('echo kh')).stdout, 'kh\n');
    assert.deepEqual(asked, [], 'known from the UserKnownHostsFile');
    assert.ok(
      log.some((l) => l.includes(`known hosts from UserKnownHostsFile ${perHost}`)),
      log.join('\n'),
    );

    // and a changed key is reported against that file
    writeKnownHosts(perHost, `[127.0.0.1]:${target.port} ${jump.hostKey.pub}`);
    const second = await connectTo('kh');
    const err = await rejection(second.t.connect());
    assert.equal(err.kind, 'host-key-changed');
    assert.equal(err.hostKeyChange?.file, perHost);
  });

  it('HashKnownHosts yes under accept-new: a hashed line that OpenSSH itself accepts', async () => {
    writeConfig(
      hostBlock(
        'hashed',
        target,
        'IdentityFile ~/.ssh/id_test',
        'HashKnownHosts yes',
        'UserKnownHostsFile ~/.ssh/known_hosts_hashed',
      ),
    );
    const file = path.join(dotSsh, 'known_hosts_hashed');
    const { t, asked, log } = await connectTo('hashed', { decideUnknownHostKey: async () => 'trust' });
    await t.connect();
    assert.deepEqual(asked, []);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^\|1\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+ ssh-ed25519 \S+\n$/);
    assert.doesNotMatch(text, /127\.0\.0\.1/);
    assert.ok(
      log.some((l) => l.includes('(hashed: HashKnownHosts yes)')),
      log.join('\n'),
    );
    // ssh-keygen finds it by name, and the OpenSSH client trusts it under StrictHostKeyChecking yes
    const found = await run('ssh-keygen', ['-F', `[127.0.0.1]:${target.port}`, '-f', file]);
    assert.equal(found.code, 0, found.stderr);
    const ssh = await opensshRun(keys.id.path, target.port, file, 'echo openssh-trusts-it');
    assert.equal(ssh.stdout, 'openssh-trusts-it\n', ssh.stderr);
    // and the next connection of ours asks nothing
    const again = await connectTo('hashed');
    await again.t.connect();
    assert.deepEqual(again.asked, []);
  });

  it('@cert-authority: OpenSSH accepts the host certificate; ssh2 cannot check it, so it is refused with the reason', async () => {
    const file = path.join(dotSsh, 'known_hosts');
    writeKnownHosts(file, `@cert-authority [127.0.0.1]:* ${keys.ca.pub}`);
    const ssh = await opensshRun(keys.id.path, certHost.port, file, 'echo certificate-ok');
    assert.equal(ssh.stdout, 'certificate-ok\n', `the OpenSSH client checks the certificate: ${ssh.stderr}`);
    writeConfig(hostBlock('certified', certHost, 'IdentityFile ~/.ssh/id_test'));
    const { t, asked } = await connectTo('certified', { decideUnknownHostKey: async () => 'trust' });
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'host-key-rejected');
    assert.match(err.message, /@cert-authority/);
    assert.match(err.message, /host certificates cannot be checked here/);
    assert.ok(err.message.includes(certHost.hostKey.fingerprint), err.message);
    assert.deepEqual(asked, [], 'not offered for trust-on-first-use, even under accept-new');
    assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length, 1, 'nothing appended');
  });

  it('ConnectTimeout bounds the handshake', async () => {
    const silent = net.createServer(() => undefined); // accepts, never says a word
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const sockets = new Set<net.Socket>();
    silent.on('connection', (s) => sockets.add(s));
    try {
      const { port } = silent.address() as net.AddressInfo;
      writeConfig(['Host silent', '  HostName 127.0.0.1', `  Port ${port}`, '  ConnectTimeout 1', ''].join('\n'));
      const { t } = await connectTo('silent');
      const started = Date.now();
      const err = await rejection(t.connect());
      const took = Date.now() - started;
      assert.equal(err.kind, 'timeout');
      assert.match(err.message, /Timed out after 1 s .*ConnectTimeout/);
      assert.ok(took >= 900 && took < 5000, `took ${took} ms`);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
