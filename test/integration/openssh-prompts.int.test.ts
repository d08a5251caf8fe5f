/**
 * A password and a one-time code over the OpenSSH transport (the client forced to OpenSSH), against
 * the simulated GPU host's real sshd with PAM and pam_oath (test/gpu-host/pamOath.ts): its key, then
 * keyboard-interactive (PAM's own "One-time password" question) on one host and `password` (sshd
 * hands the password to PAM, so the code is the password) on another. OpenSSH's questions reach the
 * prompt callback the fronts give through SSH_ASKPASS: the built helper (dist/askpass.sh,
 * askpass.js) asks over the transport's private socket. A cancelled question stops the login with
 * words that say what was not given, and no answer is ever in the transport's log or the master's.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SshPrompt } from '../../src/transport/openssh/askpass/promptKind';
import { OpenSshTransport } from '../../src/transport/openssh/opensshTransport';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import type { OneTimeCodeOptions } from '../gpu-host/pamOath';
import { oathLine } from '../gpu-host/pamOath';
import { waitFor } from '../util/waitFor';
import { endedBeforeLogin, freshCode, rejection, SECRET, sshdCount, USER, wrongCode } from './loginHosts';

const ASKPASS_HELPER = path.resolve('dist/askpass.sh');

/** A prompt callback that answers from a list (undefined: cancel) and keeps what it was asked. */
function scriptedPrompt(answers: (string | undefined | (() => Promise<string>))[]) {
  const asked: SshPrompt[] = [];
  return {
    asked,
    prompt: async (p: SshPrompt) => {
      asked.push(p);
      const a = answers.shift();
      return typeof a === 'function' ? a() : a;
    },
  };
}

