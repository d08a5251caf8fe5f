import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { startGpuHost, type GpuHost } from '../../gpu-host/harness';
import { serverEntry } from '../../gpu-host/serverEntry';
import type { KimiApi } from '../../../src/extension';
import type { ServerProfile, Settings } from '../../../src/config/config';
import type { Fleet } from '../../../src/fleet/fleet';
import type { ServerSnapshot, WaitResult } from '../../../src/fleet/fleetTypes';
import { languageModelTools, TOOL_NAMES } from '../../../src/fronts/lm/tools';
import type { ToolHost } from '../../../src/fronts/lm/toolHost';
import type { SettingsSource } from '../../../src/config/settingsSource';
import { waitFor } from '../../util/waitFor';

const EXTENSION_ID = 'kimi-tools.kimi-service';
const SERVER = 'lm-sim';
/** Every state word a front may report (present/report). */
const STATE_WORDS = [
  'stopped',
  'stopping',
  'restarting',
  'loading',
  'warming up',
  'ready',
  'unhealthy',
  'failed',
  'unreachable',
  'stalled',
  'not watched',
  'host key changed',
  'host key refused',
  'login refused',
  'sudo refused',
  'settings',
];

interface ToolAnswer {
  readonly text: string;
  readonly json: any;
}

/** Calls a tool the way Copilot or another extension does, outside a chat session. */
async function invoke(name: string, input: object, token?: vscode.CancellationToken): Promise<ToolAnswer> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token);
  const texts = result.content
    .map((part) => (part as { value?: unknown }).value)
    .filter((v): v is string => typeof v === 'string');
  assert.equal(texts.length, 2, `${name}: a text part and a JSON part (${JSON.stringify(result.content)})`);
  return { text: texts[0]!, json: JSON.parse(texts[1]!) };
}

function waitUntil<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> {
  return waitFor(probe, { timeoutMs, intervalMs: 200, message: what });
}

/** A fleet and controller stand-in for calling a tool class directly (what invokeTool cannot show). */
function stubHost(fleet: Partial<Fleet>, profile: ServerProfile): ToolHost {
  return {
    fleet: {
      servers: [profile],
      server: (name: string) => (name === profile.name ? profile : undefined),
      ...fleet,
    } as unknown as Fleet,
    openSession: async () => ({}),
  };
}

function snapshotOf(profile: ServerProfile, loading = false): ServerSnapshot {
  return { server: profile, state: undefined, watching: loading, loading, refusal: undefined, verification: undefined };
}

/** Settings with the one server and kimiService.confirmRestart as given. */
function settingsWith(profile: ServerProfile, confirmRestart = true): SettingsSource {
  return {
    read: () => ({
      ok: true,
      settings: { servers: [profile], activeServer: undefined, confirmRestart } as unknown as Settings,
      source: 'kimiService.servers',
    }),
  };
}

function restartTool(fleet: Partial<Fleet>, profile: ServerProfile, confirmRestart = true) {
  return languageModelTools(stubHost(fleet, profile), settingsWith(profile, confirmRestart)).kimi_restart;
}

/**
 * The language-model tools (kimi_status, kimi_restart, kimi_wait, kimi_verify_parsers,
 * kimi_logs) through vscode.lm.invokeTool, against a simulated GPU host of their own. Sets every
 * setting it relies on first, so it runs before or after the other suites alike.
 */
