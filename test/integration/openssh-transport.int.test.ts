/**
 * The OpenSSH transport against a real sshd that takes only certificates (TrustedUserCAKeys,
 * AuthorizedKeysFile none) and shows a host certificate: logins with a certificate file, the same
 * certificate held only by ssh-agent, an expired one (refused with its reason), the host checked
 * by an @cert-authority line alone under the strict policy; then commands, caps, kills, HTTP
 * and a reconnect over the ControlMaster. Each login is proven by sshd's own "Accepted" line.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fetch from 'node-fetch';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { parseSettings } from '../../src/config/parseSettings';
import { TunnelAgent } from '../../src/transport/httpAgent';
import { quote } from '../../src/transport/shell';
import { OpenSshTransport } from '../../src/transport/openssh/opensshTransport';
import type { UnknownHostKeyInfo } from '../../src/transport/ssh/sshOptions';
import { TransportError, type ConnectionState } from '../../src/transport/transport';
import { waitFor } from '../util/waitFor';
import { serverEntry, headlessFleet } from './simHost';
import { rejection } from '../util/rejection';
import { runCli } from './slurmCli';
import { pidAlive } from '../util/pidAlive';

const keygen = (...args: string[]) => execFileSync('ssh-keygen', ['-q', ...args], { stdio: 'pipe' });

describe('OpenSshTransport against a real sshd with certificates', function () {
  this.timeout(60_000);
  let host: GpuHost;
  let tmp: string;
  let config: string;
  let caOnlyKnownHosts: string;
  let agent: ChildProcess | undefined;
  let agentSocket: string;
  const open: OpenSshTransport[] = [];

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openssh-transport-'));
    const f = (n: string) => path.join(tmp, n);
    keygen('-t', 'ed25519', '-N', '', '-C', 'user-ca', '-f', f('user_ca'));
    keygen('-t', 'ed25519', '-N', '', '-C', 'host-ca', '-f', f('host_ca'));
    keygen('-t', 'ed25519', '-N', '', '-C', 'other-ca', '-f', f('other_ca'));
    keygen('-t', 'ed25519', '-N', '', '-f', f('id'));
    keygen('-s', f('user_ca'), '-I', 'cert-file', '-n', 'root', '-V', '-5m:+1h', f('id.pub'));
    keygen('-t', 'ed25519', '-N', '', '-f', f('agent_id'));
    keygen('-s', f('user_ca'), '-I', 'cert-agent', '-n', 'root', '-V', '-5m:+1h', f('agent_id.pub'));
    keygen('-t', 'ed25519', '-N', '', '-f', f('old'));
    keygen('-s', f('user_ca'), '-I', 'cert-expired', '-n', 'root', '-V', '-2h:-1h', f('old.pub'));
    host = await startGpuHost({
      shards: 2,
      shardBytes: 2 * 1024 * 1024,
      sim: { readMBps: 32, warmReadMBps: 32, warmupSeconds: 0.5 },
      sshdConfig: ({ sshDir, hostKey }) => {
        fs.copyFileSync(f('user_ca.pub'), path.join(sshDir, 'user_ca.pub'));
        keygen('-s', f('host_ca'), '-h', '-I', 'sim-host', '-n', '127.0.0.1,localhost', `${hostKey}.pub`);
        // The harness's own checks log in with its key: a certificate beside it lets them in.
        keygen('-s', f('user_ca'), '-I', 'harness', '-n', 'root', path.join(sshDir, 'harness_ed25519.pub'));
        return [
          `TrustedUserCAKeys ${path.join(sshDir, 'user_ca.pub')}`,
          'AuthorizedKeysFile none',
          `HostCertificate ${hostKey}-cert.pub`,
        ];
      },
    });
    caOnlyKnownHosts = f('known_hosts_ca');
    fs.writeFileSync(
      caOnlyKnownHosts,
      `@cert-authority [127.0.0.1]:${host.sshPort} ${fs.readFileSync(f('host_ca.pub'), 'utf8')}`,
    );
    // The agent holds the key and its certificate; neither stays on disk.
    const sock = f('agent.sock');
    agentSocket = sock;
    agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    await waitFor(() => fs.existsSync(sock), { message: 'ssh-agent listens' });
    execFileSync('ssh-add', [f('agent_id')], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'pipe' });
    for (const n of ['agent_id', 'agent_id.pub', 'agent_id-cert.pub']) fs.rmSync(f(n));
    const common = [`  HostName 127.0.0.1`, `  Port ${host.sshPort}`, '  User root', '  IdentitiesOnly yes'];
    config = f('ssh_config');
    fs.writeFileSync(
      config,
      [
        'Host cert-file',
        ...common,
        `  IdentityFile ${f('id')}`,
        `  CertificateFile ${f('id-cert.pub')}`,
        '  IdentityAgent none',
        'Host cert-agent',
        `  HostName 127.0.0.1`,
        `  Port ${host.sshPort}`,
        '  User root',
        `  IdentityAgent ${sock}`,
        'Host cert-expired',
        ...common,
        `  IdentityFile ${f('old')}`,
        '  IdentityAgent none',
        '',
      ].join('\n'),
    );
  });

  after(async () => {
    for (const t of open) t.dispose();
    agent?.kill();
    await host?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });

  function transport(alias: string, knownHostsFile = caOnlyKnownHosts) {
    const asked: UnknownHostKeyInfo[] = [];
    const logs: string[] = [];
    const t = new OpenSshTransport({
      host: { host: alias, configFile: config },
      knownHostsFile,
      // The strict policy: an unknown key is refused (and would be recorded here).
      decideUnknownHostKey: async (info) => {
        asked.push(info);
        return 'reject';
      },
      backoffInitialMs: 200,
      watchIntervalMs: 200,
      log: (m) => logs.push(m),
    });
    open.push(t);
    return { t, asked, logs };
  }

  const accepted = (keyId: string) =>
    host.sshdLog().filter((l) => new RegExp(`Accepted publickey for root .*ED25519-CERT .*ID ${keyId} `).test(l))
      .length;

  /** Once no process of the simulated host matches the pgrep -f pattern (write one that does not match itself: `sleep 424[2]`). */
  const gone = (pattern: string) =>
    waitFor(async () => (await host.nsExec(`pgrep -f ${quote(pattern)}`)).code === 1, {
      timeoutMs: 10_000,
      message: `no process matches ${pattern}`,
    });

  it('logs in with a certificate file, the host checked by @cert-authority alone', async () => {
    const before = accepted('cert-file');
    const { t, asked } = transport('cert-file');
    const r = await t.exec('echo "$USER:$((6*7))"');
    assert.equal(r.stdout.trim(), 'root:42');
    await t.exec('true');
    assert.equal(t.handshakes, 1);
    assert.deepEqual(asked, []);
    await waitFor(() => accepted('cert-file') === before + 1, { message: "sshd's Accepted line for cert-file" });
  });

  it('logs in with the same kind of certificate held only by ssh-agent', async () => {
    const before = accepted('cert-agent');
    const { t } = transport('cert-agent');
    assert.equal((await t.exec('echo agent')).stdout, 'agent\n');
    await waitFor(() => accepted('cert-agent') === before + 1, { message: "sshd's Accepted line for cert-agent" });
  });

  it('refuses an expired certificate with its reason, not authorized_keys', async () => {
    const { t } = transport('cert-expired');
    const err = await rejection(t.connect());
    assert.ok(err instanceof TransportError && err.kind === 'auth', String(err));
    assert.match(err.message, /cert-expired.*expired at/);
    assert.doesNotMatch(err.message, /authorized_keys/);
    assert.equal(t.state.kind, 'down');
    assert.equal(accepted('cert-expired'), 0);
  });

  it('refuses a host whose certificate no known CA signed, without asking', async () => {
    const other = path.join(tmp, 'known_hosts_other_ca');
    fs.writeFileSync(
      other,
      `@cert-authority [127.0.0.1]:${host.sshPort} ${fs.readFileSync(path.join(tmp, 'other_ca.pub'), 'utf8')}`,
    );
    const { t, asked } = transport('cert-file', other);
    const err = await rejection(t.connect());
    assert.ok(err instanceof TransportError && err.kind === 'host-key-rejected', String(err));
    assert.match(err.message, /ssh-ed25519 SHA256:\S+.*@cert-authority/);
    assert.deepEqual(asked, []);
  });

  it('runs a command with stdin, caps its output, and kills a long one', async () => {
    const { t } = transport('cert-file');
    assert.equal((await t.exec('cat', { stdin: 'line one\nline two\n' })).stdout, 'line one\nline two\n');
    const capped = await t.exec("head -c 100000 /dev/zero | tr '\\0' a", { maxOutputBytes: 1000 });
    assert.equal(capped.stdout.length, 1000);
    assert.match(capped.stderr, /stdout truncated/);
    assert.equal((await t.exec('exit 7')).code, 7);
    const err = await rejection(t.exec('sleep 4242', { timeoutMs: 300 }));
    assert.equal((err as TransportError).kind, 'command-timeout');
    await (err as { channelClosed?: Promise<void> }).channelClosed;
    await gone('sleep 424[2]');
  });

  it('follows a stream line by line and stops it on the host', async () => {
    const { t } = transport('cert-file');
    const lines: string[] = [];
    const p = await t.stream('echo one; echo two; exec sleep 4343', (l) => lines.push(l));
    await waitFor(() => lines.length === 2, { message: 'two lines' });
    assert.deepEqual(lines, ['one', 'two']);
    p.kill();
    assert.equal(await p.exited, null);
    await gone('sleep 434[3]');
  });

  it('carries HTTP through a stream opened on the host, and tells a closed port', async () => {
    const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = server.address() as AddressInfo;
      const { t } = transport('cert-file');
      const agentHttp = new TunnelAgent(t.openStream);
      const res = await fetch(`http://127.0.0.1:${port}/x`, { agent: agentHttp });
      assert.equal(await res.text(), 'hello /x');
      const closed = await new Promise<number>((r) => {
        const s = http.createServer();
        s.listen(0, '127.0.0.1', () => {
          const p = (s.address() as AddressInfo).port;
          s.close(() => r(p));
        });
      });
      const err = await rejection(fetch(`http://127.0.0.1:${closed}/`, { agent: agentHttp }));
      assert.equal((err as { code?: string }).code, 'ECONNREFUSED', String(err));
      assert.equal(t.handshakes, 1);
    } finally {
      server.close();
    }
  });

  it('reconnects after its master dies, with one more login', async () => {
    const before = accepted('cert-file');
    const { t, logs } = transport('cert-file');
    await t.connect();
    const states: ConnectionState[] = [];
    const sub = t.onStateChange((s) => states.push(s));
    process.kill(t.masterPid!, 'SIGKILL');
    await waitFor(() => states.some((s) => s.kind === 'down' && s.retryInMs !== undefined), {
      message: 'the drop noticed',
    });
    await waitFor(() => t.state.kind === 'connected', { message: 'connected again' });
    sub.dispose();
    assert.equal((await t.exec('echo back')).stdout, 'back\n');
    assert.equal(t.handshakes, 2);
    assert.ok(logs.some((l) => /lost/.test(l)));
    await waitFor(() => accepted('cert-file') === before + 2, { message: 'two Accepted lines' });
  });

  it('stops its master and removes its folder on dispose', async () => {
    const { t } = transport('cert-file');
    await t.connect();
    const pid = t.masterPid!;
    t.dispose();
    open.pop();
    await waitFor(() => !pidAlive(pid), { message: 'the master gone' });
  });

  it('restarts and watches to ready over OpenSSH, chosen by auto for the certificate, with one login', async function () {
    this.timeout(120_000);
    const before = accepted('cert-file');
    const settings = parseSettings({
      servers: [{ ...serverEntry(host), identityFile: path.join(tmp, 'id') }],
      knownHostsFile: caOnlyKnownHosts,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
      'ssh.client': 'auto',
    });
    assert.ok(settings.ok);
    const logs: string[] = [];
    const log = (_level: string, message: string) => logs.push(message);
    const fleet = headlessFleet(settings.settings, log);
    try {
      const server = settings.settings.servers[0]!;
      await fleet.restart(server, { force: true });
      const end = await fleet.waitFor(server, { timeoutMs: 90_000 });
      assert.equal(end.kind, 'ready', `${JSON.stringify(end)}\n${logs.join('\n')}`);
      assert.ok(
        logs.some((l) => /SSH client: openssh \(auto: certificate \S+id-cert\.pub beside the identity/.test(l)),
        logs.join('\n'),
      );
      assert.equal(accepted('cert-file'), before + 1, 'one login for the restart and the watch');
    } finally {
      fleet.dispose();
    }
  });

  it('the CLI restarts and waits to ready with the certificate held only by ssh-agent, with one login', async function () {
    this.timeout(120_000);
    const before = accepted('cert-agent');
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-'));
    const config = path.join(dir, 'servers.json');
    // No identity file: the login has only what the agent holds (how Teleport, Vault and step hand it over).
    const { identityFile: _none, ...entry } = serverEntry(host);
    fs.writeFileSync(
      config,
      JSON.stringify({
        servers: [entry],
        knownHostsFile: caOnlyKnownHosts,
        hostKeyPolicy: 'strict',
        pollIntervalSeconds: 0.5,
      }),
    );
    const run = await runCli(dir, ['restart', '--wait', '--config', config, '--timeout', '90'], {
      SSH_AUTH_SOCK: agentSocket,
    });
    const shown = `exit ${run.code}\n${run.stdout}\n${run.stderr}`;
    assert.equal(run.code, 0, shown);
    assert.match(run.stdout, /^sim is ready: it answered a real completion\.$/m, shown);
    assert.doesNotMatch(`${run.stdout}${run.stderr}`, /authorized_keys/, shown);
    assert.equal(accepted('cert-agent'), before + 1, `one login with the agent's certificate\n${shown}`);
  });
});
