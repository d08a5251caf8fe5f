// An unknown host key under `ask`: the modal shows the SHA256 fingerprint; Trust appends the
// key to the known-hosts file and the restart goes on to ready.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { answerDialogs, isHostKeyDialog, isRestartConfirm, printResultsDir, simForLoad, useScenario } from './scenario';
import { formatStatusHistory, resetRecorders, runCommand, screenshot, statusHistory, waitForStatus } from './workbench';

after(printResultsDir);

describe('e2e: unknown host key under "ask"', function () {
  const scenario = useScenario({
    name: 'host-key',
    gpuHost: { sim: simForLoad(8) },
    hostKeyPolicy: 'ask',
    knownHost: false,
  });

  it('the trust dialog shows the SHA256 fingerprint; Trust continues to ready', async () => {
    const page = scenario().page;
    const host = scenario().host;
    assert.equal(readFileSync(scenario().knownHostsFile, 'utf8'), '', 'the key is unknown at the start');
    await resetRecorders(page);
    // The extension may ask about the key as soon as it activates (it looks at the unit's
    // state), or only when the restart connects: answer the dialogs in whatever order.
    let commandRun = false;
    const t0 = Date.now();
    const dialogs = await answerDialogs(
      page,
      [
        { name: 'hostkey', when: isHostKeyDialog, press: 'Trust' },
        { name: 'restart', when: isRestartConfirm, press: 'Restart' },
      ],
      async () => {
        if (!commandRun && Date.now() - t0 > 3000 && !(await page.locator('.monaco-dialog-box').isVisible())) {
          commandRun = true;
          await runCommand(page, 'Restart Kimi service');
        }
        const hist = await statusHistory(page);
        return (
          hist.some((h) => /Kimi: (loading|warming up|ready)/.test(h.text)) &&
          hist.length > 0 &&
          /Kimi: ready/.test(hist[hist.length - 1].text)
        );
      },
      { timeoutMs: 180_000, shotPrefix: 'hostkey' },
    );
    await screenshot(page, 'hostkey-ready');
    console.log(`    dialogs: ${JSON.stringify(dialogs, null, 1)}`);
    console.log(`    status bar texts:\n${formatStatusHistory(await statusHistory(page))}`);

    const keyDialogs = dialogs.filter(isHostKeyDialog);
    assert.equal(keyDialogs.length, 1, 'asked exactly once');
    const text = `${keyDialogs[0].message}\n${keyDialogs[0].detail}`;
    assert.ok(text.includes(host.hostKeyFingerprint), `the dialog shows ${host.hostKeyFingerprint}: ${text}`);
    assert.ok(dialogs.some(isRestartConfirm), 'the restart was confirmed');

    // Trust wrote the key to kimiService.knownHostsFile (plain or hashed entry, same key).
    const known = readFileSync(scenario().knownHostsFile, 'utf8');
    const key = host.hostPublicKey.split(/\s+/)[1];
    assert.ok(known.includes(key), `known-hosts file has the key:\n${known}`);
    await waitForStatus(page, /Kimi: ready/, { timeoutMs: 5000 });
  });
});