export function registerLmToolTests(root: Mocha.Suite): void {
  const suite = Mocha.Suite.create(root, 'Language-model tools through vscode.lm.invokeTool');
  let host: GpuHost;
  let api: KimiApi;
  let tmp: string;
  const restarts = async () => (await host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length;
  let restartsBefore = 0;

  suite.beforeAll(async () => {
    host = await startGpuHost({ shards: 8, shardBytes: 1024 * 1024 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-lm-kh-'));
    const knownHosts = path.join(tmp, 'known_hosts');
    fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
    const config = vscode.workspace.getConfiguration('kimiService');
    const global = vscode.ConfigurationTarget.Global;
    await config.update('knownHostsFile', knownHosts, global);
    await config.update('hostKeyPolicy', 'strict', global);
    // With confirmation on, invokeTool outside a chat shows a modal dialog no test can answer.
    await config.update('confirmRestart', false, global);
    await config.update('pollIntervalSeconds', 0.5, global);
    await config.update('watchAfterReady', true, global);
    await config.update('activeServer', undefined, global);
    await config.update('servers', [serverEntry(host, SERVER)], global);
    const extension = vscode.extensions.getExtension<KimiApi>(EXTENSION_ID);
    assert.ok(extension, 'the extension is installed');
    api = await extension.activate();
  });

  suite.afterAll(async () => {
    await vscode.commands.executeCommand('kimiService.stopWatching');
    await host?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  suite.addTest(
    new Mocha.Test('vscode.lm.tools lists the five tools with their schemas', async () => {
      const tools = await waitUntil(
        'the five tools listed',
        () => {
          const ours = vscode.lm.tools.filter((t) => t.name.startsWith('kimi_'));
          return ours.length === TOOL_NAMES.length ? ours : undefined;
        },
        10_000,
      );
      assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
      for (const tool of tools) {
        assert.ok(tool.description.length > 100, `${tool.name} has a model description`);
        assert.equal(
          (tool.inputSchema as { type?: string } | undefined)?.type,
          'object',
          `${tool.name} has an input schema`,
        );
      }
      const wait = tools.find((t) => t.name === 'kimi_wait')!;
      assert.match(wait.description, /call kimi_wait again/);
    }),
  );

  suite.addTest(
    new Mocha.Test('kimi_status: the state word, in text and as JSON', async () => {
      const { text, json } = await invoke('kimi_status', {});
      assert.equal(json.activeServer, SERVER);
      assert.equal(json.servers.length, 1);
      const report = json.servers[0];
      assert.equal(report.server, SERVER);
      assert.equal(report.unit, `${host.unitName}.service`);
      assert.ok(STATE_WORDS.includes(report.state), `a known state word: ${report.state}`);
      // A server nobody has watched yet in this window.
      assert.equal(report.state, 'not watched');
      assert.match(text, new RegExp(`^${SERVER}: not watched`));
      assert.match(text, /call kimi_wait/);
    }),
  );

  suite.addTest(
    new Mocha.Test('an unknown server name is an error that names it and the configured ones', async () => {
      await assert.rejects(invoke('kimi_status', { server: 'nope' }), (error: Error) => {
        assert.match(error.message, /No server named "nope" in kimiService\.servers \(configured: "lm-sim"\)/);
        return true;
      });
      await assert.rejects(
        invoke('kimi_wait', { timeoutSeconds: 'soon' }),
        /timeoutSeconds must be a number of seconds/,
      );
    }),
  );

  suite.addTest(
    new Mocha.Test('invalid settings: the error names the setting, nothing is run', async () => {
      const config = vscode.workspace.getConfiguration('kimiService');
      const before = await restarts();
      await config.update('hostKeyPolicy', 'never', vscode.ConfigurationTarget.Global);
      try {
        await waitUntil(
          'settings error in the status bar',
          () => (api.statusText().includes('settings') ? true : undefined),
          10_000,
        );
        await assert.rejects(invoke('kimi_restart', {}), /kimiService\.hostKeyPolicy/);
        assert.equal(await restarts(), before);
      } finally {
        await config.update('hostKeyPolicy', 'strict', vscode.ConfigurationTarget.Global);
      }
      await waitUntil('settings valid again', () => (api.statusText().includes('settings') ? undefined : true), 10_000);
    }),
  );

  suite.addTest(
    new Mocha.Test(
      'kimi_restart.prepareInvocation (called directly) asks with server, unit and expected load time when kimiService.confirmRestart is on',
      async () => {
        const profile = { name: 'gpu7', host: 'gpu7.example', unit: 'sglang-k26-ddtree.service' } as ServerProfile;
        const forecast = async () =>
          ({ text: '~9 min: 41% of the weights are cached' }) as Awaited<ReturnType<Fleet['forecast']>>;
        const tool = restartTool({ forecast, snapshot: () => snapshotOf(profile) }, profile);
        const prepared = await tool.prepareInvocation({ input: {} });
        assert.ok(prepared.confirmationMessages, 'a confirmation');
        assert.equal(prepared.confirmationMessages.title, 'Restart sglang-k26-ddtree.service on gpu7?');
        assert.match(String(prepared.confirmationMessages.message), /on gpu7 \(gpu7\.example\) stops now/);
        assert.match(
          String(prepared.confirmationMessages.message),
          /Expected load time: ~9 min: 41% of the weights are cached\./,
        );
        assert.match(String(prepared.invocationMessage), /Restarting sglang-k26-ddtree\.service on gpu7/);

        // A forecast that does not come in time: "unknown", and prepareInvocation still answers fast.
        const slow = restartTool(
          { forecast: () => new Promise(() => undefined), snapshot: () => snapshotOf(profile) },
          profile,
        );
        const started = Date.now();
        const late = await slow.prepareInvocation({ input: {} });
        assert.ok(Date.now() - started < 3000, 'under 3 s');
        assert.match(
          String(late.confirmationMessages?.message),
          /Expected load time: unknown \(no forecast within 2 s\)/,
        );
        const failing = restartTool(
          {
            forecast: async () => Promise.reject(new Error('connection refused')),
            snapshot: () => snapshotOf(profile),
          },
          profile,
        );
        assert.match(
          String((await failing.prepareInvocation({ input: {} })).confirmationMessages?.message),
          /Expected load time: unknown \(connection refused\)/,
        );

        // kimiService.confirmRestart off: no question; a load under way is followed: nothing to confirm.
        const quiet = restartTool({ forecast, snapshot: () => snapshotOf(profile) }, profile, false);
        assert.equal((await quiet.prepareInvocation({ input: {} })).confirmationMessages, undefined);
        const loading = restartTool({ forecast, snapshot: () => snapshotOf(profile, true) }, profile);
        const following = await loading.prepareInvocation({ input: {} });
        assert.equal(following.confirmationMessages, undefined);
        assert.match(String(following.invocationMessage), /Following the load/);
        const forced = await loading.prepareInvocation({ input: { force: true } });
        assert.match(String(forced.confirmationMessages?.message), /force: a load already under way is cut short/);
      },
    ),
  );

  suite.addTest(
    new Mocha.Test('kimi_wait (called directly) aborts the fleet wait when its token is cancelled', async () => {
      const profile = { name: 'gpu7', host: 'gpu7.example', unit: 'sglang-k26-ddtree.service' } as ServerProfile;
      let signal: AbortSignal | undefined;
      let timeoutMs: number | undefined;
      const waitForStub = (_server: ServerProfile, options: { timeoutMs: number; signal?: AbortSignal }) => {
        signal = options.signal;
        timeoutMs = options.timeoutMs;
        return new Promise<WaitResult>((resolve) =>
          options.signal?.addEventListener('abort', () =>
            resolve({ kind: 'cancelled', snapshot: snapshotOf(profile) }),
          ),
        );
      };
      const tool = languageModelTools(
        stubHost({ waitFor: waitForStub as Fleet['waitFor'], snapshot: () => snapshotOf(profile) }, profile),
        settingsWith(profile),
      ).kimi_wait;
      const source = new vscode.CancellationTokenSource();
      await assert.rejects(
        tool.invoke({ input: { timeoutSeconds: 1000 }, toolInvocationToken: undefined }, source.token),
        /timeoutSeconds must be at most 300: call kimi_wait again/,
      );
      const pending = tool.invoke({ input: { timeoutSeconds: 300 }, toolInvocationToken: undefined }, source.token);
      await waitUntil('the fleet wait started', () => signal, 5_000);
      assert.equal(timeoutMs, 300_000, 'timeoutSeconds up to 300');
      source.cancel();
      const result = await pending;
      assert.equal(signal!.aborted, true);
      const text = (result.content[0] as vscode.LanguageModelTextPart).value;
      assert.match(text, /\nThe wait was cancelled after .*; the load goes on/);
      source.dispose();
    }),
  );

  suite.addTest(
    new Mocha.Test('kimi_restart restarts once; a second call during the load watches it instead', async () => {
      // A slow, cold load: 8 MiB at 1 MB/s, so the waits below see it under way.
      await host.configureSimulator({ coldFiles: 'all', readMBps: 1 });
      restartsBefore = await restarts();
      const first = await invoke('kimi_restart', {});
      // It returns once the host has the restart (as over MCP).
      assert.equal(first.json.action, 'restarted', first.text);
      assert.equal(first.json.server, SERVER);
      assert.match(first.text, /\nRestart of .* issued.*\. Call kimi_wait now/);
      assert.ok((await restarts()) > restartsBefore, 'the host had the restart when the tool returned');
      const second = await invoke('kimi_restart', {});
      assert.equal(second.json.action, 'attached', second.text);
      assert.match(second.text, /\nNot restarted: /);
      await waitUntil(
        'the restart reached the host',
        async () => ((await restarts()) > restartsBefore ? true : undefined),
        20_000,
      );
      assert.equal(await restarts(), restartsBefore + 1, 'exactly one restart');
    }),
  );

  suite.addTest(
    new Mocha.Test('kimi_wait with a short timeout during the load: timeout, "call kimi_wait again"', async () => {
      const { text, json } = await invoke('kimi_wait', { timeoutSeconds: 1 });
      assert.equal(json.result, 'timeout', text);
      assert.match(text, /call kimi_wait again \(the load goes on; do not restart\)/);
      assert.ok(
        ['stopping', 'restarting', 'loading', 'warming up', 'stalled'].includes(json.report.state),
        json.report.state,
      );
    }),
  );

  suite.addTest(
    new Mocha.Test('a cancelled kimi_wait returns at once; the load goes on', async () => {
      const source = new vscode.CancellationTokenSource();
      const started = Date.now();
      const pending = invoke('kimi_wait', { timeoutSeconds: 120 }, source.token);
      setTimeout(() => source.cancel(), 300);
      await assert.rejects(pending, (error: Error) => {
        assert.match(`${error.name} ${error.message}`, /Cancel/);
        return true;
      });
      const elapsed = Date.now() - started;
      assert.ok(elapsed < 5000, `returned after ${elapsed} ms`);
      source.dispose();
      const { json } = await invoke('kimi_status', {});
      assert.ok(
        ['stopping', 'restarting', 'loading', 'warming up', 'stalled', 'ready'].includes(json.servers[0].state),
        json.servers[0].state,
      );
    }),
  );

  suite.addTest(
    new Mocha.Test('kimi_wait returns ready; the host ran exactly one restart', async () => {
      const { text, json } = await invoke('kimi_wait', {});
      assert.equal(json.result, 'ready', text);
      assert.match(text, new RegExp(`^${SERVER}: ready`));
      assert.match(text, new RegExp(`\\n${SERVER} is ready: it answered a real completion`));
      assert.equal(json.report.state, 'ready');
      assert.equal(await restarts(), restartsBefore + 1, 'exactly one restart');
      const status = await invoke('kimi_status', { server: SERVER });
      assert.equal(status.json.servers[0].state, 'ready');
      assert.match(status.text, new RegExp(`^${SERVER}: ready`));
      await waitUntil(
        'the status bar follows',
        () => (api.statusText().includes('Kimi: ready') ? true : undefined),
        10_000,
      );
    }),
  );

  suite.addTest(
    new Mocha.Test('kimi_logs returns the journal lines and the extension log about the server', async () => {
      const { text, json } = await invoke('kimi_logs', { lines: 20 });
      assert.equal(json.server, SERVER);
      assert.equal(json.journalError, null);
      assert.ok(json.journal.length > 0 && json.journal.length <= 20, `${json.journal.length} journal lines`);
      assert.ok(json.log.length > 0, 'extension log lines');
      assert.match(text, new RegExp(`^Journal of ${host.unitName}\\.service on ${SERVER}`));
      assert.ok(text.includes(json.journal[json.journal.length - 1]), 'the text has the journal lines');
      const all = await invoke('kimi_logs', { lines: 1000 });
      assert.ok(
        all.json.journal.some((l: string) => l.includes('fired up')),
        'the ready line is in the journal',
      );
      assert.ok(
        all.json.log.some((l: string) => l.includes(`[${SERVER}] Restarting`)),
        'the restart is in the extension log',
      );
    }),
  );

  suite.addTest(
    new Mocha.Test('kimi_verify_parsers returns the summary and the table of checks', async () => {
      const { text, json } = await invoke('kimi_verify_parsers', {});
      assert.equal(json.server, SERVER);
      assert.equal(typeof json.summary, 'string');
      assert.match(json.table, /^check\s+result\s+evidence/);
      assert.ok(text.startsWith(`${SERVER}: ${json.summary}`), text);
      const status = await invoke('kimi_status', {});
      assert.equal(status.json.servers[0].parsers, json.summary, 'kimi_status reports the last verification');
    }),
  );
}
