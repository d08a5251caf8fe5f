// A repository's .vscode/settings.json names the user's server `sim` but points it at another
// sshd, with `accept-new`, another known-hosts file and no restart confirmation. The extension
// reads those settings from the user's settings only: "Restart Kimi service" asks as the user's
// settings say and restarts the user's server; nothing connects to the other sshd; a warning
// names the ignored settings and the file they came from.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { serverEntry } from '../integration/simHost';
import { answerDialogs, isRestartConfirm, printResultsDir, simForLoad, useScenario } from './scenario';
import {
  formatStatusHistory,
  notificationHistory,
  resetRecorders,
  runCommand,
  screenshot,
  statusHistory,
  waitForStatus,
} from './workbench';

after(printResultsDir);

/** sshd's lines that say a new client came (VERBOSE logs each TCP connection) or tried a login. */
const clientLines = (lines: readonly string[]) =>
  lines.filter((l) => /Connection from|Accepted |Failed |Invalid user/.test(l));

describe("e2e: a workspace cannot redirect the user's server", function () {
  let other: GpuHost | undefined;
  let otherLinesAtStart = 0;
  before(async () => {
    other = await startGpuHost({ sim: simForLoad(2) });
    otherLinesAtStart = other.sshdLog().length;
  });
  after(async () => {
    await other?.stop();
  });
  const otherHost = () => {
    if (!other) throw new Error('the second host did not start');
    return other;
  };

  const scenario = useScenario({
    name: 'security',
    gpuHost: { sim: simForLoad(4) },
    workspaceSettings: () => ({
      'kimiService.servers': [serverEntry(otherHost(), 'sim')],
      'kimiService.hostKeyPolicy': 'accept-new',
      'kimiService.knownHostsFile': join(otherHost().stateDir, 'workspace_known_hosts'),
      'kimiService.confirmRestart': false,
      'kimiService.activeServer': 'sim',
    }),
  });

  it("restart from the palette restarts the user's server; no connection reaches the other sshd; the notice names the file", async () => {
    const { page, host, cs } = scenario();
    const restarts = async () => (await host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length;
    const before = await restarts();
    // The warning comes as the extension activates, before any command.
    await page.waitForFunction(
      () =>
        (window as unknown as { __kimiRec: { notes: { text: string }[] } }).__kimiRec.notes.some((n) =>
          n.text.includes('ignored kimiService.'),
        ),
      undefined,
      { timeout: 120_000, polling: 200 },
    );
    const notes = await notificationHistory(page);
    await screenshot(page, 'security-notice');
    await resetRecorders(page);
    let commandRun = false;
    const dialogs = await answerDialogs(
      page,
      [{ name: 'restart', when: isRestartConfirm, press: 'Restart' }],
      async () => {
        if (!commandRun) {
          commandRun = true;
          await runCommand(page, 'Restart Kimi service');
        }
        const hist = await statusHistory(page);
        return (
          hist.some((h) => /Kimi: (loading|warming up|ready)/.test(h.text)) &&
          hist.length > 0 &&
          /Kimi: ready/.test(hist[hist.length - 1]!.text)
        );
      },
      { timeoutMs: 180_000, shotPrefix: 'security' },
    );
    await screenshot(page, 'security-ready');
    console.log(`    status bar texts:\n${formatStatusHistory(await statusHistory(page))}`);
    await waitForStatus(page, /Kimi: ready/, { timeoutMs: 5000 });

    // The user's confirmRestart (true) held against the workspace's false.
    assert.equal(dialogs.filter(isRestartConfirm).length, 1, `asked once: ${JSON.stringify(dialogs)}`);
    assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-20).join('\n'));

    const seen = clientLines(otherHost().sshdLog().slice(otherLinesAtStart));
    assert.deepEqual(seen, [], `the workspace's sshd saw a client:\n${seen.join('\n')}`);
    assert.equal(otherHost().handshakes(), 0, "no login on the workspace's sshd");

    // The warning (said once, with the file) and the log lines, one per setting.
    const settingsFile = join(cs.folder, '.vscode', 'settings.json');
    const warnings = notes.filter((n) => /ignored kimiService\./.test(n.text));
    assert.equal(warnings.length, 1, `the notice was shown once: ${JSON.stringify(notes, null, 1)}`);
    assert.equal(warnings[0]!.severity, 'warning', JSON.stringify(warnings[0]));
    const warning = warnings[0]!.text;
    for (const key of ['servers', 'hostKeyPolicy', 'knownHostsFile', 'confirmRestart'])
      assert.ok(warning.includes(`kimiService.${key}`), `the notice names kimiService.${key}: ${warning}`);
    assert.ok(!warning.includes('kimiService.activeServer'), `activeServer may come from a workspace: ${warning}`);
    assert.ok(warning.includes(settingsFile), `the notice names ${settingsFile}: ${warning}`);
    const log = cs
      .findLogFiles(/Kimi Service\.log$/)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    // Each warning comes with its log lines: one line per setting after the restart read the settings again = said once.
    for (const key of ['servers', 'hostKeyPolicy', 'knownHostsFile', 'confirmRestart'])
      assert.equal(
        log.split('\n').filter((l) => l.includes(`ignored kimiService.${key} from ${settingsFile}`)).length,
        1,
        `one log line for kimiService.${key}:\n${log
          .split('\n')
          .filter((l) => l.includes('ignored'))
          .join('\n')}`,
      );
  });
});

describe("e2e: Restricted Mode watches the user's server and refuses to restart it", function () {
  const scenario = useScenario({ name: 'restricted', gpuHost: { sim: simForLoad(2) }, restrictedMode: true });

  it('restart says it needs a trusted workspace and touches nothing; polling reaches ready', async () => {
    const { page, host } = scenario();
    await page.locator('.part.statusbar').getByText('Restricted Mode').first().waitFor({ timeout: 60_000 });
    const started = await host.ssh(`systemctl start ${host.unit}`);
    assert.equal(started.code, 0, started.stderr);
    const restarts = async () => (await host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length;
    const before = await restarts();
    await resetRecorders(page);

    await runCommand(page, 'Restart Kimi service');
    await page.waitForFunction(
      () =>
        (window as unknown as { __kimiRec: { notes: { text: string }[] } }).__kimiRec.notes.some((n) =>
          n.text.includes('needs a trusted workspace'),
        ),
      undefined,
      { timeout: 60_000, polling: 200 },
    );
    await screenshot(page, 'restricted-refusal');
    const refusal = (await notificationHistory(page)).find((n) => n.text.includes('needs a trusted workspace'))!;
    assert.match(refusal.text, /Restarting a server needs a trusted workspace.*Restricted Mode/);
    assert.deepEqual(refusal.buttons, ['Manage Workspace Trust']);
    assert.equal(await page.locator('.monaco-dialog-box').isVisible(), false, 'no restart confirmation');

    await runCommand(page, 'Watch Kimi service until ready');
    await waitForStatus(page, /Kimi: ready/, { timeoutMs: 120_000 });
    console.log(`    status bar texts:\n${formatStatusHistory(await statusHistory(page))}`);
    assert.equal(await restarts(), before, (await host.execLog()).slice(-20).join('\n'));
  });
});
