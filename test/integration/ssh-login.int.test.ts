/**
 * Keyboard-interactive logins against a real sshd with PAM and a TOTP module (pam_oath):
 * `AuthenticationMethods publickey,keyboard-interactive` for the unprivileged user `kimi`.
 * The right code reaches the simulated server; a wrong code is refused with the server's words
 * and not retried; a cancelled question sends nothing; without anyone to ask (a script) the
 * refusal says the host needs an interactive login. The PAM attempts are counted from sshd's
 * own log ("Failed keyboard-interactive/pam") and pam_oath's users file (the last code it took).
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LoginAnswer, LoginQuestion } from '../../src/fleet/sessionFactory';
import { SshTransport } from '../../src/transport/ssh/sshTransport';
import type { SshEndpoint } from '../../src/transport/ssh/sshConfig';
import { TransportError } from '../../src/transport/transport';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { oathLine, totpCode } from '../gpu-host/pamOath';
import { waitFor } from '../util/waitFor';
import { cliEnv, loginAs, serverEntry, sessionForHost, type TestSession } from './simHost';

const USER = 'kimi';
const SECRET = '3132333435363738393031323334353637383930';
const REPO = path.resolve(__dirname, '..', '..');

async function rejection(p: Promise<unknown>): Promise<TransportError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TransportError, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

/** A code that none of the steps pam_oath accepts now (window=1: the previous, this and the next). */
function wrongCode(): string {
  const valid = new Set([-1, 0, 1, 2].map((k) => totpCode(SECRET, Date.now() + k * 30_000)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!valid.has(c)) return c;
  }
}

const stepOf = (ms: number) => Math.floor(ms / 30_000);
const lastStep = new Map<GpuHost, number>();
/**
 * A code pam_oath takes on `h`: a step later than the last one given there (it refuses a
 * replayed code), within its window (this step or the next); waits for the clock otherwise.
 */
async function freshCode(h: GpuHost): Promise<string> {
  const step = await waitFor(
    () => {
      const now = stepOf(Date.now());
      const next = Math.max(now, (lastStep.get(h) ?? -1) + 1);
      return next <= now + 1 ? next : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200, message: 'a TOTP step not used yet' },
  );
  lastStep.set(h, step);
  return totpCode(SECRET, step * 30_000);
}

/** The questions asked, and the answers' verdicts (settled). */
function answering(answer: (q: LoginQuestion) => string | undefined) {
  const asked: LoginQuestion[] = [];
  const verdicts: boolean[] = [];
  const login = async (q: LoginQuestion): Promise<LoginAnswer | undefined> => {
    asked.push(q);
    const a = answer(q);
    return a === undefined ? undefined : { answers: [a], settled: (ok) => verdicts.push(ok) };
  };
  return { asked, verdicts, login };
}

