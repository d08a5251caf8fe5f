/**
 * Logins beyond key files, against real components on loopback: a throwaway Kerberos realm
 * (krb5kdc) and an sshd that takes GSSAPI only; a PKCS#11 token (softhsm2) whose key an sshd
 * authorises, reached through ssh-agent (`ssh-add -s`) or refused for want of its PIN; a
 * certificate-only sshd reached through a jump sshd (ProxyJump). The transport is the one the
 * extension's `auto` choice makes from the host's SSH config; each login is proven by sshd's own
 * "Accepted" line. A key's passphrase and a token's PIN are asked through SSH_ASKPASS: the built
 * helper (dist/askpass.sh, askpass.js) asks the test's prompt callback over the private socket. The login user is the unprivileged `kimi`; every daemon runs from the test's
 * own folder and is stopped afterwards.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SshPrompt } from '../../src/transport/openssh/askpass/promptKind';
import { chooseClient, type ClientChoice } from '../../src/transport/openssh/chooseClient';
import { gatherClientFacts } from '../../src/transport/openssh/clientFacts';
import { OpenSshTransport } from '../../src/transport/openssh/opensshTransport';
import { loadSshTarget } from '../../src/transport/ssh/sshConfig';
import { SshTransport } from '../../src/transport/ssh/sshTransport';
import type { Transport } from '../../src/transport/transport';
import { ensureLoginUser } from '../gpu-host/harness';
import { kerberosMissing, startKdc, type Kdc } from '../gpu-host/kerberos';
import { startLoopbackSshd, type LoopbackSshd } from '../gpu-host/loopbackSshd';
import { createToken, SOFTHSM_MODULE, softhsmMissing, tokenAgent, type Token } from '../gpu-host/softhsm';
import { waitFor } from '../util/waitFor';
import { rejection, USER } from './loginHosts';

function ticketValid(env: NodeJS.ProcessEnv): boolean {
  try {
    execFileSync('klist', ['-s'], { env, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const ASKPASS_HELPER = path.resolve('dist/askpass.sh');

/** A prompt callback that answers from a list (undefined: cancel) and keeps what it was asked. */
function scriptedPrompt(answers: (string | undefined)[]) {
  const asked: SshPrompt[] = [];
  return {
    asked,
    prompt: async (p: SshPrompt) => {
      asked.push(p);
      return answers.shift();
    },
  };
}

