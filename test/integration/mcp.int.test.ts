/**
 * The MCP server (`node dist/mcp.js --config FILE`) driven through the SDK's own Client over
 * stdio, against a real sshd and the simulated GPU host: the tools and their input checks,
 * restart then wait with progress notifications counted (every state change, and at least every
 * 10 s through a load that hangs for a while), a crash that returns failed with its cause, a wait
 * cancelled by the client (the server stays usable), the logs, one SSH connection for all of it,
 * and the end of the process when the client closes stdin or sends SIGTERM.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { serverEntry } from './simHost';
import { waitFor } from '../util/waitFor';
import { pidAlive } from '../util/pidAlive';

const REPO = path.resolve(__dirname, '..', '..');
const MCP_JS = path.join(REPO, 'dist', 'mcp.js');
const TOOLS = ['kimi_logs', 'kimi_restart', 'kimi_status', 'kimi_verify_parsers', 'kimi_wait'];

interface Progress {
  readonly at: number;
  readonly progress: number;
  readonly total: number | undefined;
  readonly message: string | undefined;
}

interface Running {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  readonly stderr: string[];
}

/** The client's answer to an elicitation (the restart confirmation); undefined: the client does not declare elicitation. */
type Elicit = (request: ElicitRequest) => Promise<ElicitResult>;

async function startMcp(configFile: string, stateDir: string, elicit?: Elicit): Promise<Running> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_JS, '--config', configFile],
    env: { ...(process.env as Record<string, string>), XDG_STATE_HOME: stateDir, XDG_CONFIG_HOME: stateDir },
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  let partial = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    stderr.push(...lines);
  });
  const client = new Client(
    { name: 'kimi-mcp-test', version: '0.0.0' },
    elicit ? { capabilities: { elicitation: {} } } : {},
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request));
  await client.connect(transport);
  return { client, transport, stderr };
}

const text = (r: CallToolResult, i = 0) => (r.content[i] as { type: 'text'; text: string }).text;
const json = (r: CallToolResult) => r.structuredContent as Record<string, any>;

