/**
 * The built command line (`node dist/cli.js restart --wait`) with the logins organisations hand
 * out, each against a simulated GPU host whose sshd takes only that login: a Kerberos ticket from
 * kinit (GSSAPI), a certificate-only host reached through a jump host (ProxyJump), and a PKCS#11
 * token's key held by ssh-agent (`ssh-add -s`; the CLI started without a terminal has nobody to
 * ask the token's PIN). The SSH config is the login user's ~/.ssh/config, which OpenSSH reads from
 * the passwd home: the CLI runs in a mount namespace with a home of its own (loginHome.ts). Each
 * run reaches ready with one login on the GPU host, proven by its sshd's "Accepted" lines, and
 * plain `ssh HOST true` logs in with the same config too.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { certificateOnly } from '../gpu-host/certificateOnly';
import { startGpuHost, type GpuHost, type GpuHostOptions } from '../gpu-host/harness';
import { kerberosMissing, startKdc, type Kdc } from '../gpu-host/kerberos';
import { startLoopbackSshd, type LoopbackSshd } from '../gpu-host/loopbackSshd';
import { createToken, SOFTHSM_MODULE, softhsmMissing, tokenAgent, type Token } from '../gpu-host/softhsm';
import { loginHome, type LoginHome } from '../util/loginHome';
import { waitFor } from '../util/waitFor';
import { runCli, type CliRun } from './slurmCli';

const keygen = (...args: string[]) => execFileSync('ssh-keygen', ['-q', ...args], { stdio: 'pipe' });

const SIM: GpuHostOptions['sim'] = { readMBps: 32, warmReadMBps: 32, warmupSeconds: 0.5 };

/** One login set-up: a GPU host, a login home with its ~/.ssh/config, and a folder for the CLI's files. */
interface Stand {
  readonly dir: string;
  readonly host: GpuHost;
  readonly home: LoginHome;
}

/** A servers file naming `entry` on `host`, its key checked under the strict policy against `knownHosts`. */
function serversFile(stand: Stand, entry: Record<string, unknown>, knownHosts: string): string {
  const file = path.join(stand.dir, 'servers.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      servers: [{ name: 'sim', unit: stand.host.unitName, url: stand.host.serverUrl, ...entry }],
      knownHostsFile: knownHosts,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
    }),
  );
  return file;
}

/** `restart --wait` in the login home's namespace; HOME names that home, as the login user's would. */
function restartAndWait(stand: Stand, config: string, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return runCli(
    stand.dir,
    ['restart', '--wait', '--config', config, '--timeout', '120'],
    { HOME: path.dirname(stand.home.sshDir), ...env },
    stand.home.wrap,
  );
}

/** `ssh -o BatchMode=yes HOST true` in the login home's namespace: its exit code and stderr. */
function sshTrue(stand: Stand, target: string[], env: NodeJS.ProcessEnv = {}): { code: number; stderr: string } {
  const run = stand.home.wrap('ssh', ['-o', 'BatchMode=yes', ...target, 'true']);
  try {
    execFileSync(run.command, run.args, {
      env: { PATH: process.env.PATH, HOME: path.dirname(stand.home.sshDir), ...env },
      stdio: 'pipe',
      timeout: 60_000,
    });
    return { code: 0, stderr: '' };
  } catch (e) {
    const err = e as { status?: number | null; stderr?: Buffer };
    return { code: err.status ?? -1, stderr: err.stderr?.toString() ?? String(e) };
  }
}

const shown = (run: CliRun) => `exit ${run.code}\n${run.stdout}\n${run.stderr}`;

/** Exit 0, the ready line, and no word of authorized_keys. */
function assertReady(run: CliRun): void {
  assert.equal(run.code, 0, shown(run));
  assert.match(run.stdout, /^sim is ready: it answered a real completion\.$/m, shown(run));
  assert.doesNotMatch(`${run.stdout}${run.stderr}`, /authorized_keys/, shown(run));
}

