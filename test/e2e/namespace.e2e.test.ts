// Kimi Service beside Moonshot's Kimi Code (a stand-in with its contributions, test/e2e/fixture/
// kimi-code-standin): both work, nothing of one shows up under the other's name, and this
// extension's old kimi.* user settings are carried over to kimiService.* once, the old values
// left in the settings file.
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { waitFor } from '../util/waitFor';
import { FixtureExtension } from './fixtureExtension';
import { simForLoad, useScenario } from './scenario';
import {
  outputChannelShown,
  paletteRows,
  runCommand,
  screenshot,
  waitForNotification,
  waitForStatus,
} from './workbench';

/** The Kimi Code stand-in: an extension that owned the `kimi.*` settings before, reporting what it sees. */
const standIn = new FixtureExtension('kimi-code-standin', 'the Kimi Code stand-in');

/** Waits for the stand-in's report of one command (it writes one file per command run). */
async function standInReport(name: string, timeoutMs = 30_000): Promise<{ settings: Record<string, unknown> }> {
  const file = join(standIn.reportDir, `${name}.json`);
  await waitFor(() => existsSync(file), { timeoutMs, intervalMs: 100, message: `the stand-in's report for ${name}` });
  return JSON.parse(readFileSync(file, 'utf8')) as { settings: Record<string, unknown> };
}

const OUR_TITLES = ['Restart Kimi service', 'Show log', 'Select server', 'Add server', 'Verify tool calling'];
const STANDIN_TITLES = ['Focus Input', 'New Conversation', 'Show Logs', 'Login'];

describe('e2e: beside Kimi Code, under a namespace of its own', function () {
  const scenario = useScenario({
    name: 'namespace',
    gpuHost: { sim: simForLoad(4) },
    settings: {
      // This extension's settings as they were before the rename, and Kimi Code's own.
      'kimi.stallSeconds': 77,
      'kimi.servers': [{ name: 'old', host: '127.0.0.1', port: 9, unit: 'old-unit' }],
      'kimi.yoloMode': true,
    },
    extraVsix: () => [standIn.packageVsix()],
    env: () => ({ KIMI_STANDIN_REPORT_DIR: standIn.reportDir }),
  });

  after(() => standIn.remove());

  it("the old kimi.* settings are copied once, the old values stay, Kimi Code's are not touched", async () => {
    const { page, cs } = scenario();
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    const notice = await waitForNotification(page, /your settings moved to "kimiService\.\*" \(1 copied/, {
      timeoutMs: 30_000,
    });
    console.log(`    notice: ${notice.text}`);
    const file = join(cs.userDataDir, 'User', 'settings.json');
    // The copy reaches the file a moment after the notice.
    const settings = await waitFor(
      () => {
        const read = parseJsonc(readFileSync(file, 'utf8')) as Record<string, unknown>;
        return read['kimiService.stallSeconds'] !== undefined ? read : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'kimiService.stallSeconds in the user settings file' },
    ).catch(() => parseJsonc(readFileSync(file, 'utf8')) as Record<string, unknown>);
    assert.equal(settings['kimiService.stallSeconds'], 77, 'kimi.stallSeconds carried over');
    assert.equal(settings['kimi.stallSeconds'], 77, 'the old value stays in the file');
    assert.equal(settings['kimi.yoloMode'], true, "Kimi Code's setting untouched");
    assert.equal(settings['kimiService.yoloMode'], undefined, "Kimi Code's setting is not ours");
    const servers = settings['kimiService.servers'] as { name: string }[];
    assert.deepEqual(
      servers.map((s) => s.name),
      ['sim'],
      'a kimiService value the user has wins over the old one',
    );
    const standIn = await (async () => {
      await runCommand(page, 'Kimi Code: Show Logs');
      return standInReport('showLogs');
    })();
    assert.equal(standIn.settings.yoloMode, true, 'Kimi Code still reads its kimi.yoloMode');
  });

  it("each extension's commands are under its own name, and both work", async () => {
    const { page } = scenario();
    for (const title of OUR_TITLES) {
      const rows = await paletteRows(page, `Kimi Service: ${title}`, {
        until: (r) => r.startsWith(`Kimi Service: ${title}`),
      });
      assert.ok(
        rows.some((r) => r.startsWith(`Kimi Service: ${title}`)),
        `${title}: ${JSON.stringify(rows)}`,
      );
    }
    const ours = await paletteRows(page, 'Kimi Service:', { until: (r) => r.startsWith('Kimi Service: Show log') });
    for (const row of ours) {
      assert.ok(row.startsWith('Kimi Service:'), `a row under "Kimi Service:" that is not ours: ${row}`);
      assert.ok(!STANDIN_TITLES.some((t) => row.includes(`: ${t}`)), `Kimi Code's command under our name: ${row}`);
    }
    for (const title of STANDIN_TITLES) {
      const rows = await paletteRows(page, `Kimi Code: ${title}`, {
        until: (r) => r.startsWith(`Kimi Code: ${title}`),
      });
      assert.ok(
        rows.some((r) => r.startsWith(`Kimi Code: ${title}`)),
        `${title}: ${JSON.stringify(rows)}`,
      );
    }
    const theirs = await paletteRows(page, 'Kimi Code:', { until: (r) => r.startsWith('Kimi Code: ') });
    for (const row of theirs) assert.ok(!row.startsWith('Kimi Service:'), `ours under Kimi Code's name: ${row}`);

    await runCommand(page, 'Kimi Service: Show log');
    await waitFor(async () => (await outputChannelShown(page)) === 'Kimi Service', {
      timeoutMs: 15_000,
      intervalMs: 200,
      message: 'the Kimi Service output channel shown',
    }).catch(() => undefined);
    assert.equal(await outputChannelShown(page), 'Kimi Service');

    // Kimi Code's keybinding reaches Kimi Code (this extension binds no key).
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 12 } });
    await page.keyboard.press('Control+Shift+K');
    await standInReport('focusInput');
    await waitForNotification(page, /Kimi Code stand-in: input focused/);
  });

  it('two side bars, each with its own title', async () => {
    const { page } = scenario();
    const labels = await page
      .locator('.part.activitybar .action-item .action-label, .part.activitybar .action-item a')
      .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    await screenshot(page, 'namespace-activitybar');
    assert.ok(
      labels.some((l) => l.startsWith('Kimi Service')),
      `no "Kimi Service" in the activity bar: ${JSON.stringify(labels)}`,
    );
    assert.ok(
      labels.some((l) => l.startsWith('Kimi Code')),
      `no "Kimi Code" in the activity bar: ${JSON.stringify(labels)}`,
    );
  });
});
