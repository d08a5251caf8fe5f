// npm run pictures: the README's pictures, taken from a real run of the e2e harness (a simulated
// GPU host, code-server with the packaged VSIX, headless Chromium) and cropped to what each one
// shows, at twice the CSS pixels:
//   status-bar-loading.png   the status item and its tooltip during a load (phases, percentage, time left)
//   load-dashboard.png       the dashboard's progress, phases and read-rate chart during that load
//   ready-notification.png   the ready notification with where the load's time went
//   chat-model-picker.png    the verified server among the editor's language models
//   servers-view.png         the servers view with three servers in three states
//   restart-confirm.png      the restart confirmation
//   crash-failed.png         a crash mid-load: the status item and the error notification with the cause
// Options: --out DIR (default docs/images), --scale N (device pixels per CSS pixel, default 2).
// Each picture that cannot be taken is said at the end (exit status 1); the others are written.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { REPO_ROOT } from '../test/e2e/codeServer';
import { freePort } from '../test/util/freePort';
import { kimiSettings, simForLoad, startScenario, unitWithParsers, type Scenario } from '../test/e2e/scenario';
import { serverEntry } from '../test/integration/simHost';
import {
  clickDialogButton,
  cropScreenshot,
  dashboardFrame,
  expandNotification,
  hoverStatusTooltip,
  notificationItem,
  paletteRows,
  resetRecorders,
  runCommand,
  statusHover,
  statusItem,
  waitForDialog,
  waitForNotification,
  waitForRows,
  waitForStatus,
  widenSideBar,
} from '../test/e2e/workbench';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const OUT = arg('out') ?? join(REPO_ROOT, 'docs', 'images');
const SCALE = Number(arg('scale') ?? 2);
const say = (s: string) => console.log(`[pictures] ${s}`);

/** The picture load: long enough to open the tooltip and the dashboard while it runs, with every phase. */
const PICTURE_LOAD = { ...simForLoad(40), kvSeconds: 3, cudaGraphSeconds: 3, warmupSeconds: 2 };
/** The load before it, so that the picture load has a previous one to be compared with. */
const FIRST_LOAD = { ...simForLoad(12), kvSeconds: 2, cudaGraphSeconds: 2, warmupSeconds: 1 };

/**
 * Whether the read-rate chart has a line on it (some seconds of the load drawn). A string: the
 * webview's policy forbids eval, and tsx would wrap a function in a helper the page lacks.
 */
const RATE_CHART_DRAWN = `(() => {
  const c = document.querySelector('#rate canvas');
  if (!c || !c.width) return false;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let drawn = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) drawn++;
  return drawn > 2000;
})()`;

const failures: string[] = [];
const written: string[] = [];

