// The servers view in code-server: two configured servers in different states, the
// active one restarted to ready (parsers verified) and another whose unit does not exist on the
// host (failed, watched in the background without being asked), each a row with its state
// word; the status bar counts the other server that is not ready.
import assert from 'node:assert/strict';
import { printResultsDir, unitWithParsers, useScenario } from './scenario';
import { runCommand, screenshot, statusTooltip, waitForNotification, waitForRows, waitForStatus } from './workbench';
import { serverEntry } from '../integration/simHost';
import type { Page } from 'playwright-core';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

after(printResultsDir);

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** Waits for the quick input titled `title`, types `text` and presses Enter. */
async function answerQuickInput(page: Page, title: RegExp, text: string): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'visible', timeout: 30_000 });
  const input = widget.locator('.quick-input-box input');
  await input.fill(text);
  await page.waitForTimeout(300);
  await input.press('Enter');
}

/**
 * Right-clicks the row whose name is `name` and chooses `item` in its context menu; waits for the
 * menu to close. A menu still open 5 s after the click did not receive it (a click that lands while
 * the menu is still laid out on a busy machine): clicked once more, so that what the test then
 * asserts is the command's effect, not the harness's timing.
 */
async function chooseFromRowMenu(page: Page, name: string, item: string, screenshotName: string): Promise<void> {
  await page
    .locator('.part.sidebar .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${name}$`) }) })
    .click({ button: 'right' });
  const action = page.locator('.context-view .action-item', { hasText: item });
  await action.waitFor({ state: 'visible', timeout: 10_000 });
  await screenshot(page, screenshotName);
  for (let attempt = 1; ; attempt++) {
    await action.click();
    try {
      await action.waitFor({ state: 'hidden', timeout: 5_000 });
      return;
    } catch {
      if (attempt === 2) throw new Error(`the context menu of ${name} stayed open after 2 clicks on "${item}"`);
    }
  }
}

describe('e2e: the servers view', function () {
  const scenario = useScenario({
    name: 'servers-view',
    gpuHost: { shards: 4, shardBytes: 1024 * 1024, sim: { readMBps: 20, warmReadMBps: 20, warmupSeconds: 0.3 } },
    unitText: unitWithParsers,
    hostKeyPolicy: 'strict',
    knownHost: true,
    // A HOME of its own whose ~/.ssh/config names the host: "Add server" offers that alias.
    env: (host, tmp) => {
      const home = join(tmp, 'home');
      mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
      writeFileSync(
        join(home, '.ssh', 'config'),
        `Host gpu-sim\n  HostName ${host.sshHost}\n  Port ${host.sshPort}\n  User ${host.username}\n  IdentityFile ${host.clientKeyPath}\n  IdentitiesOnly yes\n`,
        { mode: 0o600 },
      );
      return { HOME: home };
    },
    // The opened folder's settings pin the active server: "Make active" has to change it there.
    workspaceSettings: () => ({ 'kimiService.activeServer': 'sim' }),
    settings: (host) => ({
      // The second server is the same host with a unit it does not have: failed, "not known to systemd".
      'kimiService.servers': [serverEntry(host, 'sim'), { ...serverEntry(host, 'other'), unit: 'sglang-missing' }],
      'kimiService.confirmRestart': false,
      'kimiService.healthIntervalSeconds': 5,
    }),
  });

  it('two servers, two states: a row each with the state word, and "· 1 failed" in the status bar', async () => {
    const s = scenario();
    const page = s.page;
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    await runCommand(page, 'Kimi Service: Focus on Kimi Servers View');
    const before = await waitForRows(page, (rows) => rows.some((r) => /^other\b.*failed/.test(r)), 60_000);
    console.log(`    rows before the restart: ${JSON.stringify(before)}`);
    assert.ok(
      before.some((r) => /^sim \(active\) not watched/.test(r)),
      `the active server is not watched yet: ${JSON.stringify(before)}`,
    );

    await runCommand(page, 'Restart Kimi service');
    await waitForStatus(page, /Kimi: ready · 1 failed/, { timeoutMs: 90_000, failOn: /Kimi: (failed|unreachable)/ });
    await waitForNotification(page, /ready, parsers verified for agents \(\d+ checks\)/, {
      timeoutMs: 60_000,
      severity: 'info',
    });
    const rows = await waitForRows(
      page,
      (r) => r.some((x) => /^sim \(active\) ready · up .* · Parsers verified/.test(x)),
      30_000,
    );
    await screenshot(page, 'servers-view-two-states');
    console.log(`    rows: ${JSON.stringify(rows)}`);
    const other = rows.find((r) => r.startsWith('other '));
    assert.match(other ?? '', /^other failed · the unit is not known to systemd/);
    assert.equal(rows.filter((r) => /^(sim|other)\b/.test(r)).length, 2, 'one row per server');
    const tooltip = await statusTooltip(page);
    assert.match(tooltip, /Other servers not ready:\s*other: failed/);
  });

  it('"Make active" from a row\'s context menu acts on that row\'s server', async () => {
    const page = scenario().page;
    await chooseFromRowMenu(page, 'other', 'Make active', 'servers-view-context-menu');
    await waitForStatus(page, /^Kimi: failed$/, { timeoutMs: 30_000 });
    assert.equal(
      readJson(join(scenario().cs.folder, '.vscode', 'settings.json'))['kimiService.activeServer'],
      'other',
      'written where it is read: the workspace settings that set it',
    );
    const rows = await waitForRows(
      page,
      (r) => r.some((x) => x.startsWith('other (active) failed')) && r.some((x) => /^sim ready/.test(x)),
      15_000,
    );
    console.log(`    rows after "Make active": ${JSON.stringify(rows)}`);
  });

  it('Add server: a ~/.ssh/config host, its SGLang unit, a name; the new row is watched at once', async () => {
    const s = scenario();
    const page = s.page;
    await runCommand(page, 'Kimi Service: Add server');
    await answerQuickInput(page, /add server \(1\/3\)/, 'gpu-sim');
    await answerQuickInput(page, /add server \(2\/3\)/, s.host.unit);
    const widget = page.locator('.quick-input-widget');
    await widget
      .locator('.quick-input-title', { hasText: /add server \(3\/3\)/ })
      .waitFor({ state: 'visible', timeout: 30_000 });
    const proposed = await widget.locator('.quick-input-box input').inputValue();
    assert.equal(proposed, `gpu-sim-${s.host.unitName}`);
    await screenshot(page, 'servers-view-add-server-name');
    await widget.locator('.quick-input-box input').press('Enter');
    const added = await waitForNotification(page, /Kimi: added gpu-sim-/, { timeoutMs: 30_000, severity: 'info' });
    assert.match(added.text, new RegExp(`${s.host.unit} on gpu-sim, ${s.host.serverUrl.replace(/[.]/g, '[.]')}`));
    // code-server's extension host is a remote one: the entry goes to the Remote settings, where it is read.
    assert.match(added.text, /to the Remote settings/);
    const names = (file: string) =>
      (
        (readJson(join(s.cs.userDataDir, file, 'settings.json'))['kimiService.servers'] ?? []) as { name: string }[]
      ).map((e) => e.name);
    assert.ok(names('Machine').includes(proposed), `Remote settings: ${JSON.stringify(names('Machine'))}`);
    assert.ok(!names('User').includes(proposed), 'not in the User settings, which a remote extension host ignores');
    // Same unit as "sim", which is ready: the new server's background watch says so.
    const rows = await waitForRows(page, (r) => r.some((x) => /^gpu-sim-\S+ ready/.test(x)), 60_000);
    await screenshot(page, 'servers-view-added');
    console.log(`    rows after Add server: ${JSON.stringify(rows)}`);
    assert.equal(rows.filter((r) => /^(sim|other|gpu-sim-)/.test(r)).length, 3);
  });

  it("rolling restart from the view's title: the servers of the active server's model preselected, one after the other, done", async () => {
    const s = scenario();
    const page = s.page;
    await chooseFromRowMenu(page, 'sim', 'Make active', 'servers-view-make-sim-active');
    await waitForRows(page, (r) => r.some((x) => x.startsWith('sim (active) ready')), 30_000);
    await waitForStatus(page, /^Kimi: ready · 1 failed$/, { timeoutMs: 30_000 });
    const restartsBefore = (await s.host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length;
    await page
      .locator(
        '.part.sidebar .title-actions .action-label[aria-label="Restart servers one by one"], .part.sidebar .pane-header .action-label[aria-label="Restart servers one by one"]',
      )
      .first()
      .click();
    const widget = page.locator('.quick-input-widget');
    await widget
      .locator('.quick-input-title', { hasText: /restart servers one by one/i })
      .waitFor({ state: 'visible', timeout: 30_000 });
    await page.waitForTimeout(500);
    const checked = await widget.locator('.quick-input-list .monaco-list-row').evaluateAll((els) =>
      els
        .map((el) => ({
          name: el.querySelector<HTMLElement>('.label-name')?.innerText.trim() ?? '',
          checked:
            el.getAttribute('aria-checked') === 'true' ||
            (el.querySelector('input[type=checkbox]') as HTMLInputElement | null)?.checked === true,
        }))
        .filter((row) => row.checked)
        .map((row) => row.name),
    );
    await screenshot(page, 'servers-view-rolling-pick');
    assert.deepEqual(
      checked.sort(),
      [`gpu-sim-${s.host.unitName}`, 'sim'],
      'the servers of the same model are preselected, not "other"',
    );
    await widget.locator('.quick-input-box input').press('Enter');
    const done = await waitForNotification(page, /Rolling restart (done|stopped|cancelled)/, { timeoutMs: 120_000 });
    await screenshot(page, 'servers-view-rolling-done');
    assert.match(
      done.text,
      new RegExp(`Rolling restart done: sim, gpu-sim-${s.host.unitName} restarted, ready and verified`),
    );
    const restarts = (await s.host.execLog()).filter((l) => /systemctl\b.*\brestart\b/.test(l)).length - restartsBefore;
    assert.equal(restarts, 2, 'one restart per server of the roll');
  });
});
