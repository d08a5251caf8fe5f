// Checks the e2e harness itself (code-server, Chromium, every selector of workbench.ts)
// against test/e2e/fixture: a stand-in extension that shows the user-facing contract
// with fake timings. Needs neither the real extension nor the simulated GPU host.
//   npx mocha --require tsx/cjs --timeout 300000 --exit test/e2e/selftest/harness.selftest.ts
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, startCodeServer, type CodeServer } from '../codeServer';
import {
  clickDialogButton,
  clickNotificationButton,
  formatStatusHistory,
  loadingPercentages,
  openWorkbench,
  outputChannelShown,
  readOutputPanel,
  resetRecorders,
  resultsDir,
  runCommand,
  screenshot,
  statusText,
  statusTooltip,
  waitForDialog,
  waitForNotification,
  waitForStatus,
  type Workbench,
  STATUS_ITEM_SELECTOR,
  statusBarEntryNames,
} from '../workbench';

describe('e2e harness self-test (fixture extension)', () => {
  let cs: CodeServer;
  let wb: Workbench;
  let tmp: string;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'kimi-fixture-'));
    const vsix = join(tmp, 'fixture.vsix');
    const r = spawnSync(
      join(REPO_ROOT, 'node_modules', '.bin', 'vsce'),
      ['package', '--no-dependencies', '--skip-license', '-o', vsix],
      {
        cwd: join(REPO_ROOT, 'test', 'e2e', 'fixture'),
        encoding: 'utf8',
      },
    );
    assert.equal(r.status, 0, r.stderr + r.stdout);
    cs = await startCodeServer({ vsix: [vsix] });
    wb = await openWorkbench(cs.url);
    await waitForStatus(wb.page, /Kimi: stopped/, { timeoutMs: 30_000 });
  });

  after(async () => {
    await wb?.close();
    await cs?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    console.log(`screenshots: ${resultsDir()}`);
  });

  it('restart: modal Restart -> loading NN% rising -> ready, notification, Show log -> Output', async () => {
    const page = wb.page;
    await resetRecorders(page);
    await runCommand(page, 'Kimi Fixture: Restart Kimi service');
    const dlg = await waitForDialog(page, { text: /Restart/ });
    assert.ok(dlg.buttons.includes('Restart'), JSON.stringify(dlg));
    await screenshot(page, 'selftest-confirm');
    await clickDialogButton(page, 'Restart');
    const hist = await waitForStatus(page, /Kimi: ready/, { timeoutMs: 30_000, failOn: /failed/ });
    console.log(formatStatusHistory(hist));
    const pcts = loadingPercentages(hist);
    assert.ok(pcts.length >= 5, `percentages ${pcts}`);
    assert.deepEqual(
      pcts,
      [...pcts].sort((a, b) => a - b),
    );
    assert.equal(await statusText(page), 'Kimi: ready');
    const dom = await page
      .locator(STATUS_ITEM_SELECTOR)
      .evaluate((el) => ({ id: el.id, aria: el.getAttribute('aria-label'), html: el.outerHTML.slice(0, 400) }));
    console.log(`    status item: ${JSON.stringify(dom)}`);
    assert.equal(dom.id, 'kimi-tools.kimi-service-fixture.kimi.status');
    const logs = cs.findLogFiles(/Kimi Service\.log$/);
    console.log(`    log channel file: ${logs}`);
    assert.equal(logs.length, 1);
    const names = await statusBarEntryNames(page);
    console.log(`    status bar context menu: ${JSON.stringify(names)}`);
    assert.ok(
      names.some((n) => /Kimi service/.test(n)),
      JSON.stringify(names),
    );
    assert.match(await statusTooltip(page), /ready/);
    const note = await waitForNotification(page, /ready/);
    assert.deepEqual(note.buttons, ['Show log']);
    await screenshot(page, 'selftest-ready');
    await waitForNotification(page, /Parsers verified/);
    await clickNotificationButton(page, /is ready/, 'Show log');
    const text = await readOutputPanel(page, { channel: 'Kimi Service' });
    console.log(`channel: ${await outputChannelShown(page)}\n${text}`);
    assert.match(text, /state -> loading 50%/);
    assert.match(text, /state -> ready/);
    assert.match(text, /parsers/);
    await screenshot(page, 'selftest-log');
  });

  it('crash: failed + error notification', async () => {
    const page = wb.page;
    await resetRecorders(page);
    await runCommand(page, 'Kimi Fixture: Crash during load');
    await waitForStatus(page, /Kimi: failed/, { timeoutMs: 30_000 });
    const note = await waitForNotification(page, /failed/, { severity: 'error' });
    assert.match(note.text, /status 1/);
    await screenshot(page, 'selftest-failed');
  });

  it('trust dialog shows the SHA256 fingerprint; Trust continues', async () => {
    const page = wb.page;
    await resetRecorders(page);
    await runCommand(page, 'Kimi Fixture: Connect to unknown host');
    const dlg = await waitForDialog(page, { text: /SHA256:/ });
    assert.match(dlg.detail, /SHA256:[A-Za-z0-9+/]{43}/);
    await screenshot(page, 'selftest-trust');
    await clickDialogButton(page, 'Trust');
    await waitForStatus(page, /Kimi: ready/, { timeoutMs: 10_000 });
  });
});
