// The packaged extension in code-server: its commands are in the palette under the titles of
// the user-facing contract. Needs no GPU host (runs first: the cheapest check that the VSIX loads).
import assert from 'node:assert/strict';
import { startCodeServer, type CodeServer } from './codeServer';
import { packageExtension, printResultsDir } from './scenario';
import { openWorkbench, paletteRows, screenshot, openPalette, type Workbench } from './workbench';

after(printResultsDir);

const TITLES = ['Restart Kimi service', 'Watch Kimi service until ready', 'Stop watching', 'Show log', 'Select server'];

describe('e2e: the packaged extension in code-server', () => {
  let cs: CodeServer | undefined;
  let wb: Workbench | undefined;

  before(async () => {
    const vsix = packageExtension();
    cs = await startCodeServer({ vsix: [vsix] });
    wb = await openWorkbench(cs.url);
  });

  after(async () => {
    await wb?.close();
    await cs?.stop();
  });

  it('the workbench opens and every Kimi command is in the palette', async () => {
    const page = wb!.page;
    await screenshot(page, 'palette-workbench');
    for (const title of TITLES) {
      const rows = await paletteRows(page, `Kimi Service: ${title}`, {
        until: (r) => r.startsWith(`Kimi Service: ${title}`),
      });
      assert.ok(
        rows.some((r) => r.startsWith(`Kimi Service: ${title}`)),
        `"Kimi Service: ${title}" not in the palette; rows: ${JSON.stringify(rows)}`,
      );
    }
    await openPalette(page, 'Kimi Service:');
    await page.waitForTimeout(500);
    await screenshot(page, 'palette-kimi-commands');
    await page.keyboard.press('Escape');
  });
});
