// The extension at home in the editor, with no server configured: the first-run walkthrough opens
// by itself, the servers view's welcome text leads to it, and the MCP server the extension
// registers with VS Code (no configuration file) starts from "MCP: List Servers" and offers its
// five tools.
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startCodeServer, type CodeServer } from './codeServer';
import { packageExtension, printResultsDir } from './scenario';
import { openWorkbench, readOutputPanel, runCommand, screenshot, type Workbench } from './workbench';

after(printResultsDir);

const QUICK_ROWS = '.quick-input-widget .quick-input-list .monaco-list-row:visible';

async function quickRows(page: Page): Promise<string[]> {
  return page
    .locator(QUICK_ROWS)
    .evaluateAll((els) => els.map((e) => (e.getAttribute('aria-label') ?? (e as HTMLElement).innerText).trim()));
}

/**
 * Picks the quick-pick row containing `text` as a person with a keyboard does: types it into the
 * filter and presses Enter once the first row is that one (a hover over a row can take the mouse's
 * clicks, as in VS Code 1.104).
 */
async function pickRow(page: Page, text: string, timeoutMs = 20_000): Promise<string> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(text);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await quickRows(page);
    if (rows[0]?.includes(text)) {
      await page.keyboard.press('Enter');
      return rows[0];
    }
    if (Date.now() > deadline) throw new Error(`no row "${text}" in the quick pick: ${JSON.stringify(rows)}`);
    await page.waitForTimeout(250);
  }
}

describe('e2e: first run, the walkthrough and the registered MCP server', function () {
  let cs: CodeServer | undefined;
  let wb: Workbench | undefined;

  before(async () => {
    cs = await startCodeServer({
      vsix: [packageExtension()],
      // A first start as a new user has it: no server yet, and the start-up editor not switched
      // off (the suite's quiet settings switch it off), but no README to open either.
      settings: { 'kimiService.servers': [], 'workbench.startupEditor': 'readme', 'chat.disableAIFeatures': false },
    });
    wb = await openWorkbench(cs.url);
  });

  after(async () => {
    await wb?.close();
    await cs?.stop();
  });

  it('the walkthrough opens by itself on the first start, and the servers view leads to it', async () => {
    const page = wb!.page;
    // The Welcome editor shows the walkthrough's steps (not only its name in the list of walkthroughs).
    const steps = ['Add a server', 'Restart and watch the load', 'See the parsers verified', 'Use the model in chat'];
    const editor = page.locator('.part.editor');
    let text = '';
    for (const end = Date.now() + 60_000; Date.now() < end; await page.waitForTimeout(500)) {
      text = await editor.innerText().catch(() => '');
      if (steps.every((step) => text.includes(step))) break;
    }
    for (const step of steps) assert.ok(text.includes(step), `step "${step}" in ${text}`);
    assert.match(text, /Get started with Kimi Service/);
    await page.waitForTimeout(1000);
    await screenshot(page, 'first-run-walkthrough');

    await runCommand(page, 'Kimi Service: Focus on Kimi Servers View');
    const welcome = page.locator('.welcome-view-content').filter({ hasText: 'No Kimi server is configured' }).first();
    await welcome.waitFor({ state: 'visible', timeout: 30_000 });
    const links = await welcome.locator('a, .monaco-button').allInnerTexts();
    assert.ok(
      links.some((l) => /Get started/.test(l)),
      `a "Get started" link: ${JSON.stringify(links)}`,
    );
    assert.ok(
      links.some((l) => /Add server/.test(l)),
      `an "Add server" button: ${JSON.stringify(links)}`,
    );
    await screenshot(page, 'first-run-servers-view');
  });

  it('"MCP: List Servers" shows Kimi Service; started, it discovers the five kimi tools', async () => {
    const page = wb!.page;
    await runCommand(page, 'MCP: List Servers');
    const row = await pickRow(page, 'Kimi Service');
    console.log(`    MCP server row: ${row}`);
    const action = await pickRow(page, 'Start Server').catch(async () => pickRow(page, 'Restart Server'));
    console.log(`    action: ${action}`);
    // Running, from the list again; then its output.
    const deadline = Date.now() + 60_000;
    let rows: string[] = [];
    for (;;) {
      await runCommand(page, 'MCP: List Servers');
      await page.locator(QUICK_ROWS).first().waitFor({ state: 'visible', timeout: 10_000 });
      rows = await quickRows(page);
      if (rows.some((r) => /Kimi Service.*Running/.test(r)) || Date.now() > deadline) break;
      await page.keyboard.press('Escape');
      await page.waitForTimeout(1000);
    }
    assert.ok(
      rows.some((r) => /Kimi Service.*Running/.test(r)),
      JSON.stringify(rows),
    );
    await screenshot(page, 'mcp-list-servers');
    await pickRow(page, 'Kimi Service');
    await pickRow(page, 'Show Output');
    let output = '';
    for (const end = Date.now() + 30_000; Date.now() < end && !/Discovered \d+ tools/.test(output); ) {
      output = await readOutputPanel(page);
      if (!/Discovered \d+ tools/.test(output)) await page.waitForTimeout(1000);
    }
    console.log(output.replace(/^/gm, '      '));
    assert.match(output, /Discovered 5 tools/);
    assert.match(output, /Kimi Service MCP server \S+ ready/);
    await screenshot(page, 'mcp-output');
  });
});