describe('OpenSSH logins: Kerberos, a PKCS#11 token, ProxyJump to a certificate-only host, prompts', function () {
  this.timeout(60_000);
  let tmp: string;
  const open: Transport[] = [];
  const stops: (() => Promise<void>)[] = [];

  before(() => {
    const missing = [kerberosMissing(), softhsmMissing()].filter((m) => m !== undefined);
    if (missing.length > 0) throw new Error(`Cannot stand up these logins: ${missing.join('; ')}`);
    ensureLoginUser(USER);
    // The askpass helper as the extension ships it.
    execFileSync(process.execPath, ['esbuild.mjs', '--only=askpass'], { stdio: 'pipe' });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openssh-logins-'));
    fs.chmodSync(tmp, 0o711); // sshd reads authorized keys as the login user
  });

  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });

  after(async () => {
    while (open.length) open.pop()!.dispose();
    for (const stop of stops.reverse()) await stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * The transport the extension makes with kimiService.ssh.client "auto" (createTransport), the
   * SSH config given by path: OpenSSH reads ~/.ssh/config from the passwd entry's home.
   */
  async function autoTransport(
    alias: string,
    configFile: string,
    knownHostsFile: string,
    env: NodeJS.ProcessEnv,
    prompt?: (p: SshPrompt) => Promise<string | undefined>,
  ): Promise<{ t: Transport; choice: ClientChoice; logs: string[] }> {
    const host = { host: alias, configFile };
    const target = () => loadSshTarget({ host: alias }, { configPath: configFile, env });
    const choice = chooseClient('auto', await gatherClientFacts(host, knownHostsFile, target, env));
    const logs: string[] = [];
    const common = {
      knownHostsFile,
      decideUnknownHostKey: async () => 'reject' as const,
      log: (m: string) => logs.push(m),
    };
    const t =
      choice.client === 'openssh'
        ? new OpenSshTransport({
            ...common,
            host,
            env,
            choice,
            backoffInitialMs: 200,
            ...(prompt ? { prompt, askpassHelper: ASKPASS_HELPER } : {}),
          })
        : new SshTransport({ ...common, target: await target(), env, requestPassphrase: async () => undefined });
    open.push(t);
    return { t, choice, logs };
  }

  describe('Kerberos: a realm of its own, sshd with GSSAPI only', () => {
    let kdc: Kdc;
    let sshd: LoopbackSshd;
    let dir: string;
    let config: string;
    let knownHosts: string;
    const clientEnv = (ccache: string): NodeJS.ProcessEnv => ({
      ...process.env,
      KRB5_CONFIG: kdc.env.KRB5_CONFIG,
      KRB5CCNAME: `FILE:${ccache}`,
    });
    const acceptedGssapi = () =>
      sshd.count(new RegExp(`Accepted gssapi-with-mic for ${USER} from 127\\.0\\.0\\.1 .*: ${USER}@${kdc.realm}$`));

    before(async () => {
      dir = path.join(tmp, 'kerberos');
      kdc = await startKdc(path.join(dir, 'kdc'));
      stops.push(() => kdc.stop());
      // The service principal is host/<HostName as the client writes it> (no DNS: krb5.conf rdns = false).
      kdc.addToKeytab('host/127.0.0.1', path.join(dir, 'host.keytab'));
      kdc.addToKeytab(USER, path.join(dir, 'client.keytab'));
      sshd = await startLoopbackSshd({
        dir: path.join(dir, 'sshd'),
        lines: ['GSSAPIAuthentication yes', 'GSSAPIStrictAcceptorCheck no', 'PubkeyAuthentication no'],
        env: { KRB5_CONFIG: kdc.env.KRB5_CONFIG, KRB5_KTNAME: `FILE:${path.join(dir, 'host.keytab')}` },
      });
      stops.push(() => sshd.stop());
      knownHosts = path.join(dir, 'known_hosts');
      fs.writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
      config = path.join(dir, 'ssh_config');
      fs.writeFileSync(
        config,
        [
          'Host gpu-krb',
          '  HostName 127.0.0.1',
          `  Port ${sshd.port}`,
          `  User ${USER}`,
          '  GSSAPIAuthentication yes',
          '  IdentityAgent none',
          '',
        ].join('\n'),
      );
    });

    it('logs in with a ticket from kinit: auto chooses OpenSSH, sshd accepts gssapi-with-mic', async () => {
      const ccache = path.join(dir, 'ccache');
      kdc.kinit(USER, path.join(dir, 'client.keytab'), ccache);
      const before = acceptedGssapi();
      const { t, choice } = await autoTransport('gpu-krb', config, knownHosts, clientEnv(ccache));
      assert.equal(choice.client, 'openssh', choice.reason);
      assert.match(choice.reason, /GSSAPIAuthentication yes \(ssh2 has no Kerberos\)/);
      assert.equal((await t.exec('id -un; echo $((6*7))')).stdout, `${USER}\n42\n`);
      await t.exec('true');
      assert.equal((t as OpenSshTransport).handshakes, 1);
      await waitFor(() => acceptedGssapi() === before + 1, { message: "sshd's Accepted gssapi-with-mic line" });
      // The ticket for the host came from this realm's KDC.
      assert.match(
        kdc.log(),
        new RegExp(`TGS_REQ .*ISSUE: .*${USER}@${kdc.realm} for host/127\\.0\\.0\\.1@${kdc.realm}`),
      );
    });

    it('without a ticket: refused with "run kinit", never authorized_keys', async () => {
      const before = acceptedGssapi();
      const empty = path.join(dir, 'ccache-empty');
      const { t, choice } = await autoTransport('gpu-krb', config, knownHosts, clientEnv(empty));
      // GSSAPI set in the user's own config counts without a ticket, so the refusal is OpenSSH's.
      assert.equal(choice.client, 'openssh', choice.reason);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'auth', err.message);
      assert.match(err.message, /allows: [^)]*gssapi-with-mic.*no valid Kerberos ticket: run kinit/);
      assert.doesNotMatch(err.message, /authorized_keys/);
      assert.equal(t.state.kind, 'down');
      assert.equal(acceptedGssapi(), before);
    });

    it('with an expired ticket: refused with "run kinit", never authorized_keys', async () => {
      const before = acceptedGssapi();
      const ccache = path.join(dir, 'ccache-short');
      const env = clientEnv(ccache);
      execFileSync('kinit', ['-l', '3s', '-k', '-t', path.join(dir, 'client.keytab'), USER], { env, stdio: 'pipe' });
      assert.ok(ticketValid(env), 'kinit gave a valid ticket');
      await waitFor(() => !ticketValid(env), { timeoutMs: 20_000, message: 'the ticket expired (klist -s fails)' });
      // The KDC still honours a ticket within its clock skew after the end (1 s in this realm's
      // krb5.conf): the login is tried once that has passed too, as a user's next morning would be.
      const expiredAt = Date.now();
      await waitFor(() => Date.now() > expiredAt + 2500, { timeoutMs: 10_000, message: 'the clock skew passed' });
      assert.match(
        execFileSync('klist', { env }).toString(),
        new RegExp(`${USER}@${kdc.realm}`),
        'the cache still holds it',
      );
      const { t, choice } = await autoTransport('gpu-krb', config, knownHosts, env);
      assert.equal(choice.client, 'openssh', choice.reason);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'auth', err.message);
      assert.match(err.message, /no valid Kerberos ticket: run kinit/);
      assert.doesNotMatch(err.message, /authorized_keys/);
      assert.equal(acceptedGssapi(), before);
    });
  });

  describe('ProxyJump to a host that takes certificates only', () => {
    let jump: LoopbackSshd;
    let target: LoopbackSshd;
    let dir: string;
    let config: string;
    const keygen = (...args: string[]) => execFileSync('ssh-keygen', ['-q', ...args], { stdio: 'pipe' });

    before(async () => {
      dir = path.join(tmp, 'jump');
      fs.mkdirSync(dir, { mode: 0o755 });
      const f = (n: string) => path.join(dir, n);
      keygen('-t', 'ed25519', '-N', '', '-C', 'user-ca', '-f', f('user_ca'));
      keygen('-t', 'ed25519', '-N', '', '-f', f('jump_id'));
      keygen('-t', 'ed25519', '-N', '', '-f', f('id'));
      keygen('-s', f('user_ca'), '-I', 'cert-via-jump', '-n', USER, '-V', '-5m:+1h', f('id.pub'));
      fs.copyFileSync(f('jump_id.pub'), f('authorized_keys'));
      fs.chmodSync(f('authorized_keys'), 0o644);
      jump = await startLoopbackSshd({
        dir: f('sshd-jump'),
        lines: ['PubkeyAuthentication yes', `AuthorizedKeysFile ${f('authorized_keys')}`, 'AllowTcpForwarding yes'],
      });
      stops.push(() => jump.stop());
      target = await startLoopbackSshd({
        dir: f('sshd-target'),
        lines: ['PubkeyAuthentication yes', `TrustedUserCAKeys ${f('user_ca.pub')}`, 'AuthorizedKeysFile none'],
      });
      stops.push(() => target.stop());
      // Both hops' keys in the config's own file: the jump's ssh -W reads the config, not the master's -o options.
      fs.writeFileSync(f('known_hosts'), `${jump.knownHostsLine}\n${target.knownHostsLine}\n`);
      config = f('ssh_config');
      fs.writeFileSync(
        config,
        [
          'Host bastion',
          '  HostName 127.0.0.1',
          `  Port ${jump.port}`,
          `  IdentityFile ${f('jump_id')}`,
          'Host gpu-cert',
          '  HostName 127.0.0.1',
          `  Port ${target.port}`,
          '  ProxyJump bastion',
          `  IdentityFile ${f('id')}`,
          `  CertificateFile ${f('id-cert.pub')}`,
          'Host *',
          `  User ${USER}`,
          '  IdentitiesOnly yes',
          '  IdentityAgent none',
          `  UserKnownHostsFile ${f('known_hosts')}`,
          '',
        ].join('\n'),
      );
    });

    it('logs in through the jump host with the certificate: auto chooses OpenSSH, both hops verified', async () => {
      const viaJump = () => jump.count(new RegExp(`Accepted publickey for ${USER} from 127\\.0\\.0\\.1 .* ED25519 `));
      const withCert = () =>
        target.count(
          new RegExp(`Accepted publickey for ${USER} from 127\\.0\\.0\\.1 .* ED25519-CERT .*ID cert-via-jump `),
        );
      const { t, choice } = await autoTransport('gpu-cert', config, path.join(dir, 'known_hosts'), process.env);
      assert.equal(choice.client, 'openssh', choice.reason);
      assert.match(choice.reason, /CertificateFile \S+id-cert\.pub/);
      assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
      await t.exec('true');
      assert.equal((t as OpenSshTransport).handshakes, 1);
      await waitFor(() => viaJump() === 1 && withCert() === 1, { message: 'one Accepted line on each hop' });
      // The way in is OpenSSH's own ProxyJump: an `ssh -W` to the target through the bastion, live while connected.
      const processes = execFileSync('ps', ['-eo', 'args']).toString().split('\n');
      assert.ok(
        processes.some((l) => new RegExp(`^ssh .*-W \\[?127\\.0\\.0\\.1\\]?:${target.port} bastion$`).test(l)),
        processes.filter((l) => l.startsWith('ssh ')).join('\n'),
      );
    });
  });

  describe('PKCS#11: a softhsm2 token whose RSA key the sshd authorises', () => {
    let token: Token;
    let sshd: LoopbackSshd;
    let dir: string;
    let config: string;
    let knownHosts: string;
    let agentSocket: string;
    let fingerprint: string;
    let env: NodeJS.ProcessEnv;
    const acceptedToken = () =>
      sshd.count(
        new RegExp(`Accepted publickey for ${USER} from 127\\.0\\.0\\.1 .* RSA ${fingerprint.replace(/\+/g, '\\+')}$`),
      );

    before(async () => {
      dir = path.join(tmp, 'pkcs11');
      fs.mkdirSync(dir, { mode: 0o755 });
      token = createToken(path.join(dir, 'token'));
      env = { ...process.env, ...token.env };
      fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', '-'], { input: token.publicKey })
        .toString()
        .split(' ')[1]!;
      const authorized = path.join(dir, 'authorized_keys');
      fs.writeFileSync(authorized, `${token.publicKey}\n`, { mode: 0o644 });
      sshd = await startLoopbackSshd({
        dir: path.join(dir, 'sshd'),
        lines: ['PubkeyAuthentication yes', `AuthorizedKeysFile ${authorized}`, 'GSSAPIAuthentication no'],
      });
      stops.push(() => sshd.stop());
      knownHosts = path.join(dir, 'known_hosts');
      fs.writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);

      const agent = await tokenAgent(token, dir);
      stops.push(() => agent.stop());
      agentSocket = agent.socket;
      const held = execFileSync('ssh-add', ['-l'], { env: { ...env, SSH_AUTH_SOCK: agentSocket } }).toString();
      assert.ok(held.includes(fingerprint), `the agent holds the token's key: ${held}`);

      const hostLines = ['  HostName 127.0.0.1', `  Port ${sshd.port}`, `  User ${USER}`, '  IdentitiesOnly no'];
      config = path.join(dir, 'ssh_config');
      fs.writeFileSync(
        config,
        [
          'Host token-agent',
          ...hostLines,
          `  PKCS11Provider ${SOFTHSM_MODULE}`,
          `  IdentityAgent ${agentSocket}`,
          'Host agent-only',
          ...hostLines,
          `  IdentityAgent ${agentSocket}`,
          'Host token-no-agent',
          ...hostLines,
          `  PKCS11Provider ${SOFTHSM_MODULE}`,
          '  IdentityAgent none',
          '',
        ].join('\n'),
      );
    });

    it('logs in with the token key held by ssh-agent (ssh-add -s): auto chooses OpenSSH for PKCS11Provider', async () => {
      const before = acceptedToken();
      const { t, choice } = await autoTransport('token-agent', config, knownHosts, env);
      assert.equal(choice.client, 'openssh', choice.reason);
      assert.match(choice.reason, /PKCS11Provider \/usr\/lib\/softhsm\/libsofthsm2\.so/);
      assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
      await waitFor(() => acceptedToken() === before + 1, { message: "sshd's Accepted line for the token's key" });
    });

    it('logs in through the agent alone, with no PKCS11Provider: auto keeps ssh2', async () => {
      const before = acceptedToken();
      const { t, choice } = await autoTransport('agent-only', config, knownHosts, env);
      assert.equal(choice.client, 'ssh2', choice.reason);
      assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
      await waitFor(() => acceptedToken() === before + 1, { message: "sshd's Accepted line for the token's key" });
    });

    it("PKCS11Provider without an agent, a front to ask: the token's PIN asked through SSH_ASKPASS, then logged in", async () => {
      const before = acceptedToken();
      const { asked, prompt } = scriptedPrompt([token.pin]);
      const { t, choice } = await autoTransport('token-no-agent', config, knownHosts, env, prompt);
      assert.equal(choice.client, 'openssh', choice.reason);
      assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.match(asked[0]!.text, /^Enter PIN for '.*': ?$/);
      assert.equal(asked[0]!.kind, 'pin');
      assert.equal(asked[0]!.secret, true);
      await waitFor(() => acceptedToken() === before + 1, { message: "sshd's Accepted line for the token's key" });
    });

    it('PKCS11Provider without an agent, nobody to ask: refused, saying the PIN is needed and how to give it', async () => {
      const before = acceptedToken();
      const { t, choice } = await autoTransport('token-no-agent', config, knownHosts, env);
      assert.equal(choice.client, 'openssh', choice.reason);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'auth', err.message);
      assert.match(err.message, /token of PKCS11Provider \/usr\/lib\/softhsm\/libsofthsm2\.so needs its PIN/);
      assert.match(err.message, /ssh-add -s \/usr\/lib\/softhsm\/libsofthsm2\.so/);
      assert.match(err.message, /names no agent .*IdentityAgent/);
      assert.doesNotMatch(err.message, /authorized_keys/);
      assert.equal(acceptedToken(), before);
    });
  });

  describe('a key with a passphrase, no agent: asked through SSH_ASKPASS', () => {
    let sshd: LoopbackSshd;
    let dir: string;
    let config: string;
    let key: string;
    const PASSPHRASE = 'correct horse battery';
    const accepted = () => sshd.count(new RegExp(`Accepted publickey for ${USER} from 127\\.0\\.0\\.1 .* ED25519 `));
    // No agent at all: the key can only be opened with its passphrase.
    const noAgentEnv = (): NodeJS.ProcessEnv => {
      const env = { ...process.env };
      delete env.SSH_AUTH_SOCK;
      delete env.DISPLAY;
      return env;
    };

    before(async () => {
      dir = path.join(tmp, 'passphrase');
      fs.mkdirSync(dir, { mode: 0o755 });
      key = path.join(dir, 'id');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-f', key], { stdio: 'pipe' });
      const authorized = path.join(dir, 'authorized_keys');
      fs.copyFileSync(`${key}.pub`, authorized);
      fs.chmodSync(authorized, 0o644);
      sshd = await startLoopbackSshd({
        dir: path.join(dir, 'sshd'),
        lines: ['PubkeyAuthentication yes', `AuthorizedKeysFile ${authorized}`, 'GSSAPIAuthentication no'],
      });
      stops.push(() => sshd.stop());
      fs.writeFileSync(path.join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
      config = path.join(dir, 'ssh_config');
      fs.writeFileSync(
        config,
        [
          'Host gpu-pass',
          '  HostName 127.0.0.1',
          `  Port ${sshd.port}`,
          `  User ${USER}`,
          `  IdentityFile ${key}`,
          '  IdentitiesOnly yes',
          '  IdentityAgent none',
          `  UserKnownHostsFile ${path.join(dir, 'known_hosts')}`,
          '',
        ].join('\n'),
      );
    });

    let controlParent: string;
    beforeEach(() => {
      controlParent = fs.mkdtempSync(path.join(dir, 'control-'));
    });

    function passphraseTransport(prompt: (p: SshPrompt) => Promise<string | undefined>, logs: string[]) {
      const t = new OpenSshTransport({
        host: { host: 'gpu-pass', configFile: config },
        knownHostsFile: path.join(dir, 'known_hosts'),
        decideUnknownHostKey: async () => 'reject',
        env: noAgentEnv(),
        prompt,
        askpassHelper: ASKPASS_HELPER,
        backoffInitialMs: 200,
        controlParent,
        log: (m) => logs.push(m),
      });
      open.push(t);
      return t;
    }

    it("asks once with OpenSSH's own words; the right passphrase logs in, and is never logged", async () => {
      const before = accepted();
      const { asked, prompt } = scriptedPrompt([PASSPHRASE]);
      const logs: string[] = [];
      const t = passphraseTransport(prompt, logs);
      assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.equal(asked[0]!.text, `Enter passphrase for key '${key}': `);
      assert.equal(asked[0]!.kind, 'passphrase');
      assert.equal(asked[0]!.secret, true);
      assert.match(asked[0]!.host, /gpu-pass \(OpenSSH\)/);
      await waitFor(() => accepted() === before + 1, { message: "sshd's Accepted publickey line" });
      assert.ok(!logs.join('\n').includes(PASSPHRASE), 'the passphrase is not in the log');
      assert.ok(
        logs.some((l) => l.includes('asks: "Enter passphrase for key')),
        logs.join('\n'),
      );
      // The socket and its token died with the login; the control socket lives on.
      const [own] = fs.readdirSync(controlParent);
      assert.deepEqual(fs.readdirSync(path.join(controlParent, own!)).sort(), ['m', 'master.log']);
    });

    it('a wrong passphrase is asked again; cancelled, the login stops with "passphrase not given"', async () => {
      const before = accepted();
      const { asked, prompt } = scriptedPrompt(['not the passphrase', undefined, 'never used']);
      const t = passphraseTransport(prompt, []);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'auth', err.message);
      assert.match(err.message, /stopped: passphrase not given \("Enter passphrase for key '.*\/id':" was cancelled\)/);
      assert.doesNotMatch(err.message, /authorized_keys|ssh-agent/);
      assert.equal(asked.length, 2, JSON.stringify(asked));
      assert.equal(t.state.kind, 'down');
      assert.equal(accepted(), before);
    });
  });
});
