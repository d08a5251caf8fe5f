// The extension at home in the editor, with no server configured: the first-run walkthrough opens
// by itself, the servers view's welcome text leads to it, and VS Code's agent gets one set of
// kimi tools: the language-model tools (listed by the extension-host suite, lmTools.desktop.test.ts),
// no MCP server of the extension in "MCP: List Servers" (docs/agents.md says why).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startCodeServer, type CodeServer } from './codeServer';
import { packageExtension, printResultsDir } from './scenario';
import { openWorkbench, runCommand, screenshot, type Workbench } from './workbench';
import { waitFor } from '../util/waitFor';

after(printResultsDir);

const QUICK_ROWS = '.quick-input-widget .quick-input-list .monaco-list-row:visible';

async function quickRows(page: Page): Promise<string[]> {
  return page
    .locator(QUICK_ROWS)
    .evaluateAll((els) => els.map((e) => (e.getAttribute('aria-label') ?? (e as HTMLElement).innerText).trim()));
}

describe('e2e: first run, the walkthrough, and one set of agent tools', function () {
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
    await waitFor(
      async () => {
        text = await editor.innerText().catch(() => '');
        return steps.every((step) => text.includes(step));
      },
      { timeoutMs: 60_000, intervalMs: 500, message: 'the walkthrough steps in the editor' },
    ).catch(() => undefined);
    for (const step of steps) assert.ok(text.includes(step), `step "${step}" in ${text}`);
    assert.match(text, /Get started with Kimi Service/);
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

  it('one set of agent tools: "MCP: List Servers" has no Kimi Service (the agent gets the language-model tools)', async () => {
    const page = wb!.page;
    await runCommand(page, 'MCP: List Servers');
    // The list is drawn once its own "Add Server" row is there; a registered Kimi server would be listed with it.
    let rows: string[] = [];
    await waitFor(
      async () => {
        rows = await quickRows(page);
        return rows.some((r) => /^Add Server/.test(r));
      },
      { timeoutMs: 30_000, intervalMs: 500, message: 'the MCP server list drawn' },
    ).catch(() => undefined);
    console.log(`    MCP: List Servers: ${JSON.stringify(rows)}`);
    assert.ok(
      rows.some((r) => /^Add Server/.test(r)),
      `the MCP server list was drawn: ${JSON.stringify(rows)}`,
    );
    assert.ok(!rows.some((r) => /Kimi/i.test(r)), `no Kimi MCP server registered: ${JSON.stringify(rows)}`);
    await screenshot(page, 'mcp-list-servers-without-kimi');
    await page.keyboard.press('Escape');
  });
});
