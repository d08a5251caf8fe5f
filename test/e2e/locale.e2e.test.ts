// In VS Code's display language: with code-server started in Simplified Chinese (--locale zh-cn),
// the extension's commands and its servers view read in Chinese (package.nls.zh-cn.json in the
// VSIX). Needs no GPU host.
import assert from 'node:assert/strict';
import { startCodeServer, type CodeServer } from './codeServer';
import { packageExtension, printResultsDir } from './scenario';
import { openWorkbench, paletteRows, screenshot, type Workbench } from './workbench';
import { manifestTexts } from '../util/manifest';

after(printResultsDir);

describe('e2e: the extension in Simplified Chinese', function () {
  this.timeout(300_000);
  let cs: CodeServer | undefined;
  let wb: Workbench | undefined;
  const zh = manifestTexts('zh-cn');

  before(async () => {
    cs = await startCodeServer({ vsix: [packageExtension()], locale: 'zh-cn' });
    wb = await openWorkbench(cs.url);
  });
  after(async () => {
    await wb?.close();
    await cs?.stop();
  });

  it('the palette lists the commands by their Chinese titles', async () => {
    const page = wb!.page;
    for (const key of ['command.restartService.title', 'command.addServer.title', 'command.showLog.title']) {
      const title = `Kimi Service: ${zh[key]}`;
      const rows = await paletteRows(page, title, { until: (r) => r.startsWith(title) });
      assert.ok(
        rows.some((r) => r.startsWith(title)),
        `"${title}" not in the palette; rows: ${JSON.stringify(rows)}`,
      );
    }
    await page.keyboard.press('Escape');
  });

  it('the servers view welcomes in Chinese, with its Add server link', async () => {
    const page = wb!.page;
    await page.locator(`.activitybar [aria-label^="Kimi Service"]`).first().click();
    const welcome = page.locator('.welcome-view-content').filter({ hasText: '尚未配置 Kimi 服务器' });
    await welcome.first().waitFor({ state: 'visible', timeout: 60_000 });
    assert.ok(await welcome.locator('a', { hasText: zh['command.addServer.title']! }).count(), 'the Add server link');
    await screenshot(page, 'locale-zh-cn-servers-view');
  });
});
