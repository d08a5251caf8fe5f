// The restart rule in VS Code (docs/restart-rule.md): "Restart Kimi service" while a load is
// under way offers "Follow this load" and "Restart anyway"; following restarts nothing and the
// load goes on to ready (one systemctl restart on the host).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { DROP_IN_NAME } from '../../src/target/systemd/parserDropIn';
import { waitFor } from '../util/waitFor';
import { isRestartConfirm, printResultsDir, simForLoad, useScenario } from './scenario';
import { clickDialogButton, resetRecorders, runCommand, screenshot, waitForDialog, waitForStatus } from './workbench';

/** Waits for the QuickPick titled `title`, filters it to `label` and picks that row. */
async function pickQuickItem(page: Page, title: RegExp, label: string): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'visible', timeout: 30_000 });
  await widget.locator('.quick-input-box input').fill(label);
  const firstRow = widget.locator('.quick-input-list .monaco-list-row .label-name').first();
  await waitFor(
    async () => ((await firstRow.isVisible()) && (await firstRow.innerText()).trim() === label) || undefined,
    {
      timeoutMs: 30_000,
      intervalMs: 100,
      message: `the row "${label}" first in "${title.source}"`,
    },
  );
  await widget.locator('.quick-input-box input').press('Enter');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'hidden', timeout: 10_000 });
}

after(printResultsDir);

describe('e2e: the restart rule — a restart during a load follows it', function () {
  const LOAD_SECONDS = 60;
  const scenario = useScenario({
    name: 'restart-rule',
    gpuHost: { sim: simForLoad(LOAD_SECONDS) },
    hostKeyPolicy: 'strict',
  });

  it('Restart during "loading NN%": Follow this load / Restart anyway; Follow -> the same load to ready, one systemctl restart', async () => {
    const { page, host } = scenario();
    const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    await resetRecorders(page);
    const before = await restarts();
    await runCommand(page, 'Restart Kimi service');
    const confirm = await waitForDialog(page);
    assert.ok(isRestartConfirm(confirm), `confirmation dialog: ${JSON.stringify(confirm)}`);
    await clickDialogButton(page, 'Restart');
    await waitForStatus(page, /^Kimi: loading [1-9]\d*%/, { timeoutMs: 90_000, failOn: /failed|unreachable|ready/ });

    await runCommand(page, 'Restart Kimi service');
    const choice = await waitForDialog(page);
    await screenshot(page, 'restart-rule-follow-or-restart');
    console.log(`    dialog: ${JSON.stringify(choice)}`);
    assert.match(choice.message, /is loading already/);
    assert.deepEqual(
      ['Follow this load', 'Restart anyway'].filter((b) => choice.buttons.includes(b)),
      ['Follow this load', 'Restart anyway'],
      `buttons: ${JSON.stringify(choice.buttons)}`,
    );
    assert.match(choice.detail, /already loading/);
    await clickDialogButton(page, 'Follow this load');

    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000, failOn: /failed|unreachable|not watched/ });
    assert.equal((await restarts()) - before, 1, (await host.execLog()).slice(-30).join('\n'));
  });

  // One door (docs/restart-rule.md): the parser action restarts through the rule as the palette
  // does, never refusing at once during a load ("is loading ... Nothing was restarted").
  it('Enable parsers during a load: the diff, then Follow this load / Restart anyway; Restart anyway -> the new flags load to ready', async () => {
    const { page, host } = scenario();
    const restarts = async () => (await host.execLog()).filter((l) => /systemctl.* restart /.test(l)).length;
    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000 });
    const before = await restarts();
    await runCommand(page, 'Restart Kimi service');
    assert.ok(isRestartConfirm(await waitForDialog(page)));
    await clickDialogButton(page, 'Restart');
    await waitForStatus(page, /^Kimi: loading [1-9]\d*%/, { timeoutMs: 90_000, failOn: /failed|unreachable/ });

    await runCommand(page, 'Enable tool calling and thinking parsers');
    await pickQuickItem(page, /reasoning parser/, 'kimi_k2');
    await pickQuickItem(page, /tool call parser/, 'kimi_k2');
    const diff = await waitForDialog(page, { text: /--reasoning-parser kimi_k2/ });
    assert.match(diff.message, /Change the command line of .* and restart it\?/);
    await clickDialogButton(page, 'Apply and restart');

    const choice = await waitForDialog(page, { text: /is loading already/ });
    await screenshot(page, 'restart-rule-parsers-follow-or-restart');
    assert.deepEqual(
      ['Follow this load', 'Restart anyway'].filter((b) => choice.buttons.includes(b)),
      ['Follow this load', 'Restart anyway'],
      `buttons: ${JSON.stringify(choice.buttons)}`,
    );
    await clickDialogButton(page, 'Restart anyway');

    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 180_000, failOn: /failed|unreachable|not watched/ });
    assert.equal((await restarts()) - before, 2, (await host.execLog()).slice(-30).join('\n'));
    assert.match((await host.readDropIns())[DROP_IN_NAME] ?? '', /--reasoning-parser kimi_k2/);
  });
});
