// The packaged extension in a workbench whose display language is Simplified Chinese (a language
// pack for zh-cn installed, `--locale zh-cn`): the palette's command, the confirmation, the status
// bar through a load, the ready notification and a failure's cause read in Chinese, from the VSIX's
// own bundles.
import assert from 'node:assert/strict';
import { waitFor } from '../util/waitFor';
import { FixtureExtension } from './fixtureExtension';
import { printResultsDir, simForLoad, useScenario } from './scenario';
import {
  clickDialogButton,
  formatStatusHistory,
  paletteRows,
  runCommand,
  screenshot,
  waitForDialog,
  waitForNotification,
  waitForStatus,
} from './workbench';

after(printResultsDir);

describe('e2e: the extension in Chinese (display language zh-cn)', function () {
  const languagePack = new FixtureExtension('language-pack-zh-cn', 'the zh-cn language pack');
  after(() => languagePack.remove());
  const scenario = useScenario({
    name: 'zh-cn',
    locale: 'zh-cn',
    extraVsix: () => [languagePack.packageVsix()],
    gpuHost: { sim: simForLoad(12) },
    hostKeyPolicy: 'strict',
  });

  it('the restart command, its confirmation, the load and ready are said in Chinese', async () => {
    const page = scenario().page;
    await waitForStatus(page, /^Kimi：/, { timeoutMs: 60_000 });
    const rows = await paletteRows(page, '重启 Kimi 服务', { until: (r) => r.includes('重启 Kimi 服务') });
    assert.ok(
      rows.some((r) => r.includes('重启 Kimi 服务')),
      `the command's Chinese title: ${JSON.stringify(rows)}`,
    );
    await page.keyboard.press('Escape');

    await runCommand(page, '重启 Kimi 服务');
    const confirm = await waitForDialog(page);
    assert.match(confirm.message, /^重启 .+ 上的 .+？$/, JSON.stringify(confirm));
    await clickDialogButton(page, '重启');

    await waitForStatus(page, /^Kimi：加载中 \d+%/, { timeoutMs: 90_000, failOn: /failed|失败/ });
    await screenshot(page, 'zh-cn-loading');
    const history = await waitForStatus(page, /^Kimi：就绪/, { timeoutMs: 180_000, failOn: /失败|无法访问/ });
    console.log(`    status bar texts:\n${formatStatusHistory(history)}`);
    assert.ok(
      history.every((h) => !/\b(loading|ready|failed)\b/.test(h.text)),
      `an English state word in the status bar: ${formatStatusHistory(history)}`,
    );
    const note = await waitForNotification(page, /上的 Kimi 已就绪/, { timeoutMs: 60_000 });
    await screenshot(page, 'zh-cn-ready');
    assert.match(note.text, /加载用时/, note.text);
    assert.ok(note.buttons.includes('显示日志'), `the buttons in Chinese: ${JSON.stringify(note.buttons)}`);
    assert.ok(
      note.buttons.every((b) => !/^[A-Za-z ]+$/.test(b)),
      `an English button: ${JSON.stringify(note.buttons)}`,
    );
  });

  it('the parser check after ready (this server has no parsers) is reported in Chinese', async () => {
    const page = scenario().page;
    const note = await waitForNotification(page, /sim 上的 Kimi：就绪，解析器检查失败：/, { timeoutMs: 120_000 });
    assert.doesNotMatch(note.text, /ready|check failed|skipped:/, note.text);
  });

  it('the settings editor shows the extension’s settings in Chinese', async () => {
    const page = scenario().page;
    await runCommand(page, 'Preferences: Open Settings (UI)');
    // The search box has the focus when the settings editor opens.
    await page.locator('.settings-editor').waitFor({ state: 'visible', timeout: 30_000 });
    await page.keyboard.type('kimiService.notifyWhenReady');
    // Its settings are machine-scoped: a remote window (code-server's) lists them under Remote.
    await page
      .locator('.settings-editor .settings-tabs-widget .action-label')
      .filter({ hasText: /^\s*Remote/ })
      .first()
      .click();
    const description = page.locator('.settings-editor .setting-item-description');
    const text = await waitFor(
      async () => {
        const texts = await description.allInnerTexts();
        return texts.find((t) => t.includes('加载完成'));
      },
      { timeoutMs: 30_000, message: 'the notifyWhenReady setting in the settings editor' },
    );
    await screenshot(page, 'zh-cn-settings');
    assert.equal(text.trim(), '加载完成时显示通知。');
  });

  it('the walkthrough shows its Chinese steps and pages', async () => {
    const page = scenario().page;
    await runCommand(page, 'Open Walkthrough...');
    await page
      .locator('.quick-input-widget .quick-input-list .monaco-list-row')
      .filter({ hasText: 'Kimi Service 入门' })
      .first()
      .click({ timeout: 30_000 });
    // The first step is open: its page (package.nls.zh-cn.json names media/walkthrough/zh-cn/) is
    // drawn in a webview, a frame of its own.
    const text = await waitFor(
      async () => {
        for (const frame of page.frames()) {
          const body = await frame
            .locator('body')
            .innerText({ timeout: 1000 })
            .catch(() => '');
          if (body.includes('一台服务器指一台 GPU 主机')) return body;
        }
        return undefined;
      },
      { timeoutMs: 60_000, message: "the first step's page in Chinese" },
    );
    assert.doesNotMatch(text, /A server is one GPU host/);
    const steps = await page.locator('.part.editor').innerText();
    for (const step of ['添加服务器', '重启并监视加载']) assert.ok(steps.includes(step), `step "${step}" in ${steps}`);
    await screenshot(page, 'zh-cn-walkthrough');
  });

  it('a run that crashes at once: the failure notification gives its cause in Chinese', async () => {
    const { page, host } = scenario();
    await host.configureSimulator({ fault: { crashAt: 'init' } });
    await runCommand(page, '重启 Kimi 服务');
    await waitForDialog(page);
    await clickDialogButton(page, '重启');
    const note = await waitForNotification(page, /上的 Kimi 失败：/, { timeoutMs: 120_000, severity: 'error' });
    await screenshot(page, 'zh-cn-failed');
    console.log(`    failure notification: ${JSON.stringify(note)}`);
    assert.match(note.text, /失败：服务(未能启动：它)?(以状态 \d+ 退出|被信号 \d+ 终止)/, note.text);
    assert.doesNotMatch(note.text, /the service|exited with|killed by|did not start/, note.text);
  });
});