/** Runs one picture's steps; a failure is said and the next picture is taken all the same. */
async function picture(name: string, take: (file: string) => Promise<unknown>): Promise<void> {
  const file = join(OUT, name);
  try {
    await take(file);
    written.push(file);
    say(`${name}: ${(statSync(file).size / 1024).toFixed(0)} KB`);
  } catch (e) {
    failures.push(`${name}: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
    say(`${name} FAILED: ${e}`);
  }
}

/** The first of `candidates` that is on screen (the same view is drawn differently across VS Code versions). */
async function firstVisible(candidates: Locator[]): Promise<Locator> {
  for (const c of candidates) if (await c.first().isVisible()) return c.first();
  throw new Error(`none on screen: ${candidates.join(', ')}`);
}

/** Restarts the active server; the status texts recorded start afresh, with the present one. */
async function restart(page: Page): Promise<void> {
  await resetRecorders(page);
  await runCommand(page, 'Restart Kimi service');
}

async function main(): Promise<void> {
  say(`writing into ${OUT} at scale ${SCALE}`);
  const base = (s: Scenario, extra: Record<string, unknown>) =>
    kimiSettings(s.host, s.knownHostsFile, 'strict', { ...looks, ...extra });
  const looks = {
    // VS Code's default theme (code-server starts light)
    'workbench.colorTheme': 'Default Dark Modern',
    'chat.disableAIFeatures': false,
    'kimiService.activeServer': 'gpu1',
  };
  const s = await startScenario({
    name: 'pictures',
    gpuHost: { sim: FIRST_LOAD },
    unitText: (h) => unitWithParsers(h),
    hostKeyPolicy: 'strict',
    knownHost: true,
    deviceScaleFactor: SCALE,
    settings: (host) => ({
      ...looks,
      'kimiService.servers': [serverEntry(host, 'gpu1')],
      'kimiService.confirmRestart': false,
    }),
  });
  const page = s.page;
  try {
    await waitForStatus(page, /^Kimi: /, { timeoutMs: 60_000 });
    say('first load (the one the picture load is compared with)');
    await restart(page);
    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000, failOn: /failed|unreachable/ });
    await waitForNotification(page, /parsers verified/, { timeoutMs: 60_000 });

    say('picture load');
    await runCommand(page, 'View: Close Primary Side Bar').catch(() => undefined);
    await s.host.configureSimulator(PICTURE_LOAD);
    await restart(page);
    await waitForStatus(page, /Kimi: loading ([3-9]\d)%/, { timeoutMs: 90_000, failOn: /failed|unreachable/ });
    await picture('status-bar-loading.png', async (file) => {
      const text = await hoverStatusTooltip(page, /left|%/);
      if (!text) throw new Error('the tooltip did not open');
      // The hover fades in.
      await cropScreenshot(page, [statusItem(page), statusHover(page, /left|%/)], file, { settleMs: 1500 });
      await page.mouse.move(700, 300);
    });

    await picture('load-dashboard.png', async (file) => {
      await runCommand(page, 'Show load dashboard');
      const frame = await dashboardFrame(page);
      // A chart with a line on it: some seconds of the load drawn.
      const deadline = Date.now() + 30_000;
      while (!(await frame.evaluate(RATE_CHART_DRAWN))) {
        if (Date.now() > deadline) throw new Error('the read-rate chart was never drawn');
        await page.waitForTimeout(250);
      }
      await page.waitForTimeout(3000);
      await cropScreenshot(
        page,
        [frame.locator('header'), frame.locator('section', { has: frame.locator('#rate') })],
        file,
        {
          margin: 4,
        },
      );
    });

    await waitForStatus(page, /^Kimi: ready/, { timeoutMs: 120_000, failOn: /failed|unreachable/ });
    await picture('ready-notification.png', async (file) => {
      const re = /is ready \(loaded in/;
      await waitForNotification(page, re, { timeoutMs: 30_000, severity: 'info' });
      const item = await notificationItem(page, re);
      await expandNotification(item);
      await cropScreenshot(page, [item], file, { margin: 6 });
    });

    await picture('chat-model-picker.png', async (file) => {
      await waitForNotification(page, /parsers verified/, { timeoutMs: 60_000 });
      const rows = await paletteRows(page, 'Chat: Manage Language Models', {
        until: (r) => r.startsWith('Chat: Manage Language Models'),
        timeoutMs: 10_000,
      });
      if (!rows.some((r) => r.startsWith('Chat: Manage Language Models')))
        throw new Error('this VS Code has no "Chat: Manage Language Models"');
      await runCommand(page, 'Chat: Manage Language Models');
      const name = page.getByText('Kimi K2.6 on gpu1').first();
      await name.waitFor({ state: 'visible', timeout: 30_000 });
      // The columns that say something (name, context size, capabilities), not the empty rest of the table.
      const header = (text: string) => firstVisible([page.getByText(text, { exact: true })]);
      await cropScreenshot(page, [await header('Name'), await header('Capabilities'), name], file, { margin: 20 });
      await page.keyboard.press('Escape');
      await runCommand(page, 'View: Close All Editors').catch(() => undefined);
    });

    await picture('servers-view.png', async (file) => {
      // Two more servers beside the ready one: a unit the host does not have, and a host that refuses the connection.
      const closed = await freePort();
      s.cs.writeSettings(
        base(s, {
          'kimiService.servers': [
            serverEntry(s.host, 'gpu1'),
            { ...serverEntry(s.host, 'gpu2'), unit: 'sglang-missing' },
            { ...serverEntry(s.host, 'gpu3'), host: '127.0.0.1', port: closed },
          ],
          'kimiService.confirmRestart': false,
        }),
      );
      await runCommand(page, 'Kimi Service: Focus on Kimi Servers View');
      await widenSideBar(page, 260);
      let rows = await waitForRows(
        page,
        (r) => r.some((x) => /^gpu1 \(active\) ready/.test(x)) && r.some((x) => /^gpu2 failed/.test(x)),
        60_000,
      );
      // The refused connection takes its retries before it is called unreachable.
      rows = await waitForRows(page, (r) => r.some((x) => /^gpu3 unreachable/.test(x)), 30_000).catch(() => rows);
      say(`rows: ${JSON.stringify(rows)}`);
      const list = page.locator('.part.sidebar .monaco-list-row');
      await cropScreenshot(page, [page.locator('.part.sidebar .composite.title'), list.first(), list.last()], file, {
        margin: 2,
      });
    });

    // Back to one server, asking before a restart, and a simulator that dies in the weights.
    s.cs.writeSettings(
      base(s, { 'kimiService.servers': [serverEntry(s.host, 'gpu1')], 'kimiService.confirmRestart': true }),
    );
    await waitForStatus(page, /^Kimi: ready$/, { timeoutMs: 30_000 });
    await runCommand(page, 'View: Close Primary Side Bar').catch(() => undefined);
    await s.host.configureSimulator({ ...simForLoad(15), fault: { crashAt: 'weights', afterShards: 5 } });
    await restart(page);
    await picture('restart-confirm.png', async (file) => {
      await waitForDialog(page, { text: /restart/i });
      await cropScreenshot(page, [page.locator('.monaco-dialog-box')], file, { margin: 0 });
    });
    await clickDialogButton(page, 'Restart');
    await picture('crash-failed.png', async (file) => {
      await waitForStatus(page, /^Kimi: failed/, { timeoutMs: 120_000, failOn: /unreachable/ });
      const re = /failed/;
      await waitForNotification(page, re, { timeoutMs: 30_000, severity: 'error' });
      const item = await notificationItem(page, re);
      await expandNotification(item);
      await cropScreenshot(page, [statusItem(page), item], file, { margin: 6 });
    });
  } finally {
    await s.stop();
  }
  const total = written.reduce((n, f) => n + statSync(f).size, 0);
  say(`${written.length} pictures, ${(total / 1024).toFixed(0)} KB in all`);
  if (failures.length) {
    say(`not taken:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
