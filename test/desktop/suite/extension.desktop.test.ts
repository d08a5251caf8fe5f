import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { startGpuHost, type GpuHost } from '../../gpu-host/harness';
import { serverEntry } from '../../gpu-host/serverEntry';
import type { KimiApi } from '../../../src/extension';
import { waitFor } from '../../util/waitFor';

const EXTENSION_ID = 'kimi-tools.kimi-service';

/** Polls `probe` until it gives a value (the shared helper, with this suite's long default). */
function waitUntil<T>(what: string, probe: () => T | undefined, timeoutMs = 90_000): Promise<NonNullable<T>> {
  return waitFor(probe, { timeoutMs, intervalMs: 200, message: what });
}

/** The extension in the real extension host, against the simulated GPU host over real SSH. */
export function registerExtensionTests(root: Mocha.Suite): void {
  const suite = Mocha.Suite.create(root, 'Kimi Service in the extension host');
  let host: GpuHost;
  let api: KimiApi;
  let tmp: string;

  suite.beforeAll(async () => {
    host = await startGpuHost({ shards: 8, shardBytes: 1024 * 1024 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-desktop-kh-'));
    const knownHosts = path.join(tmp, 'known_hosts');
    fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
    const config = vscode.workspace.getConfiguration('kimiService');
    await config.update('knownHostsFile', knownHosts, vscode.ConfigurationTarget.Global);
    await config.update('hostKeyPolicy', 'strict', vscode.ConfigurationTarget.Global);
    await config.update('confirmRestart', false, vscode.ConfigurationTarget.Global);
    await config.update('pollIntervalSeconds', 0.5, vscode.ConfigurationTarget.Global);
    await config.update('servers', [serverEntry(host)], vscode.ConfigurationTarget.Global);
    const extension = vscode.extensions.getExtension<KimiApi>(EXTENSION_ID);
    assert.ok(extension, 'the extension is installed');
    api = await extension.activate();
  });

  suite.afterAll(async () => {
    await host?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  suite.addTest(
    new Mocha.Test('contributes every command of the contract', async () => {
      const commands = await vscode.commands.getCommands(true);
      for (const id of [
        'kimiService.restartService',
        'kimiService.watchService',
        'kimiService.stopWatching',
        'kimiService.showLog',
        'kimiService.selectServer',
        'kimiService.enableParsers',
        'kimiService.verifyParsers',
        'kimiService.suggestFasterLoad',
        'kimiService.showDashboard',
      ]) {
        assert.ok(commands.includes(id), `${id} is registered`);
      }
    }),
  );

  suite.addTest(
    new Mocha.Test('Restart Kimi service restarts the unit and reaches ready', async () => {
      void vscode.commands.executeCommand('kimiService.restartService');
      const seen = new Set<string>();
      await waitUntil('ready', () => {
        const text = api.statusText();
        seen.add(text.replace(/\$\([^)]*\)\s*/, '').replace(/ \d+%.*$/, ''));
        return text.includes('Kimi: ready') ? true : undefined;
      });
      assert.ok(seen.has('Kimi: loading'), `status texts: ${[...seen].join(', ')}`);
    }),
  );

  suite.addTest(
    new Mocha.Test('an invalid setting is reported by name and nothing is restarted', async () => {
      const restarts = async () => (await host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length;
      const before = await restarts();
      await vscode.workspace
        .getConfiguration('kimiService')
        .update('hostKeyPolicy', 'never', vscode.ConfigurationTarget.Global);
      await waitUntil(
        'settings error in the status bar',
        () => (api.statusText().includes('settings') ? true : undefined),
        10_000,
      );
      // The command refuses on the invalid settings before it opens any session: once it has
      // returned, a restart could only be on the host already.
      await vscode.commands.executeCommand('kimiService.restartService');
      assert.equal(await restarts(), before);
      await vscode.workspace
        .getConfiguration('kimiService')
        .update('hostKeyPolicy', 'strict', vscode.ConfigurationTarget.Global);
    }),
  );

  suite.addTest(
    new Mocha.Test(
      'after ready the server stays watched; a changed setting moves the watch to a new session without a restart',
      async () => {
        await vscode.commands.executeCommand('kimiService.watchService');
        await waitUntil('ready', () => (api.statusText().includes('Kimi: ready') ? true : undefined));
        const restarts = async () => (await host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length;
        const before = await restarts();
        const shows = async () => (await host.execLog()).filter((l) => /systemctl\b.*\bshow\b/.test(l)).length;
        const showsBefore = await shows();
        await vscode.workspace
          .getConfiguration('kimiService')
          .update('healthIntervalSeconds', 5, vscode.ConfigurationTarget.Global);
        // The new session watches again (systemctl show runs), quietly, and finds the server ready.
        await waitUntil(
          'a new session looked at the unit',
          async () => ((await shows()) > showsBefore ? true : undefined),
          30_000,
        );
        await waitUntil('ready again', () => (api.statusText().includes('Kimi: ready') ? true : undefined), 30_000);
        assert.equal(await restarts(), before, 'nothing was restarted');
      },
    ),
  );

  suite.addTest(
    new Mocha.Test('Stop watching: the item says not watched, with no spinner', async () => {
      await vscode.commands.executeCommand('kimiService.stopWatching');
      await waitUntil('not watched', () => (api.statusText().includes('Kimi: not watched') ? true : undefined), 10_000);
      assert.doesNotMatch(api.statusText(), /~spin/);
    }),
  );

  suite.addTest(
    new Mocha.Test('the next command uses the new settings: a changed unit name is the one asked about', async () => {
      const config = vscode.workspace.getConfiguration('kimiService');
      const servers = config.get<Record<string, unknown>[]>('servers')!;
      // The command comes after the extension has seen the change (its listener was registered at
      // activation, before this one), not merely after the settings file was written.
      let delivered = false;
      const sub = vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('kimiService.servers')) delivered = true;
      });
      await config.update(
        'servers',
        [{ ...servers[0], unit: 'kimi-not-installed' }],
        vscode.ConfigurationTarget.Global,
      );
      await waitUntil('the settings change delivered', () => (delivered ? true : undefined), 30_000).finally(() =>
        sub.dispose(),
      );
      try {
        await vscode.commands.executeCommand('kimiService.watchService');
        await waitUntil(
          'failed: unit not known',
          () => (api.statusText().includes('Kimi: failed') ? true : undefined),
          30_000,
        );
        const log = await host.execLog();
        assert.ok(
          log.some((l) => l.includes('kimi-not-installed')),
          'systemctl was asked about the new unit',
        );
      } finally {
        await config.update('servers', servers, vscode.ConfigurationTarget.Global);
        await vscode.commands.executeCommand('kimiService.stopWatching');
      }
    }),
  );
}