describe('OpenSSH logins with a password or a one-time code, asked through SSH_ASKPASS (sshd + PAM + pam_oath)', function () {
  this.timeout(120_000);
  let tmp: string;
  let otp: GpuHost;
  let pw: GpuHost;
  const open: OpenSshTransport[] = [];
  // No agent and no display: the key is the file's, and every question goes through the helper.
  const env = (): NodeJS.ProcessEnv => {
    const e = { ...process.env };
    delete e.SSH_AUTH_SOCK;
    delete e.DISPLAY;
    return e;
  };
  const hostWith = (then: OneTimeCodeOptions['then']) =>
    startGpuHost({ shards: 1, users: [USER], oneTimeCodes: { users: [USER], secretHex: SECRET, then } });

  before(async () => {
    // The askpass helper as the extension ships it.
    execFileSync(process.execPath, ['esbuild.mjs', '--only=askpass'], { stdio: 'pipe' });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openssh-prompts-'));
    [otp, pw] = await Promise.all([hostWith('keyboard-interactive'), hostWith('password')]);
    const knownHosts = path.join(tmp, 'known_hosts');
    fs.writeFileSync(knownHosts, `${otp.knownHostsLine()}\n${pw.knownHostsLine()}\n`);
    const hostBlock = (alias: string, h: GpuHost) => [
      `Host ${alias}`,
      `  HostName ${h.sshHost}`,
      `  Port ${h.sshPort}`,
      `  User ${USER}`,
      `  IdentityFile ${h.login(USER).identityFile}`,
      '  IdentitiesOnly yes',
      '  IdentityAgent none',
      `  UserKnownHostsFile ${knownHosts}`,
    ];
    fs.writeFileSync(
      path.join(tmp, 'ssh_config'),
      [...hostBlock('gpu-otp', otp), ...hostBlock('gpu-pw', pw), ''].join('\n'),
    );
  });

  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });

  after(async () => {
    while (open.length) open.pop()!.dispose();
    await Promise.all([otp, pw].filter((h) => h !== undefined).map((h) => h.stop()));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The transport forced to OpenSSH; its control folder kept in `controlParent` to read the master's log. */
  function transport(alias: string, prompt: (p: SshPrompt) => Promise<string | undefined>) {
    const logs: string[] = [];
    const controlParent = fs.mkdtempSync(path.join(tmp, 'control-'));
    const t = new OpenSshTransport({
      host: { host: alias, configFile: path.join(tmp, 'ssh_config') },
      knownHostsFile: path.join(tmp, 'known_hosts'),
      decideUnknownHostKey: async () => 'reject',
      env: env(),
      prompt,
      askpassHelper: ASKPASS_HELPER,
      backoffInitialMs: 200,
      controlParent,
      log: (m) => logs.push(m),
    });
    open.push(t);
    const masterLog = () => {
      const [own] = fs.readdirSync(controlParent);
      const file = own !== undefined ? path.join(controlParent, own, 'master.log') : undefined;
      return file !== undefined && fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    };
    return { t, logs, masterLog };
  }

  const ki = (h: GpuHost, what: 'Accepted' | 'Failed') =>
    sshdCount(h, new RegExp(`${what} keyboard-interactive/pam for ${USER} `));
  const password = (h: GpuHost, what: 'Accepted' | 'Failed') =>
    sshdCount(h, new RegExp(`${what} password for ${USER} `));

  it('a one-time code: asked once as a code in PAM’s words, logged in, the code in no log', async () => {
    const before = { accepted: ki(otp, 'Accepted'), failed: ki(otp, 'Failed') };
    const code = await freshCode(otp);
    const { asked, prompt } = scriptedPrompt([code]);
    const { t, logs, masterLog } = transport('gpu-otp', prompt);
    assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.match(asked[0]!.text, /One-time password \(OATH\) for `kimi': $/);
    assert.equal(asked[0]!.kind, 'code');
    assert.equal(asked[0]!.secret, true);
    assert.match(asked[0]!.host, /gpu-otp \(OpenSSH\)/);
    // A second command rides the same master: nothing asked again.
    assert.equal((await t.exec('echo again')).stdout, 'again\n');
    assert.equal(asked.length, 1);
    assert.equal(t.handshakes, 1);
    await waitFor(() => ki(otp, 'Accepted') === before.accepted + 1, { message: "sshd's Accepted line" });
    assert.equal(ki(otp, 'Failed'), before.failed);
    assert.match((await oathLine(otp.fixtureDir, USER)) ?? '', new RegExp(`\\s${code}\\s`), 'pam_oath took the code');
    assert.ok(
      logs.some((l) => l.includes('asks: "') && l.includes('One-time password')),
      logs.join('\n'),
    );
    const master = masterLog();
    assert.notEqual(master, undefined, "the master's log is there to read");
    for (const text of [logs.join('\n'), master ?? '']) assert.ok(!text.includes(code), 'the code is not logged');
  });

  it('a wrong code is asked again; cancelled, the login stops with "one-time code not given"', async () => {
    const before = {
      failed: ki(otp, 'Failed'),
      ended: endedBeforeLogin(otp),
      oath: await oathLine(otp.fixtureDir, USER),
    };
    const wrong = wrongCode();
    const { asked, prompt } = scriptedPrompt([wrong, undefined, 'never used']);
    const { t, logs, masterLog } = transport('gpu-otp', prompt);
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'auth', err.message);
    assert.match(
      err.message,
      /stopped: one-time code not given \(".*One-time password \(OATH\) for `kimi':" was cancelled\)/,
    );
    assert.doesNotMatch(err.message, /authorized_keys|ssh-agent|passphrase/);
    assert.equal(asked.length, 2, JSON.stringify(asked));
    assert.equal(t.state.kind, 'down');
    await waitFor(() => endedBeforeLogin(otp) > before.ended, { message: 'sshd logged the end of the connection' });
    // The wrong code was one PAM failure; the cancelled question sent nothing.
    assert.equal(ki(otp, 'Failed'), before.failed + 1, otp.sshdLog().slice(-20).join('\n'));
    assert.equal(await oathLine(otp.fixtureDir, USER), before.oath, 'no code was taken');
    for (const text of [logs.join('\n'), masterLog() ?? '']) assert.ok(!text.includes(wrong), 'the code is not logged');
  });

  it('a password: asked once as a password in OpenSSH’s words, logged in, the password in no log', async () => {
    const before = { accepted: password(pw, 'Accepted'), failed: password(pw, 'Failed') };
    const secret = await freshCode(pw);
    const { asked, prompt } = scriptedPrompt([secret]);
    const { t, logs, masterLog } = transport('gpu-pw', prompt);
    assert.equal((await t.exec('id -un')).stdout, `${USER}\n`);
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.match(asked[0]!.text, /kimi@127\.0\.0\.1's password: $/);
    assert.equal(asked[0]!.kind, 'password');
    assert.equal(asked[0]!.secret, true);
    assert.equal(t.handshakes, 1);
    await waitFor(() => password(pw, 'Accepted') === before.accepted + 1, { message: "sshd's Accepted line" });
    assert.equal(password(pw, 'Failed'), before.failed);
    assert.match((await oathLine(pw.fixtureDir, USER)) ?? '', new RegExp(`\\s${secret}\\s`), 'PAM took the password');
    const master = masterLog();
    assert.notEqual(master, undefined, "the master's log is there to read");
    for (const text of [logs.join('\n'), master ?? '']) assert.ok(!text.includes(secret), 'the password is not logged');
  });

  it('a cancelled password question: "password not given", nothing sent to PAM', async () => {
    const before = { failed: password(pw, 'Failed'), ended: endedBeforeLogin(pw) };
    const { asked, prompt } = scriptedPrompt([undefined, 'never used']);
    const { t } = transport('gpu-pw', prompt);
    const err = await rejection(t.exec('id -un'));
    assert.equal(err.kind, 'auth', err.message);
    assert.match(err.message, /stopped: password not given \("kimi@127\.0\.0\.1's password:" was cancelled\)/);
    assert.doesNotMatch(err.message, /authorized_keys|ssh-agent|passphrase/);
    assert.equal(asked.length, 1, JSON.stringify(asked));
    await waitFor(() => endedBeforeLogin(pw) > before.ended, { message: 'sshd logged the end of the connection' });
    assert.equal(password(pw, 'Failed'), before.failed, pw.sshdLog().slice(-20).join('\n'));
  });

  it('three wrong codes: OpenSSH asks as often as it allows, then the refusal says the answers were not accepted', async () => {
    const before = { failed: ki(otp, 'Failed'), oath: await oathLine(otp.fixtureDir, USER) };
    const { asked, prompt } = scriptedPrompt([wrongCode(), wrongCode(), wrongCode(), 'never used']);
    const { t } = transport('gpu-otp', prompt);
    const err = await rejection(t.connect());
    assert.equal(err.kind, 'auth', err.message);
    assert.match(
      err.message,
      /^Login refused by kimi@127\.0\.0\.1:\d+ \(it allows: keyboard-interactive\): it did not accept the answers given to its questions/,
    );
    assert.doesNotMatch(err.message, /authorized_keys|no key was accepted/);
    assert.equal(asked.length, 3, JSON.stringify(asked));
    await waitFor(() => ki(otp, 'Failed') === before.failed + 3, {
      message: `three PAM failures: ${otp.sshdLog().slice(-20).join('\n')}`,
    });
    assert.equal(await oathLine(otp.fixtureDir, USER), before.oath, 'no code was taken');
  });

  it('nobody to ask (MCP, a CLI without a terminal): the host needs an interactive login, no PAM attempt', async () => {
    for (const h of [otp, pw]) {
      const before = { ki: ki(h, 'Failed'), password: password(h, 'Failed') };
      const t = new OpenSshTransport({
        host: { host: h === otp ? 'gpu-otp' : 'gpu-pw', configFile: path.join(tmp, 'ssh_config') },
        knownHostsFile: path.join(tmp, 'known_hosts'),
        decideUnknownHostKey: async () => 'reject',
        env: env(),
        backoffInitialMs: 200,
      });
      open.push(t);
      const err = await rejection(t.connect());
      assert.equal(err.kind, 'auth', err.message);
      const method = h === otp ? 'keyboard-interactive' : 'password';
      assert.match(
        err.message,
        new RegExp(
          `^kimi@127\\.0\\.0\\.1:\\d+ needs an interactive login \\(${method}: a one-time code or a password\\), and nobody can answer it here`,
        ),
      );
      assert.doesNotMatch(err.message, /authorized_keys|no key was accepted/);
      assert.equal(ki(h, 'Failed'), before.ki);
      assert.equal(password(h, 'Failed'), before.password);
    }
  });
});