describe('MCP server (node dist/mcp.js) through the SDK client, against the simulated GPU host', function () {
  this.timeout(150_000);
  let host: GpuHost;
  let dir: string;
  let configFile: string;
  let mcp: Running;
  /** What the user answers to the restart confirmation (kimiService.confirmRestart is on: the default). */
  let answer: ElicitResult = { action: 'accept', content: { restart: true } };
  const questions: string[] = [];

  const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;
  const call = (name: string, args: Record<string, unknown> = {}, options: Parameters<Client['callTool']>[2] = {}) =>
    mcp.client.callTool({ name, arguments: args }, undefined, options) as Promise<CallToolResult>;

  before(async () => {
    // The bundle under test is the current source (a separate run of this file needs no `npm run build`).
    execFileSync(process.execPath, ['esbuild.mjs', '--only=mcp'], { cwd: REPO, stdio: 'pipe' });
    host = await startGpuHost({
      shards: 12,
      shardBytes: 2 * 1024 * 1024,
      sim: { readMBps: 8, warmReadMBps: 8, coldFiles: 'all' },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-mcp-'));
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, `${host.knownHostsLine()}\n`);
    configFile = path.join(dir, 'servers.json');
    fs.writeFileSync(
      configFile,
      JSON.stringify(
        {
          servers: [serverEntry(host, 'sim')],
          knownHostsFile,
          hostKeyPolicy: 'ask',
          pollIntervalSeconds: 0.5,
          loadTimeoutMinutes: 2,
        },
        null,
        2,
      ),
    );
    mcp = await startMcp(configFile, dir, async (request) => {
      questions.push((request.params as { message: string }).message);
      return answer;
    });
  });

  after(async () => {
    await mcp?.client.close().catch(() => undefined);
    await host?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists the five tools, with descriptions for a model and validated inputs; a bad input runs nothing', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const wait = tools.find((t) => t.name === 'kimi_wait')!;
    assert.match(wait.description ?? '', /call kimi_wait AGAIN, do NOT restart/);
    const timeout = (wait.inputSchema.properties as Record<string, any>).timeoutSeconds;
    assert.equal(timeout.default, 90);
    assert.equal(timeout.maximum, 300);
    const restart = tools.find((t) => t.name === 'kimi_restart')!;
    assert.deepEqual(Object.keys(restart.inputSchema.properties ?? {}).sort(), ['confirmed', 'force', 'server']);

    const before = await restarts();
    const bad = await call('kimi_restart', { force: 'yes' });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /force must be true or false/);
    const tooLong = await call('kimi_wait', { timeoutSeconds: 900 });
    assert.equal(tooLong.isError, true);
    assert.match(text(tooLong), /timeoutSeconds must be at most 300/);
    const unknown = await call('kimi_restart', { server: 'gpu9' });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /No server named "gpu9" in \S+ \(configured: "sim"\)\. Nothing was run\./);
    assert.equal(await restarts(), before, 'no restart was run for a bad input');
  });

  it('kimi_status answers for every server (watching, without restarting)', async () => {
    const before = await restarts();
    const status = await call('kimi_status');
    assert.ok(!status.isError, text(status));
    const reports = json(status).servers as any[];
    assert.equal(reports.length, 1);
    assert.equal(reports[0].server, 'sim');
    assert.notEqual(reports[0].state, 'not watched', text(status));
    assert.match(text(status), /^sim: /);
    assert.deepEqual(JSON.parse(text(status, 1)), json(status), 'the second text block is the same JSON');
    assert.equal(await restarts(), before);
  });

  it('kimi_restart, then kimi_wait with a progressToken: a notification at every state change and at least every 10 s, then ready', async () => {
    // The weights stop for 14 s after 3 of 12 shards: a stretch with no change, where only heartbeats come.
    await host.configureSimulator({
      fault: { hangAt: 'weights', afterShards: 3, resumeAfterSeconds: 14 },
      warmupSeconds: 1.5,
    });
    const before = await restarts();
    // kimiService.confirmRestart (on by default) asks the user through the client: a no restarts nothing.
    answer = { action: 'decline' };
    const declined = await call('kimi_restart');
    assert.equal(declined.isError, true);
    assert.match(text(declined), /Not restarted: the user declined it \(kimiService\.confirmRestart\)/);
    assert.equal(await restarts(), before, 'no restart after a no');
    answer = { action: 'accept', content: { restart: true } };
    const restart = await call('kimi_restart');
    assert.ok(!restart.isError, text(restart));
    assert.equal(json(restart).action, 'restarted', text(restart));
    assert.match(text(restart), /Call kimi_wait/);
    assert.equal(questions.length, 2);
    assert.match(questions[1]!, /^Restart sglang-k26-ddtree\.service on sim\?\n\nThe model server .* stops now/);
    assert.match(questions[1]!, /Expected load time: /);

    // A second restart asked during that load watches it instead, without asking (nothing is restarted).
    const again = await call('kimi_restart');
    assert.equal(json(again).action, 'attached', text(again));
    assert.match(text(again), /Not restarted/);
    assert.equal(questions.length, 2, 'following a load asks nothing');

    const progress: Progress[] = [];
    const started = Date.now();
    const result = await call(
      'kimi_wait',
      { timeoutSeconds: 120 },
      {
        onprogress: (p) => progress.push({ at: Date.now(), progress: p.progress, total: p.total, message: p.message }),
        resetTimeoutOnProgress: true,
      },
    );
    const ended = Date.now();
    assert.ok(!result.isError, text(result));
    assert.equal(json(result).result, 'ready', text(result));
    assert.match(text(result), /sim is ready: it answered a real completion/);
    assert.equal(await restarts(), before + 1, 'exactly one restart on the host');

    const messages = progress.map((p) => p.message ?? '');
    // every state on the way, in order
    const words = messages.map((m) => /^sim: (\w+(?: up)?)/.exec(m)?.[1]).filter((w): w is string => !!w);
    const order = words.filter((w, i) => words[i - 1] !== w);
    for (const w of ['loading', 'warming up', 'ready'])
      assert.ok(order.includes(w), `no "${w}" notification: ${order}`);
    assert.ok(
      order.indexOf('loading') < order.indexOf('warming up') && order.indexOf('warming up') < order.indexOf('ready'),
      `out of order: ${order}`,
    );
    assert.equal(order[order.length - 1], 'ready');
    // each loading percentage that changed was told (the weights move 8 % a shard here)
    const percents = [...new Set(messages.map((m) => /loading (\d+)%/.exec(m)?.[1]).filter(Boolean))];
    assert.ok(percents.length >= 4, `few percentages told: ${percents}`);
    // progress: percent of 100, strictly increasing, 100 at ready
    assert.ok(progress.every((p) => p.total === 100));
    for (let i = 1; i < progress.length; i++)
      assert.ok(
        progress[i]!.progress > progress[i - 1]!.progress,
        `progress not increasing at ${i}: ${progress.map((p) => p.progress)}`,
      );
    assert.equal(progress[progress.length - 1]!.progress, 100);
    // never 10 s without a notification, the 14 s hang included
    const times = [started, ...progress.map((p) => p.at), ended];
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    assert.ok(Math.max(...gaps) <= 10_000, `a gap of ${Math.max(...gaps)} ms between notifications`);
    // the hang: stuck at 3/12 shards for 14 s, told again and again without any change
    const hang = progress.filter((p) => /3\/12 shards/.test(p.message ?? ''));
    assert.ok(hang.length >= 2, `notifications during the hang: ${hang.length} (${messages.join(' | ')})`);
    console.log(
      `      ${progress.length} progress notifications in ${((ended - started) / 1000).toFixed(1)} s, ${order.length} states (${order.join(' → ')}), ${percents.length} loading percentages, ${hang.length} during the 14 s hang, longest gap ${(Math.max(...gaps) / 1000).toFixed(1)} s`,
    );
  });

  it('kimi_verify_parsers on the ready server: the summary and the table of checks', async () => {
    const verify = await call('kimi_verify_parsers');
    assert.ok(!verify.isError, text(verify));
    const value = json(verify);
    assert.equal(value.server, 'sim');
    assert.match(value.summary, /Parser/, value.summary); // the default unit has no parser flags: a finding, not a tool error
    assert.ok(value.table.split('\n').length >= 3, value.table);
    assert.ok(text(verify).startsWith(`sim: ${value.summary}`));
    const status = await call('kimi_status');
    assert.equal(json(status).servers[0].parsers, value.summary, 'the status carries the last verification');
  });

  it('a crash during the load: kimi_wait returns failed with the exit status and the error lines', async () => {
    await host.configureSimulator({ fault: { crashAt: 'weights', afterShards: 2, kind: 'oom' } });
    const restart = await call('kimi_restart');
    assert.equal(json(restart).action, 'restarted', text(restart));
    const result = await call(
      'kimi_wait',
      { timeoutSeconds: 90 },
      { onprogress: () => undefined, resetTimeoutOnProgress: true },
    );
    assert.ok(!result.isError, text(result));
    const wait = json(result);
    assert.equal(wait.result, 'failed', text(result));
    assert.equal(wait.report.state, 'failed');
    assert.match(wait.report.lastError, /status 1|status=1/);
    // the cause: the exception of the traceback, in the text a model reads and in the JSON
    assert.ok(
      (wait.errorLines as string[]).some((l) => /OutOfMemoryError: CUDA out of memory/.test(l)),
      JSON.stringify(wait.errorLines),
    );
    assert.match(text(result), /Error lines of the server:[\s\S]*OutOfMemoryError: CUDA out of memory/);
    assert.match(text(result), /Do not wait again; read the logs, fix the cause, then restart\./);
  });

  it('kimi_logs returns the journal and the server log, secrets masked', async () => {
    await host.appendJournal('launching with HF_TOKEN=hf_mcpSecret123 --api-key sk-mcpSecret456', { ident: 'python' });
    const logs = await call('kimi_logs', { lines: 40 });
    assert.ok(!logs.isError, text(logs));
    const value = json(logs);
    assert.ok(value.journal.length > 0 && value.journal.length <= 40, `journal lines: ${value.journal.length}`);
    assert.ok(
      value.journal.some((l: string) => /OutOfMemoryError|CUDA out of memory/.test(l)),
      value.journal.join('\n'),
    );
    assert.ok(value.log.length > 0 && value.log.every((l: string) => l.includes('[sim]')), value.log.join('\n'));
    assert.match(text(logs), /^Journal of sglang-k26-ddtree\.service on sim \(last \d+ lines\):/);
    assert.match(text(logs), /Log of the Kimi MCP server about sim/);
    assert.ok(
      value.journal.some((l: string) => /HF_TOKEN=\*\*\* --api-key \*\*\*/.test(l)),
      value.journal.slice(-3).join('\n'),
    );
    assert.doesNotMatch(text(logs), /mcpSecret/);
  });

  it('a cancelled kimi_wait returns at once and the server stays usable', async () => {
    await host.configureSimulator({ fault: { hangAt: 'weights', afterShards: 2 } });
    const restart = await call('kimi_restart');
    assert.equal(json(restart).action, 'restarted', text(restart));
    const abort = new AbortController();
    let notified = 0;
    const waiting = call(
      'kimi_wait',
      { timeoutSeconds: 120 },
      { signal: abort.signal, onprogress: () => notified++, resetTimeoutOnProgress: true },
    );
    await waitFor(() => notified >= 1, { timeoutMs: 15_000, message: 'a first progress notification' });
    const cancelledAt = Date.now();
    abort.abort('the user changed their mind');
    await assert.rejects(waiting, /abort|cancel|changed their mind/i);
    const rejectedIn = Date.now() - cancelledAt;
    assert.ok(rejectedIn < 1000, `the call returned ${rejectedIn} ms after the abort`);
    // The server ended its wait (not just the client): it says so on stderr.
    const line = await waitFor(() => mcp.stderr.find((l) => /kimi_wait: cancelled after/.test(l)), {
      timeoutMs: 10_000,
      message: 'the server logging the cancelled wait',
    });
    assert.match(line, /\[sim\] kimi_wait: cancelled/);
    const serverEnded = Date.parse(line.split(' ')[0]!) - cancelledAt;
    const t0 = Date.now();
    const status = await call('kimi_status', { server: 'sim' });
    assert.ok(!status.isError, text(status));
    assert.ok(Date.now() - t0 < 10_000, `kimi_status took ${Date.now() - t0} ms`);
    console.log(
      `      the call rejected ${rejectedIn} ms after the abort; the server ended its wait ${serverEnded} ms after it; kimi_status then answered in ${Date.now() - t0} ms`,
    );
    assert.match(json(status).servers[0].state, /loading|stalled/, text(status));
    const verify = await call('kimi_verify_parsers');
    assert.equal(verify.isError, true);
    assert.match(text(verify), /only on a ready server: call kimi_wait until it is ready/);
    await host.configureSimulator({ fault: {} });
  });

  it('a bad configuration: the server still starts and every tool says what is wrong, nothing run', async () => {
    const badFile = path.join(dir, 'bad.json');
    fs.writeFileSync(badFile, JSON.stringify([{ name: 'x', host: '127.0.0.1', unit: 'x; rm -rf /' }]));
    const bad = await startMcp(badFile, dir);
    try {
      for (const name of ['kimi_status', 'kimi_restart', 'kimi_wait']) {
        const r = (await bad.client.callTool({ name, arguments: {} })) as CallToolResult;
        assert.equal(r.isError, true, name);
        assert.match(text(r), /The Kimi configuration is not valid \(.*bad\.json\): .*unit.*Nothing was run/, text(r));
      }
    } finally {
      await bad.client.close();
    }
  });

  it('one SSH connection served every call', () => {
    assert.equal(
      host.handshakes(),
      1,
      host
        .sshdLog()
        .filter((l) => l.includes('Accepted'))
        .join('\n'),
    );
  });

  it('a client that cannot be asked (no elicitation): kimi_restart is refused until it carries confirmed: true', async () => {
    const plain = await startMcp(configFile, dir);
    try {
      const before = await restarts();
      const refused = (await plain.client.callTool({ name: 'kimi_restart', arguments: {} })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.match(
        text(refused),
        /this MCP client cannot be asked for a confirmation \(no MCP elicitation\)\. Ask the user whether to restart sglang-k26-ddtree\.service on sim now .*call kimi_restart again with confirmed: true\. Nothing was run\./,
      );
      assert.equal(await restarts(), before, 'nothing restarted without the confirmation');
      const confirmed = (await plain.client.callTool({
        name: 'kimi_restart',
        // force: the load the previous test left hanging is started again rather than followed
        arguments: { confirmed: true, force: true },
      })) as CallToolResult;
      assert.ok(!confirmed.isError, text(confirmed));
      assert.equal(json(confirmed).action, 'restarted', text(confirmed));
      assert.equal(await restarts(), before + 1);
      assert.ok(
        plain.stderr.some((l) => /Host keys: hostKeyPolicy "ask" acts as "strict" in the MCP server/.test(l)),
        plain.stderr.join('\n'),
      );
    } finally {
      await plain.client.close();
    }
  });

  it('ends when the client closes stdin, and on SIGTERM', async () => {
    const pid = mcp.transport.pid!;
    assert.ok(pidAlive(pid));
    // The SDK's close() ends stdin, then sends SIGTERM after 2 s: the log says which one ended the server.
    await mcp.client.close();
    await waitFor(() => !pidAlive(pid), { timeoutMs: 5000, message: 'the MCP server process to exit' });
    assert.ok(
      mcp.stderr.some((l) => /Shutting down \(stdin closed\)/.test(l)),
      mcp.stderr.slice(-5).join('\n'),
    );

    const second = await startMcp(configFile, dir);
    const status = await second.client.callTool({ name: 'kimi_status', arguments: {} });
    assert.ok(!status.isError);
    const pid2 = second.transport.pid!;
    process.kill(pid2, 'SIGTERM');
    await waitFor(() => !pidAlive(pid2), { timeoutMs: 5000, message: 'the MCP server to exit on SIGTERM' });
    assert.ok(
      second.stderr.some((l) => /Shutting down \(SIGTERM\)/.test(l)),
      second.stderr.slice(-5).join('\n'),
    );
    await second.client.close().catch(() => undefined);
  });
});