describe('SSH logins with a one-time code (sshd + PAM + pam_oath)', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  const sshdCount = (h: GpuHost, re: RegExp) => h.sshdLog().filter((l) => re.test(l)).length;
  const failed = (h: GpuHost = host) => sshdCount(h, /Failed keyboard-interactive\/pam for kimi/);
  const accepted = (h: GpuHost = host) => sshdCount(h, /Accepted keyboard-interactive\/pam for kimi/);
  /** sshd is done with a connection of kimi's: it logged its end. */
  const ended = (h: GpuHost = host) =>
    sshdCount(h, /(Connection closed by|Disconnected from) (authenticating )?user kimi/);
  const asKimi = (login?: ReturnType<typeof answering>['login']) =>
    sessionForHost(host, { server: loginAs(host, USER, false), ...(login ? { login } : {}) });

  before(async () => {
    host = await startGpuHost({ shards: 2, users: [USER], oneTimeCodes: { users: [USER], secretHex: SECRET } });
    const started = await host.nsExec(`systemctl start ${host.unit}`);
    assert.equal(started.code, 0, started.stderr);
  });
  afterEach(() => {
    test?.dispose();
    test = undefined;
  });
  after(async () => {
    await host?.stop();
  });

  it('the right code: asked once, in the server’s words, and the session reaches the simulated server', async () => {
    const before = { failed: failed(), accepted: accepted() };
    const code = await freshCode(host);
    const a = answering(() => code);
    test = await asKimi(a.login);
    assert.equal((await test.session.transport.exec('id -un')).stdout, `${USER}\n`);
    // the simulated SGLang (started in before()) answers through the tunnel once loaded
    const t = test;
    await waitFor(async () => (await t.session.client.serverInfo()).ok, {
      timeoutMs: 60_000,
      message: 'the server answers /get_server_info through the SSH tunnel',
    });
    assert.equal(a.asked.length, 1);
    const q = a.asked[0]!;
    assert.equal(q.host, `${USER}@${host.sshHost}:${host.sshPort}`);
    assert.equal(q.method, 'keyboard-interactive');
    assert.equal(q.jumpFor, undefined);
    assert.deepEqual(q.prompts, [{ text: "One-time password (OATH) for `kimi': ", echo: false, kind: 'code' }]);
    assert.deepEqual(a.verdicts, [true]);
    // a second command and the tunnel reuse the connection: no second question
    assert.equal((await test.session.transport.exec('echo again')).stdout, 'again\n');
    assert.equal(a.asked.length, 1);
    assert.equal(accepted(), before.accepted + 1);
    assert.equal(failed(), before.failed);
    assert.match((await oathLine(host.fixtureDir, USER)) ?? '', new RegExp(`\\s${code}\\s`), 'pam_oath took the code');
    assert.ok(!test.logLines.some((l) => l.includes(code)), 'the code is not logged');
  });

  it('a wrong code: refused with the server’s words, one PAM failure, not retried', async () => {
    const before = { failed: failed(), ended: ended(), oath: await oathLine(host.fixtureDir, USER) };
    const a = answering(() => wrongCode());
    test = await asKimi(a.login);
    const err = await rejection(test.session.transport.exec('id -un'));
    assert.equal(err.kind, 'auth');
    assert.match(
      err.message,
      /^Login refused by kimi@127\.0\.0\.1:\d+: it did not accept the code given to "One-time password \(OATH\) for `kimi':"; it now allows keyboard-interactive\. Not tried again/,
    );
    await waitFor(() => ended() > before.ended, { message: 'sshd logged the end of the connection' });
    assert.equal(failed(), before.failed + 1, host.sshdLog().slice(-20).join('\n'));
    assert.equal(a.asked.length, 1);
    assert.deepEqual(a.verdicts, [false]);
    assert.equal(await oathLine(host.fixtureDir, USER), before.oath, 'no code was taken');
    const state = test.session.transport.state;
    assert.equal(state.kind, 'down');
    assert.ok(state.kind === 'down' && state.retryInMs === undefined, 'no retry is scheduled');
  });

  it('a cancelled question: "no code given", nothing sent, no PAM failure', async () => {
    const before = { failed: failed(), ended: ended() };
    const a = answering(() => undefined);
    test = await asKimi(a.login);
    const err = await rejection(test.session.transport.exec('id -un'));
    assert.equal(err.kind, 'auth');
    assert.match(err.message, /^Login refused: no code given to kimi@127\.0\.0\.1:\d+ \(it asked "One-time password/);
    await waitFor(() => ended() > before.ended, { message: 'sshd logged the end of the connection' });
    assert.equal(failed(), before.failed, host.sshdLog().slice(-20).join('\n'));
    assert.equal(a.asked.length, 1);
  });

  it('nobody to ask (a script): the host needs an interactive login, and no PAM attempt is made', async () => {
    const before = { failed: failed(), postponed: sshdCount(host, /Postponed keyboard-interactive for kimi/) };
    test = await asKimi();
    const err = await rejection(test.session.transport.exec('id -un'));
    assert.equal(err.kind, 'auth');
    assert.match(
      err.message,
      /^kimi@127\.0\.0\.1:\d+ needs an interactive login \(keyboard-interactive: a one-time code or a password\)/,
    );
    assert.equal(failed(), before.failed);
    assert.equal(
      sshdCount(host, /Postponed keyboard-interactive for kimi/),
      before.postponed,
      'keyboard-interactive never started',
    );
  });

  it('the CLI in a script (exit 5) and the MCP server (a tool error) say the same words', async () => {
    for (const only of ['cli', 'mcp']) {
      const built = spawnSync(process.execPath, ['esbuild.mjs', `--only=${only}`], { cwd: REPO, encoding: 'utf8' });
      assert.equal(built.status, 0, built.stderr);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-login-cli-'));
    const before = failed();
    try {
      const knownHosts = path.join(dir, 'known_hosts');
      fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
      const config = path.join(dir, 'servers.json');
      fs.writeFileSync(
        config,
        JSON.stringify({
          servers: [{ ...serverEntry(host), ...loginAs(host, USER, false) }],
          knownHostsFile: knownHosts,
          hostKeyPolicy: 'strict',
        }),
      );
      const needs = /needs an interactive login \(keyboard-interactive: a one-time code or a password\)/;
      const run = spawnSync(process.execPath, [path.join(REPO, 'dist', 'cli.js'), 'status', '--config', config], {
        cwd: dir,
        env: cliEnv(dir),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      assert.equal(run.status, 5, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stderr, needs);

      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [path.join(REPO, 'dist', 'mcp.js'), '--config', config],
        env: cliEnv(dir) as Record<string, string>,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'kimi-login-test', version: '0.0.0' });
      await client.connect(transport);
      try {
        const status = (await client.callTool({ name: 'kimi_status', arguments: {} })) as CallToolResult;
        const text = status.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
        assert.match(text, /^sim: login refused · /);
        assert.match(text, needs);
        const restart = (await client.callTool({ name: 'kimi_restart', arguments: {} })) as CallToolResult;
        assert.equal(restart.isError, true);
        const said = restart.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
        assert.match(said, /Nothing was restarted: kimi@127\.0\.0\.1:\d+ needs an interactive login/);
      } finally {
        await client.close();
      }
      assert.equal(failed(), before, 'no PAM attempt from either');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ProxyJump through a second such host: one question per hop, each saying which host asks', async () => {
    const jump = await startGpuHost({ shards: 1, users: [USER], oneTimeCodes: { users: [USER], secretHex: SECRET } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-login-jump-'));
    const t = (() => {
      const knownHosts = path.join(dir, 'known_hosts');
      fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n${jump.knownHostsLine()}\n`);
      const endpoint = (h: GpuHost, alias: string): SshEndpoint => ({
        alias,
        hostName: h.sshHost,
        port: h.sshPort,
        username: USER,
        identityFiles: [h.clientKeyPath],
        identityFilesConfigured: true,
      });
      return { knownHosts, target: { ...endpoint(host, 'gpu'), jumps: [endpoint(jump, 'bastion')] } };
    })();
    const codes = { jump: await freshCode(jump), target: await freshCode(host) };
    const a = answering((q) => (q.jumpFor ? codes.jump : codes.target));
    const transport = new SshTransport({
      target: t.target,
      knownHostsFile: t.knownHosts,
      agentSocket: '',
      decideUnknownHostKey: async () => 'reject',
      requestPassphrase: async () => undefined,
      requestLogin: a.login,
    });
    try {
      assert.equal((await transport.exec('id -un')).stdout, `${USER}\n`);
      assert.deepEqual(
        a.asked.map((q) => [q.alias, q.jumpFor, q.host]),
        [
          ['bastion', 'gpu', `${USER}@${jump.sshHost}:${jump.sshPort}`],
          ['gpu', undefined, `${USER}@${host.sshHost}:${host.sshPort}`],
        ],
      );
      assert.deepEqual(a.verdicts, [true, true]);
      assert.equal(accepted(jump), 1);
    } finally {
      transport.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      await jump.stop();
    }
  });

  it('a password login (sshd hands the password to PAM): asked once as a password, a wrong one not retried', async () => {
    const pw = await startGpuHost({
      shards: 1,
      users: [USER],
      oneTimeCodes: { users: [USER], secretHex: SECRET, then: 'password' },
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-login-pw-'));
    const knownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHosts, `${pw.knownHostsLine()}\n`);
    const connect = (login: ReturnType<typeof answering>['login']) =>
      new SshTransport({
        target: {
          alias: 'pw',
          hostName: pw.sshHost,
          port: pw.sshPort,
          username: USER,
          identityFiles: [pw.clientKeyPath],
          identityFilesConfigured: true,
          jumps: [],
        },
        knownHostsFile: knownHosts,
        agentSocket: '',
        decideUnknownHostKey: async () => 'reject',
        requestPassphrase: async () => undefined,
        requestLogin: login,
      });
    const opened: SshTransport[] = [];
    try {
      const wrong = answering(() => wrongCode());
      opened.push(connect(wrong.login));
      const err = await rejection(opened[0]!.exec('id -un'));
      assert.match(
        err.message,
        /^Login refused by kimi@127\.0\.0\.1:\d+: it did not accept the password given to "Password for kimi@/,
      );
      await waitFor(() => ended(pw) > 0, { message: 'sshd logged the end of the connection' });
      assert.equal(sshdCount(pw, /Failed password for kimi/), 1, pw.sshdLog().join('\n'));
      assert.deepEqual(
        wrong.asked.map((q) => [q.method, q.prompts[0]!.kind]),
        [['password', 'password']],
      );
      assert.deepEqual(wrong.verdicts, [false]);

      const code = await freshCode(pw);
      const right = answering(() => code);
      opened.push(connect(right.login));
      assert.equal((await opened[1]!.exec('id -un')).stdout, `${USER}\n`);
      assert.equal(right.asked.length, 1);
      assert.deepEqual(right.verdicts, [true]);
      assert.equal(sshdCount(pw, /Accepted password for kimi/), 1);
    } finally {
      for (const t of opened) t.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      await pw.stop();
    }
  });

  it('the key in an ssh-agent, then the code: asked once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-login-agent-'));
    const socket = path.join(dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
    const agentExit = new Promise((r) => agent.once('exit', r));
    const opened: SshTransport[] = [];
    try {
      await waitFor(() => fs.existsSync(socket), { message: 'ssh-agent socket' });
      const added = spawnSync('ssh-add', [host.clientKeyPath], {
        env: { ...process.env, SSH_AUTH_SOCK: socket },
        encoding: 'utf8',
      });
      assert.equal(added.status, 0, added.stderr);
      const knownHosts = path.join(dir, 'known_hosts');
      fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
      const code = await freshCode(host);
      const a = answering(() => code);
      const log: string[] = [];
      opened.push(
        new SshTransport({
          target: {
            alias: 'gpu',
            hostName: host.sshHost,
            port: host.sshPort,
            username: USER,
            identityFiles: [],
            identityFilesConfigured: false,
            jumps: [],
          },
          knownHostsFile: knownHosts,
          agentSocket: socket,
          decideUnknownHostKey: async () => 'reject',
          requestPassphrase: async () => undefined,
          requestLogin: a.login,
          log: (l) => log.push(l),
        }),
      );
      assert.equal((await opened[0]!.exec('id -un')).stdout, `${USER}\n`);
      assert.equal(a.asked.length, 1);
      assert.deepEqual(a.verdicts, [true]);
      assert.ok(!log.some((l) => l.includes(code)), 'the code is not logged');
    } finally {
      for (const t of opened) t.dispose();
      agent.kill('SIGTERM');
      await agentExit;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