describe('the CLI restarts and waits to ready with the logins organisations hand out', function () {
  this.timeout(240_000);
  let tmp: string;
  const stops: (() => Promise<void> | void)[] = [];

  before(() => {
    const missing = [kerberosMissing(), softhsmMissing()].filter((m) => m !== undefined);
    if (missing.length > 0) throw new Error(`Cannot stand up these logins: ${missing.join('; ')}`);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-logins-'));
  });

  after(async () => {
    for (const stop of stops.reverse()) await stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** A GPU host and a login home with `sshConfig`, both stopped after the suite. */
  async function stand(name: string, gpuHost: GpuHostOptions, sshConfig: (host: GpuHost) => string): Promise<Stand> {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    const host = await startGpuHost({ shards: 2, shardBytes: 2 * 1024 * 1024, sim: SIM, ...gpuHost });
    stops.push(() => host.stop());
    const home = loginHome(path.join(dir, 'login'), sshConfig(host));
    stops.push(() => home.release());
    return { dir, host, home };
  }

  describe('Kerberos: a ticket from kinit, sshd with GSSAPI', () => {
    let kdc: Kdc;
    let s: Stand;
    let knownHosts: string;
    const f = (n: string) => path.join(s.dir, n);
    const gssapiLogins = () =>
      s.host.sshdLog().filter((l) => new RegExp(`Accepted gssapi-with-mic for root .*: root@${kdc.realm}\\b`).test(l))
        .length;
    const clientEnv = (ccache: string) => ({ KRB5_CONFIG: kdc.env.KRB5_CONFIG, KRB5CCNAME: `FILE:${ccache}` });

    before(async () => {
      const kdcDir = path.join(tmp, 'kdc');
      kdc = await startKdc(kdcDir);
      stops.push(() => kdc.stop());
      // The service principal is host/<HostName as the client writes it> (krb5.conf: no DNS).
      kdc.addToKeytab('host/127.0.0.1', path.join(kdcDir, 'host.keytab'));
      kdc.addToKeytab('root', path.join(kdcDir, 'client.keytab'));
      s = await stand(
        'kerberos',
        {
          sshdConfig: () => ['GSSAPIAuthentication yes', 'GSSAPIStrictAcceptorCheck no'],
          sshdEnv: () => ({
            KRB5_CONFIG: kdc.env.KRB5_CONFIG,
            KRB5_KTNAME: `FILE:${path.join(kdcDir, 'host.keytab')}`,
          }),
        },
        () => ['Host *', '  GSSAPIAuthentication yes', '  IdentityAgent none', ''].join('\n'),
      );
      kdc.kinit('root', path.join(kdcDir, 'client.keytab'), f('ccache'));
      knownHosts = f('known_hosts');
      fs.writeFileSync(knownHosts, `${s.host.knownHostsLine()}\n`);
    });

    // No identity file in the entry, no agent: the ticket is all there is.
    const entry = () => ({ host: '127.0.0.1', port: s.host.sshPort, username: 'root' });

    it('with a ticket: ready, with one gssapi-with-mic login; ssh HOST true logs in alike', async () => {
      const before = gssapiLogins();
      const run = await restartAndWait(s, serversFile(s, entry(), knownHosts), clientEnv(f('ccache')));
      assertReady(run);
      assert.equal(gssapiLogins(), before + 1, `one Kerberos login\n${shown(run)}\n${s.host.sshdLog().join('\n')}`);
      const ssh = sshTrue(
        s,
        ['-o', `UserKnownHostsFile=${knownHosts}`, '-p', String(s.host.sshPort), 'root@127.0.0.1'],
        clientEnv(f('ccache')),
      );
      assert.equal(ssh.code, 0, ssh.stderr);
      await waitFor(() => gssapiLogins() === before + 2, { message: "ssh's own gssapi-with-mic login" });
    });

    it('without a ticket: a non-zero exit that says "run kinit", never authorized_keys', async () => {
      const before = gssapiLogins();
      const run = await restartAndWait(s, serversFile(s, entry(), knownHosts), clientEnv(f('ccache-empty')));
      assert.notEqual(run.code, 0, shown(run));
      assert.match(`${run.stdout}\n${run.stderr}`, /no valid Kerberos ticket: run kinit/, shown(run));
      assert.doesNotMatch(`${run.stdout}${run.stderr}`, /authorized_keys/, shown(run));
      assert.equal(gssapiLogins(), before);
    });

    it('with ssh2 set by hand: refused, naming what ssh2 cannot do and the setting to change, never authorized_keys', async () => {
      const before = gssapiLogins();
      const run = await restartAndWait(
        s,
        serversFile(s, { ...entry(), ssh: { client: 'ssh2' } }, knownHosts),
        clientEnv(f('ccache')),
      );
      assert.equal(run.code, 5, shown(run));
      assert.match(
        `${run.stdout}\n${run.stderr}`,
        /set to ssh2, .*GSSAPIAuthentication yes \(ssh2 has no Kerberos\)\. Set the SSH client to "auto" or "openssh"/,
        shown(run),
      );
      assert.doesNotMatch(`${run.stdout}${run.stderr}`, /authorized_keys/, shown(run));
      assert.equal(gssapiLogins(), before);
    });
  });

  describe('ProxyJump through a jump host to a certificate-only host', () => {
    let jump: LoopbackSshd;
    let s: Stand;
    let caDir: string;
    const c = (n: string) => path.join(caDir, n);

    before(async () => {
      caDir = path.join(tmp, 'jump-keys');
      fs.mkdirSync(caDir);
      keygen('-t', 'ed25519', '-N', '', '-C', 'user-ca', '-f', c('user_ca'));
      keygen('-t', 'ed25519', '-N', '', '-f', c('jump_id'));
      keygen('-t', 'ed25519', '-N', '', '-f', c('id'));
      keygen('-s', c('user_ca'), '-I', 'cli-via-jump', '-n', 'root', '-V', '-5m:+1h', c('id.pub'));
      fs.writeFileSync(c('jump_keys'), fs.readFileSync(c('jump_id.pub')), { mode: 0o644 });
      jump = await startLoopbackSshd({
        dir: c('sshd-jump'),
        lines: ['PubkeyAuthentication yes', `AuthorizedKeysFile ${c('jump_keys')}`, 'AllowTcpForwarding yes'],
      });
      stops.push(() => jump.stop());
      s = await stand('jump', { sshdConfig: certificateOnly(c('user_ca')) }, (host) => {
        // Both hops' keys in the config's own file: the jump's ssh -W reads the config, not the master's options.
        fs.writeFileSync(c('known_hosts'), `${jump.knownHostsLine}\n${host.knownHostsLine()}\n`);
        return [
          'Host bastion',
          '  HostName 127.0.0.1',
          `  Port ${jump.port}`,
          `  IdentityFile ${c('jump_id')}`,
          'Host gpu-behind-bastion',
          '  HostName 127.0.0.1',
          `  Port ${host.sshPort}`,
          '  ProxyJump bastion',
          `  IdentityFile ${c('id')}`,
          `  CertificateFile ${c('id-cert.pub')}`,
          'Host *',
          '  User root',
          '  IdentitiesOnly yes',
          '  IdentityAgent none',
          `  UserKnownHostsFile ${c('known_hosts')}`,
          '',
        ].join('\n');
      });
    });

    it('ready, with one certificate login on the GPU host and one on the jump host; ssh HOST true logs in alike', async () => {
      const withCert = () =>
        s.host.sshdLog().filter((l) => /Accepted publickey for root .*ED25519-CERT .*ID cli-via-jump /.test(l)).length;
      const viaJump = () => jump.count(/Accepted publickey for root from 127\.0\.0\.1 .* ED25519 /);
      const [certBefore, jumpBefore] = [withCert(), viaJump()];
      const run = await restartAndWait(s, serversFile(s, { host: 'gpu-behind-bastion' }, c('known_hosts')));
      assertReady(run);
      assert.equal(withCert(), certBefore + 1, `one certificate login\n${shown(run)}\n${s.host.sshdLog().join('\n')}`);
      assert.equal(viaJump(), jumpBefore + 1, `one login on the jump host\n${jump.log().join('\n')}`);
      const ssh = sshTrue(s, ['gpu-behind-bastion']);
      assert.equal(ssh.code, 0, ssh.stderr);
      await waitFor(() => withCert() === certBefore + 2, { message: "ssh's own certificate login" });
    });
  });

  describe("PKCS#11: a token's key held by ssh-agent (ssh-add -s)", () => {
    let token: Token;
    let s: Stand;
    let agentSocket: string;
    let fingerprint: string;
    const tokenLogins = () =>
      s.host.sshdLog().filter((l) => l.includes('Accepted publickey for root ') && l.includes(` RSA ${fingerprint}`))
        .length;

    before(async () => {
      const dir = path.join(tmp, 'token');
      token = createToken(dir);
      fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', '-'], { input: token.publicKey })
        .toString()
        .split(' ')[1]!;
      const agent = await tokenAgent(token, dir);
      stops.push(() => agent.stop());
      agentSocket = agent.socket;
      s = await stand(
        'pkcs11',
        {
          sshdConfig: ({ sshDir }) => {
            // The token's key, and the harness's own for its checks; no other.
            const keys = path.join(sshDir, 'token_keys');
            const harness = fs.readFileSync(path.join(sshDir, 'harness_ed25519.pub'), 'utf8');
            fs.writeFileSync(keys, `${token.publicKey}\n${harness}`, { mode: 0o644 });
            return [`AuthorizedKeysFile ${keys}`];
          },
        },
        (host) =>
          [
            'Host gpu-token',
            '  HostName 127.0.0.1',
            `  Port ${host.sshPort}`,
            '  User root',
            `  PKCS11Provider ${SOFTHSM_MODULE}`,
            `  IdentityAgent ${agentSocket}`,
            '',
          ].join('\n'),
      );
      fs.writeFileSync(path.join(s.dir, 'known_hosts'), `${s.host.knownHostsLine()}\n`);
    });

    it("ready, with one login with the token's key; ssh HOST true logs in alike", async () => {
      const knownHosts = path.join(s.dir, 'known_hosts');
      const before = tokenLogins();
      const run = await restartAndWait(s, serversFile(s, { host: 'gpu-token' }, knownHosts), token.env);
      assertReady(run);
      assert.equal(tokenLogins(), before + 1, `one token login\n${shown(run)}\n${s.host.sshdLog().join('\n')}`);
      const ssh = sshTrue(s, ['-o', `UserKnownHostsFile=${knownHosts}`, 'gpu-token'], token.env);
      assert.equal(ssh.code, 0, ssh.stderr);
      await waitFor(() => tokenLogins() === before + 2, { message: "ssh's own login with the token's key" });
    });
  });
});
