/**
 * Keyboard-interactive logins against a real sshd with PAM and a TOTP module (pam_oath):
 * `AuthenticationMethods publickey,keyboard-interactive` for the unprivileged user `kimi`.
 * The right code reaches the simulated server; a wrong code is refused with the server's words
 * and not retried; a cancelled question sends nothing; without anyone to ask (a script, the MCP
 * server) the refusal says the host needs an interactive login. The PAM attempts are counted
 * from sshd's own log ("Failed keyboard-interactive/pam") and pam_oath's users file (the last
 * code it took). ProxyJump, password logins and sshd's LoginGraceTime: ssh-login-hops.int.test.ts.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SshTransport } from '../../src/transport/ssh/sshTransport';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { oathLine } from '../gpu-host/pamOath';
import { waitFor } from '../util/waitFor';
import {
  answering,
  endedBeforeLogin,
  freshCode,
  rejection,
  SECRET,
  sshdCount,
  transportTo,
  USER,
  wrongCode,
  type Login,
} from './loginHosts';
import { cliEnv, loginAs, serverEntry, sessionForHost, type TestSession } from './simHost';
import { disposed } from '../util/disposed';

const REPO = path.resolve(__dirname, '..', '..');

describe('SSH logins with a one-time code (sshd + PAM + pam_oath)', function () {
  this.timeout(120_000);
  let host: GpuHost;
  let test: TestSession | undefined;
  const failed = (h: GpuHost = host) => sshdCount(h, /Failed keyboard-interactive\/pam for kimi/);
  const accepted = (h: GpuHost = host) => sshdCount(h, /Accepted keyboard-interactive\/pam for kimi/);
  const asKimi = (login?: Login) =>
    sessionForHost(host, { server: loginAs(host, USER, false), ...(login ? { login } : {}) });

  before(async () => {
    host = await startGpuHost({ shards: 2, users: [USER], oneTimeCodes: { users: [USER], secretHex: SECRET } });
    const started = await host.nsExec(`systemctl start ${host.unit}`);
    assert.equal(started.code, 0, started.stderr);
  });
  afterEach(() => (test = disposed(test)));
  after(() => host?.stop());

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
    const before = {
      failed: failed(),
      endedBeforeLogin: endedBeforeLogin(host),
      oath: await oathLine(host.fixtureDir, USER),
    };
    const a = answering(() => wrongCode());
    test = await asKimi(a.login);
    const err = await rejection(test.session.transport.exec('id -un'));
    assert.equal(err.kind, 'auth');
    assert.match(
      err.message,
      /^Login refused by kimi@127\.0\.0\.1:\d+: it did not accept the code given to "One-time password \(OATH\) for `kimi':"; it now allows keyboard-interactive\. Not tried again/,
    );
    await waitFor(() => endedBeforeLogin(host) > before.endedBeforeLogin, {
      message: 'sshd logged the end of the connection',
    });
    assert.equal(failed(), before.failed + 1, host.sshdLog().slice(-20).join('\n'));
    assert.equal(a.asked.length, 1);
    assert.deepEqual(a.verdicts, [false]);
    assert.equal(await oathLine(host.fixtureDir, USER), before.oath, 'no code was taken');
    const state = test.session.transport.state;
    assert.equal(state.kind, 'down');
    assert.ok(state.kind === 'down' && state.retryInMs === undefined, 'no retry is scheduled');
  });

  it('a cancelled question: "no code given", nothing sent, no PAM failure', async () => {
    const before = { failed: failed(), endedBeforeLogin: endedBeforeLogin(host) };
    const a = answering(() => undefined);
    test = await asKimi(a.login);
    const err = await rejection(test.session.transport.exec('id -un'));
    assert.equal(err.kind, 'auth');
    assert.match(err.message, /^Login refused: no code given to kimi@127\.0\.0\.1:\d+ \(it asked "One-time password/);
    await waitFor(() => endedBeforeLogin(host) > before.endedBeforeLogin, {
      message: 'sshd logged the end of the connection',
    });
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
        // As after the user's yes (this client cannot be asked by elicitation): the login is what refuses.
        const restart = (await client.callTool({
          name: 'kimi_restart',
          arguments: { confirmed: true },
        })) as CallToolResult;
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
      const code = await freshCode(host);
      const a = answering(() => code);
      const log: string[] = [];
      const over = { agentSocket: socket, log: (l: string) => log.push(l) };
      opened.push(transportTo(dir, host, a.login, { identityFiles: [], over }));
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
