// A crash mid-load: the simulator dies after 5 shards -> the status bar says "failed" and an
// error notification gives the cause, with Show log.
import assert from 'node:assert/strict';
import { restartFromPalette, printResultsDir, simForLoad, useScenario } from './scenario';
import {
  formatStatusHistory,
  loadingPercentages,
  screenshot,
  statusText,
  waitForNotification,
  waitForStatus,
} from './workbench';

after(printResultsDir);

describe('e2e: crash mid-load', function () {
  const scenario = useScenario({
    name: 'crash',
    gpuHost: { sim: { ...simForLoad(15), fault: { crashAt: 'weights', afterShards: 5 } } },
    hostKeyPolicy: 'strict',
  });

  it('loading NN% -> failed, and an error notification with the cause', async () => {
    const page = scenario().page;
    await restartFromPalette(page);

    await waitForStatus(page, /Kimi: loading \d+%/, { timeoutMs: 60_000, failOn: /unreachable|ready/ });
    await screenshot(page, 'crash-loading');
    const hist = await waitForStatus(page, /Kimi: failed/, { timeoutMs: 120_000, failOn: /ready|unreachable/ });
    console.log(`    status bar texts:\n${formatStatusHistory(hist)}`);
    const pcts = loadingPercentages(hist);
    assert.ok(pcts.length >= 1, 'a percentage was shown before the crash');
    assert.ok(Math.max(...pcts) < 100, `the load never completed: ${pcts}`);

    const note = await waitForNotification(page, /failed/, { timeoutMs: 30_000, severity: 'error' });
    await screenshot(page, 'crash-failed');
    console.log(`    error notification: ${JSON.stringify(note)}`);
    // The cause: exit status and/or the journal's last error line.
    assert.match(note.text, /status|exit|SafetensorError|Error/i, 'the notification gives the cause');
    assert.ok(note.buttons.includes('Show log'), `buttons: ${note.buttons}`);

    // The state stays failed (no silent "loading" afterwards).
    await page.waitForTimeout(3000);
    assert.equal(await statusText(page), 'Kimi: failed');
  });
});
