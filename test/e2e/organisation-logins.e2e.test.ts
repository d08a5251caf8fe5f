// Logins as organisations hand them out, in the real editor (the packaged extension in
// code-server): a user certificate held only by an ssh-agent (as Teleport, Vault and step hand it
// over: no key file anywhere); a PKCS#11 token's key (softhsm2, PKCS11Provider, no agent) whose PIN
// is asked in a VS Code input box; a certificate-only host reached through a jump host (ProxyJump).
// Each: the extension picks the system OpenSSH by itself, logs in once, says which client and why,
// never points a certificate user at authorized_keys, and the restart from the palette reaches ready.
// The SSH config is the login user's ~/.ssh/config, read by OpenSSH from the passwd home: the
// scenario gives code-server a home of its own (loginHome.ts), the machine's is not touched.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuHost } from '../gpu-host/harness';
import { certificateOnly } from '../gpu-host/certificateOnly';
import { startLoopbackSshd, type LoopbackSshd } from '../gpu-host/loopbackSshd';
import { createToken, SOFTHSM_MODULE, softhsmMissing, type Token } from '../gpu-host/softhsm';
import { waitFor } from '../util/waitFor';
import {
  isRestartConfirm,
  printResultsDir,
  restartFromPalette,
  simForLoad,
  useScenario,
  type Scenario,
} from './scenario';
import {
  answerInputBox,
  clickDialogButton,
  formatStatusHistory,
  resetRecorders,
  runCommand,
  screenshot,
  waitForDialog,
  waitForInputBox,
  waitForStatus,
} from './workbench';

after(printResultsDir);

const keygen = (...args: string[]) => execFileSync('ssh-keygen', ['-q', ...args], { stdio: 'pipe' });

const sim = (host: GpuHost, hostName: string, extra: Record<string, unknown> = {}) => ({
  name: 'sim',
  host: hostName,
  unit: host.unitName,
  url: host.serverUrl,
  ...extra,
});

/** Waits for ready, then: one login as `accepted` says, the client and why in the log, no authorized_keys. */
async function readyWithOneLogin(
  s: Scenario,
  shot: string,
  logins: () => number,
  why: RegExp,
  secret?: string,
): Promise<void> {
  const history = await waitForStatus(s.page, /^Kimi: ready/, {
    timeoutMs: 180_000,
    failOn: /failed|unreachable|refused/,
  });
  await screenshot(s.page, shot);
  console.log(`    status bar texts:\n${formatStatusHistory(history)}`);
  assert.ok(
    history.some((h) => /^Kimi: loading \d+%/.test(h.text)),
    'the load was followed',
  );
  assert.equal(logins(), 1, `one login:\n${s.host.sshdLog().join('\n')}`);
  const [logFile] = s.cs.findLogFiles(/Kimi Service\.log$/);
  assert.ok(logFile, 'the output channel was written');
  const log = readFileSync(logFile, 'utf8');
  assert.match(log, why, 'the log says which client and why');
  assert.doesNotMatch(log, /authorized_keys/, 'no word of authorized_keys');
  if (secret !== undefined) assert.ok(!log.includes(secret), 'the secret is in no log line');
}

describe('e2e: a user certificate held only by ssh-agent', function () {
  const dir = mkdtempSync(join(tmpdir(), 'kimi-e2e-agent-cert-'));
  const f = (name: string) => join(dir, name);
  let agent: ChildProcess | undefined;
  before(async () => {
    keygen('-t', 'ed25519', '-N', '', '-C', 'user-ca', '-f', f('user_ca'));
    keygen('-t', 'ed25519', '-N', '', '-f', f('id'));
    keygen('-s', f('user_ca'), '-I', 'e2e-agent-cert', '-n', 'root', '-V', '-5m:+1h', f('id.pub'));
    agent = spawn('ssh-agent', ['-D', '-a', f('agent.sock')], { stdio: 'ignore' });
    await waitFor(() => existsSync(f('agent.sock')), { message: 'ssh-agent listens' });
    // ssh-add loads the key and the certificate beside it; then neither is left on disk.
    execFileSync('ssh-add', [f('id')], { env: { ...process.env, SSH_AUTH_SOCK: f('agent.sock') }, stdio: 'pipe' });
    for (const file of ['id', 'id.pub', 'id-cert.pub']) rmSync(f(file));
    const held = execFileSync('ssh-add', ['-L'], { env: { ...process.env, SSH_AUTH_SOCK: f('agent.sock') } });
    assert.match(held.toString(), /^ssh-ed25519-cert-v01@openssh\.com /m, 'the agent holds the certificate');
  });
  after(async () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) {
      const exited = new Promise((r) => agent!.once('exit', r));
      agent.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const scenario = useScenario({
    name: 'agent-certificate-login',
    gpuHost: { sim: simForLoad(8), sshdConfig: certificateOnly(f('user_ca')) },
    hostKeyPolicy: 'strict',
    env: () => ({ SSH_AUTH_SOCK: f('agent.sock') }),
    // No identity file in the settings: the agent is all there is.
    settings: (host) => ({
      'kimiService.servers': [sim(host, '127.0.0.1', { port: host.sshPort, username: 'root' })],
    }),
  });

  it("OpenSSH is chosen for the agent's certificate, one certificate login, and the restart reaches ready", async () => {
    const s = scenario();
    await restartFromPalette(s.page);
    await readyWithOneLogin(
      s,
      'agent-certificate-ready',
      () =>
        s.host.sshdLog().filter((l) => /Accepted publickey for root .*ED25519-CERT .*ID e2e-agent-cert /.test(l))
          .length,
      /SSH client: openssh \(auto: [^\n]*1 certificate in ssh-agent/,
    );
  });
});

describe("e2e: a PKCS#11 token's key, its PIN asked in VS Code", function () {
  const dir = mkdtempSync(join(tmpdir(), 'kimi-e2e-token-'));
  let token: Token | undefined;
  before(() => {
    const missing = softhsmMissing();
    if (missing) throw new Error(`Cannot make a PKCS#11 token: ${missing}`);
    token = createToken(join(dir, 'token'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const scenario = useScenario({
    name: 'token-login',
    gpuHost: {
      sim: simForLoad(8),
      sshdConfig: ({ sshDir }) => {
        // The token's key, and the harness's own for its checks; no other.
        const keys = join(sshDir, 'token_keys');
        writeFileSync(keys, `${token!.publicKey}\n${readFileSync(join(sshDir, 'harness_ed25519.pub'), 'utf8')}`, {
          mode: 0o644,
        });
        return [`AuthorizedKeysFile ${keys}`];
      },
    },
    hostKeyPolicy: 'strict',
    // ssh loads the module itself, which finds the token through SOFTHSM2_CONF.
    env: () => ({ ...token!.env }),
    sshConfig: (host) =>
      [
        'Host gpu-token',
        '  HostName 127.0.0.1',
        `  Port ${host.sshPort}`,
        '  User root',
        `  PKCS11Provider ${SOFTHSM_MODULE}`,
        '  IdentityAgent none',
        '',
      ].join('\n'),
    settings: (host) => ({ 'kimiService.servers': [sim(host, 'gpu-token')] }),
  });

  it("the token's PIN in an input box, one login with the token's key, and the restart reaches ready", async () => {
    const s = scenario();
    const tokenLogins = () =>
      s.host.sshdLog().filter((l) => /Accepted publickey for root .* RSA SHA256:/.test(l)).length;
    await waitForStatus(s.page, /^Kimi: /, { timeoutMs: 60_000 });
    await resetRecorders(s.page);
    // The command logs in first (to read the unit's state), then asks to confirm the restart.
    await runCommand(s.page, 'Restart Kimi service');
    const asked = await waitForInputBox(s.page, { text: /PIN/, timeoutMs: 90_000 });
    await screenshot(s.page, 'token-pin-asked');
    assert.match(asked.title, /Kimi Service: .* asks/, JSON.stringify(asked));
    assert.match(asked.prompt, /Enter PIN for '.*'/, JSON.stringify(asked));
    assert.equal(asked.password, true, 'what is typed is hidden');
    await answerInputBox(s.page, token!.pin);
    const confirm = await waitForDialog(s.page, { timeoutMs: 60_000 });
    assert.ok(isRestartConfirm(confirm), JSON.stringify(confirm));
    await clickDialogButton(s.page, 'Restart');
    await readyWithOneLogin(
      s,
      'token-ready',
      tokenLogins,
      /SSH client: openssh \(auto: [^\n]*PKCS11Provider \/usr\/lib\/softhsm\/libsofthsm2\.so/,
      token!.pin,
    );
  });
});

describe('e2e: ProxyJump through a jump host to a certificate-only host', function () {
  const dir = mkdtempSync(join(tmpdir(), 'kimi-e2e-jump-'));
  const f = (name: string) => join(dir, name);
  let jump: LoopbackSshd | undefined;
  before(async () => {
    keygen('-t', 'ed25519', '-N', '', '-C', 'user-ca', '-f', f('user_ca'));
    keygen('-t', 'ed25519', '-N', '', '-f', f('jump_id'));
    keygen('-t', 'ed25519', '-N', '', '-f', f('id'));
    keygen('-s', f('user_ca'), '-I', 'e2e-via-jump', '-n', 'root', '-V', '-5m:+1h', f('id.pub'));
    writeFileSync(f('jump_keys'), readFileSync(f('jump_id.pub')), { mode: 0o644 });
    jump = await startLoopbackSshd({
      dir: f('sshd-jump'),
      lines: ['PubkeyAuthentication yes', `AuthorizedKeysFile ${f('jump_keys')}`, 'AllowTcpForwarding yes'],
    });
    // The jump's `ssh -W` reads the config, not the connection's own options: its key is named there.
    writeFileSync(f('known_hosts_jump'), `${jump.knownHostsLine}\n`);
  });
  after(async () => {
    await jump?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const scenario = useScenario({
    name: 'proxyjump-certificate-login',
    gpuHost: { sim: simForLoad(8), sshdConfig: certificateOnly(f('user_ca')) },
    hostKeyPolicy: 'strict',
    sshConfig: (host) =>
      [
        'Host bastion',
        '  HostName 127.0.0.1',
        `  Port ${jump!.port}`,
        `  IdentityFile ${f('jump_id')}`,
        `  UserKnownHostsFile ${f('known_hosts_jump')}`,
        'Host gpu-behind-bastion',
        '  HostName 127.0.0.1',
        `  Port ${host.sshPort}`,
        '  ProxyJump bastion',
        `  IdentityFile ${f('id')}`,
        `  CertificateFile ${f('id-cert.pub')}`,
        'Host *',
        '  User root',
        '  IdentitiesOnly yes',
        '  IdentityAgent none',
        '',
      ].join('\n'),
    settings: (host) => ({ 'kimiService.servers': [sim(host, 'gpu-behind-bastion')] }),
  });

  it('OpenSSH is chosen for the certificate, one login on each hop, and the restart reaches ready', async () => {
    const s = scenario();
    const viaJump = () => jump!.count(/Accepted publickey for root from 127\.0\.0\.1 .* ED25519 /);
    await restartFromPalette(s.page);
    await readyWithOneLogin(
      s,
      'proxyjump-ready',
      () =>
        s.host.sshdLog().filter((l) => /Accepted publickey for root .*ED25519-CERT .*ID e2e-via-jump /.test(l)).length,
      /SSH client: openssh \(auto: [^\n]*CertificateFile \S+id-cert\.pub/,
    );
    assert.equal(viaJump(), 1, `one login on the jump host:\n${jump!.log().join('\n')}`);
  });
});
